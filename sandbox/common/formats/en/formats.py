"""The sandbox's pages write times as ISO 8601 in UTC (``2026-11-24T00:35:12Z``), like its
JSON and its state page, never Django's English default ("Nov. 24, 2026, 12:35 a.m.").
``FORMAT_MODULE_PATH`` in sandbox/settings.py points here; the time zone is UTC."""

DATETIME_FORMAT = r"Y-m-d\TH:i:s\Z"
SHORT_DATETIME_FORMAT = r"Y-m-d\TH:i:s\Z"
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
TIME_FORMAT = "H:i:s"
