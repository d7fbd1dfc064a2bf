"""``manage.py create_api_key --name X``: create an intake API key and print it once.

The key alone goes to stdout (so ``KEY=$(manage.py create_api_key --name X --quiet)``
captures it), the notice to stderr; ``--quiet`` drops the notice, ``--replace`` revokes
the key of that name first (a second run of the README's commands)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from marketplace.orders.models import ApiKey
from marketplace.orders.services.api_keys import api_key_create


class Command(BaseCommand):
    help = "Create an API key for the order intake API. The key is printed once, never stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="who uses the key (unique)")
        parser.add_argument(
            "--quiet", action="store_true", help="print the key only, no notice on stderr"
        )
        parser.add_argument(
            "--replace",
            action="store_true",
            help="if a key of that name exists, delete it (it stops working) and create a new one",
        )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"].strip()
        if not name:
            raise CommandError("--name must not be empty")
        existing = ApiKey.objects.filter(name=name)
        if existing.exists():
            if not options["replace"]:
                raise CommandError(
                    f"an API key named {name!r} exists already "
                    "(--replace revokes it and creates a new one)"
                )
            existing.delete()
        _, raw_key = api_key_create(name=name)
        if not options["quiet"]:
            self.stderr.write(f"API key {name!r} created. It is shown once; store it now.")
        self.stdout.write(raw_key)
