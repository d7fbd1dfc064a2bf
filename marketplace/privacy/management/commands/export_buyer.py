"""Everything held about one buyer, as JSON: ``manage.py export_buyer --email …``."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.core.serializers.json import DjangoJSONEncoder

from marketplace.privacy.export import buyer_export


class Command(BaseCommand):
    help = "Print every record held about a buyer (by e-mail) as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True)

    def handle(self, *args: Any, email: str, **options: Any) -> None:
        data = buyer_export(email=email)
        self.stdout.write(json.dumps(data, cls=DjangoJSONEncoder, indent=2, ensure_ascii=False))
