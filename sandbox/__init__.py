"""Platform sandbox: a stand-in for the platform's OAuth server and order interface.

Runs as its own Django project (``sandbox.settings``) in its own process with its own
database. The marketplace app never imports this package.
"""
