"""Metrics for operators: ``/metrics`` in Prometheus's text format, computed from the
database on each scrape (``readings``, ``collector``), behind a bearer token (``views``).
The alert rules and the Grafana dashboard that read them are in ``deploy/``."""
