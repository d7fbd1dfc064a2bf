"""The catalog feed: which platform database a seller's catalog comes from
(``database_link``), the export set up there (``provision``), the door the platform
delivers files to (``views``, ``receive``), reading a file (``parse``), applying it set-based
(``ingest``, ``staging``: COPY into a staging table, one merge), and how long files are
kept (``retention``)."""
