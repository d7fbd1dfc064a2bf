"""The Content API: a database's product rows, raw or transformed, read back by id."""
