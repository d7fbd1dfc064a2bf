"""Settings for benchmark processes (the bench itself, its Celery worker, pull children).

The app's settings, with what a measurement must not carry: ``DEBUG`` off (Django would
keep every query in memory, which would both slow pushes and falsify the pull's memory
figure) and the per-seller listing budget lifted so the pull benchmark measures our code,
not the platform's recommended 2 listings/s.
"""

from marketplace.settings import *  # noqa: F403

DEBUG = False
PLATFORM_LIST_RATE_PER_SECOND = 1000.0
LOGGING["root"]["level"] = "WARNING"  # noqa: F405
# The harness waits for the worker's "<name> ready." line (INFO): since workers log through
# LOGGING (marketplace/celery.py), Celery's --loglevel no longer lets it through.
LOGGING["loggers"]["celery.apps.worker"] = {"level": "INFO"}  # noqa: F405
