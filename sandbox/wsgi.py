"""WSGI entry point used by ``python -m sandbox serve`` (gunicorn, gthread, one worker)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ["DJANGO_SETTINGS_MODULE"] = "sandbox.settings"

application = get_wsgi_application()

from sandbox.edrts.worker import worker_start as edrts_worker_start  # noqa: E402
from sandbox.orders_v2.by_hand import auto_ship_start  # noqa: E402
from sandbox.orders_v2.imports import import_thread_start  # noqa: E402
from sandbox.platform_api.ticker import ticker_start  # noqa: E402

auto_ship_start()
import_thread_start()
ticker_start()  # exports and imports
edrts_worker_start()  # EDRTS batches
