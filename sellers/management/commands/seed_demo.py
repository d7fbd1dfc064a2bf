"""Demo users for ``make run``: an admin, two sellers, and their counterparts in the sandbox.

Idempotent, and it seeds only what is missing: a user that exists keeps its password, its
role and its sessions (``make run`` runs this every time; resetting the passwords would
sign everyone out), a seller that exists keeps its name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from sellers.models import Seller

ADMIN = ("admin", "admin-demo-pass")
SELLERS = (
    ("seller", "seller-demo-pass", "Demo Seller"),
    ("seller2", "seller2-demo-pass", "Second Demo Seller"),
)
SANDBOX_SELLER = ("demo-seller", "demo-seller-pass")


class Command(BaseCommand):
    help = "Create demo users (admin, seller, seller2) and register the app with the sandbox."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--skip-sandbox", action="store_true", help="do not touch the sandbox database"
        )
        parser.add_argument(
            "--sandbox-db",
            default=os.environ.get("SANDBOX_DATABASE_URL", ""),
            help="sandbox database (SQLite path or URL); default: env SANDBOX_DATABASE_URL, "
            "else the sandbox's own default",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self._seed_users()
        if not options["skip_sandbox"]:
            self._seed_sandbox(options["sandbox_db"])
        self.stdout.write(
            self.style.SUCCESS(
                "Demo data ready (existing users kept as they were). "
                "Sign in at /sellers/login/ with:"
            )
            + f"\n  staff:   {ADMIN[0]} / {ADMIN[1]}"
            + "".join(f"\n  seller:  {u} / {p}  ({n})" for u, p, n in SELLERS)
            + "\n  at the platform sandbox, approve as: "
            + f"{SANDBOX_SELLER[0]} / {SANDBOX_SELLER[1]}"
            + "\n  Platform API user (staff: Dashboard → Catalog → Platform API access): "
            + "marketplace-api / marketplace-api-pass, code in the sandbox's outbox"
        )

    @transaction.atomic
    def _seed_users(self) -> None:
        users = get_user_model()
        admin, created = users.objects.get_or_create(
            username=ADMIN[0],
            defaults={"email": "admin@example.com", "is_staff": True, "is_superuser": True},
        )
        if created:
            admin.set_password(ADMIN[1])
            admin.save(update_fields=["password"])
        for username, password, name in SELLERS:
            user, created = users.objects.get_or_create(
                username=username, defaults={"email": f"{username}@example.com"}
            )
            if created:
                user.set_password(password)
                user.save(update_fields=["password"])
            Seller.objects.get_or_create(user=user, defaults={"display_name": name})

    def _seed_sandbox(self, sandbox_db: str) -> None:
        base = [sys.executable, "-m", "sandbox"] + (["--db", sandbox_db] if sandbox_db else [])
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        commands = [
            [
                "register-client",
                "--client-id", settings.PLATFORM_CLIENT_ID,
                "--client-secret", settings.PLATFORM_CLIENT_SECRET,
                "--redirect-url", settings.PLATFORM_REDIRECT_URL,
                "--name", "Demo Marketplace",
            ],
            [
                "create-seller",
                "--username", SANDBOX_SELLER[0],
                "--password", SANDBOX_SELLER[1],
                "--name", "Demo Seller",
            ],
            # The Platform API's demo data (issue 12): the API user marketplace-api and one
            # account + catalog database per demo seller, named like the sellers here.
            ["seed-demo"],
        ]  # fmt: skip
        for command in commands:
            done = subprocess.run(
                base + command,
                cwd=settings.BASE_DIR,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            if done.returncode != 0:
                # The client secret is an argument, never part of what we print.
                raise CommandError(
                    f"sandbox {command[0]} failed (exit {done.returncode}): "
                    f"{done.stderr.strip()[-500:]}"
                )
            self.stdout.write(done.stdout.strip())
