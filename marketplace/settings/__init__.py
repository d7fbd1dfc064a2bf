"""Settings for the marketplace app, read from the environment (``DJANGO_SETTINGS_MODULE``
stays ``marketplace.settings``: this module composes the parts, in this order).

``DJANGO_ENV`` selects the profile:

* ``development`` (default): embedded everything (SQLite file, filesystem Celery
  broker), the local platform sandbox, and clearly-marked development secrets.
* ``production``: no secret has a default; a missing one stops the process at start
  with a message naming every missing variable.

The parts: ``base`` (environment, apps, middleware, database, templates, static),
``security`` (secrets, hosts, cookies, CSP, sign-in throttling, production checks),
``tuning`` (the numbers that shape the sync's pace), ``celery`` (broker, queues,
routes, beat) and ``logging``. Importing them has no side effect: the local folders
(SQLite file, embedded broker, beat's schedule) are created at process start
(``marketplace.apps``). The one exception is here: ``django_stubs_ext.monkeypatch()``
lets Django's generic classes take their type parameters at run time too
(``admin.ModelAdmin[Order]``, as mypy's strict mode wants them written).

Every variable is listed in the README's configuration table; the docker-compose
test checks that compose only sets variables read here (see ``base.ENV_VARS``).
``_DEV_SECRETS`` and ``_REQUIRED_IN_PRODUCTION`` are imported by name: a star import
skips their leading underscore, and Django reads them as settings all the same.
"""

import django_stubs_ext

from marketplace.settings.base import *  # noqa: F403
from marketplace.settings.celery import *  # noqa: F403
from marketplace.settings.logging import *  # noqa: F403
from marketplace.settings.security import *  # noqa: F403
from marketplace.settings.security import _DEV_SECRETS, _REQUIRED_IN_PRODUCTION  # noqa: F401
from marketplace.settings.tuning import *  # noqa: F403

django_stubs_ext.monkeypatch()
