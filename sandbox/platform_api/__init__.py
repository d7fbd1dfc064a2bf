"""The Platform API under /api.php: databases (``catalog``), exports, imports, and their
pages (``pages``). The API token behind a request, the accounts and databases are records
(``records.api_users``, ``records.databases``)."""
