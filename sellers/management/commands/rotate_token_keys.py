"""Re-encrypt every stored token with the first key of TOKEN_ENCRYPTION_KEYS.

Rotation: prepend the new key (``NEW,OLD``), deploy, run this command, then remove OLD.
Safe to run again: tokens already under the first key are left alone.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sellers.services import token_keys_rotate


class Command(BaseCommand):
    help = "Re-encrypt stored platform tokens with the first key of TOKEN_ENCRYPTION_KEYS."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=500)

    def handle(self, *args: Any, **options: Any) -> None:
        def progress(done: int, total: int) -> None:
            self.stdout.write(f"  {done}/{total} connections checked")

        changed = token_keys_rotate(batch_size=options["batch_size"], progress=progress)
        self.stdout.write(self.style.SUCCESS(f"Re-encrypted {changed} connection(s)."))
