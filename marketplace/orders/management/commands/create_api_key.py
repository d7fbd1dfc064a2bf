"""``manage.py create_api_key --name X``: create an intake API key and print it once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from marketplace.orders.models import ApiKey
from marketplace.orders.services.api_keys import api_key_create


class Command(BaseCommand):
    help = "Create an API key for the order intake API. The key is printed once, never stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="who uses the key (unique)")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"].strip()
        if not name:
            raise CommandError("--name must not be empty")
        if ApiKey.objects.filter(name=name).exists():
            raise CommandError(f"an API key named {name!r} exists already")
        _, raw_key = api_key_create(name=name)
        self.stderr.write(f"API key {name!r} created. It is shown once; store it now.")
        self.stdout.write(raw_key)
