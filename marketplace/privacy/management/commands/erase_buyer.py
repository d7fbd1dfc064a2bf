"""Erase one buyer everywhere at once: ``manage.py erase_buyer --email …``."""

from __future__ import annotations

import getpass
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email

from marketplace.privacy.erasure import buyer_erase, buyer_erasure_preview, erasure_summary


def _os_user() -> str:
    try:
        return getpass.getuser()
    except OSError:  # a container user with no name
        return "unknown user"


class Command(BaseCommand):
    help = (
        "Erase a buyer's personal data (orders, returns, call log) by e-mail; open orders "
        "are erased as soon as they close. Records who, when and how many, not the e-mail."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True)
        parser.add_argument(
            "--dry-run", action="store_true", help="only say how many records match"
        )
        parser.add_argument(
            "--by", default="", help="who asked (recorded); default: the operating system user"
        )

    def handle(self, *args: Any, email: str, dry_run: bool, by: str, **options: Any) -> None:
        try:
            validate_email(email.strip())
        except ValidationError as exc:
            raise CommandError("--email is not an e-mail address") from exc
        preview = buyer_erasure_preview(email=email)
        self.stdout.write(
            f"Matching: {preview.orders} order(s) ({preview.orders_closed} closed, "
            f"{preview.orders_open} open), {preview.returns} return(s)."
        )
        if dry_run:
            return
        erasure = buyer_erase(email=email, requested_by=by or f"manage.py ({_os_user()})")
        self.stdout.write(self.style.SUCCESS(erasure_summary(erasure)))
