"""Re-encrypt every ciphertext the app holds with the first key of TOKEN_ENCRYPTION_KEYS.

Rotation: prepend the new key (``NEW,OLD``), deploy, run this command, then remove OLD.
Safe to run again: ciphertext already under the first key is left alone. Every model
field of the vault's type is covered (``sellers.vault.encrypted_fields``): the sellers'
platform connections and the catalog's API token today. Prints the counts per field; a
row no configured key decrypts is reported and moved to a state staff and sellers see
("needs re-authorization", "needs sign-in"). Exits 1 when there was one.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sellers.key_rotation import rotate


class Command(BaseCommand):
    help = "Re-encrypt every stored ciphertext with the first key of TOKEN_ENCRYPTION_KEYS."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=500)

    def handle(self, *args: Any, **options: Any) -> None:
        def progress(label: str, done: int, total: int) -> None:
            self.stdout.write(f"  {label}: {done}/{total} rows checked")

        report = rotate(batch_size=options["batch_size"], progress=progress)
        for label, counts in report.fields.items():
            self.stdout.write(
                f"{label}: {counts.checked} held, {counts.reencrypted} re-encrypted, "
                f"{counts.current} already current, {counts.undecryptable} undecryptable"
            )
        self.stdout.write(self.style.SUCCESS(f"Re-encrypted {report.reencrypted} ciphertext(s)."))
        if report.undecryptable:
            raise CommandError(
                f"{report.undecryptable} ciphertext(s) could not be decrypted with any "
                "configured key: those sellers must reconnect (e-mailed) and staff sign in "
                "again on the Platform API access page."
            )
