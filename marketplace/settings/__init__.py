"""Settings for the marketplace app (``DJANGO_SETTINGS_MODULE`` stays
``marketplace.settings``): the parts are composed here."""

from marketplace.settings.base import *  # noqa: F403
from marketplace.settings.base import _DEV_SECRETS, _REQUIRED_IN_PRODUCTION  # noqa: F401
