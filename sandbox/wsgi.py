"""WSGI entry point used by ``python -m sandbox serve`` (gunicorn, gthread, one worker)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ["DJANGO_SETTINGS_MODULE"] = "sandbox.settings"

application = get_wsgi_application()

from sandbox.simulated_seller import auto_ship_start  # noqa: E402

auto_ship_start()
