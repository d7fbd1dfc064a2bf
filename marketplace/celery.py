"""The Celery application. Configuration lives in settings (``CELERY_*``)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "marketplace.settings")


class MarketplaceCelery(Celery):
    # A method, not a receiver of the on_configure Signal (the stub knows only that): Celery
    # still calls the method form (app/base.py ``_load_config``), and lets its exception
    # stop the process; a Signal logs a receiver's exception and goes on.
    def on_configure(self) -> None:  # type: ignore[override]
        # Workers and beat run no Django system checks: when the configuration is first
        # read (at their start), production refuses development values as check does.
        from marketplace.config_checks import production_start_check

        production_start_check()


app = MarketplaceCelery("marketplace")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
