"""Imports of a database (issue 13): settings, delimiters, the file map with hex-encoded
source keys, schedules, and runs that fetch a file over HTTP and join it into the rows."""
