import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "marketplace.settings")

application = get_wsgi_application()

# gunicorn runs no system checks: refuse development values here too.
from marketplace.config_checks import production_start_check  # noqa: E402

production_start_check()
