"""The Platform API under /api.php: databases (``catalog``), exports, imports, and their
pages (``pages``). Uses ``auth_api`` for the API token behind a request."""
