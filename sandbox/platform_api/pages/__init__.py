"""The sandbox's HTML pages for the Authentication and Platform APIs: API users and tokens,
the outbox, databases and their rows, exports with their runs, logs and files."""
