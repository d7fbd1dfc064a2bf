"""Rotating the vault's keys over every ciphertext the app holds.

``rotate(...)`` walks every model field of the vault's type (``vault.encrypted_fields``,
found by introspection: a field added later is rotated without a change here) in
batches of rows, each row under its lock (a concurrent refresh is never overwritten with
older tokens), and re-encrypts what is not under the first key yet. A row whose
ciphertext no configured key decrypts (a key lost) is left to its app: the
``ciphertext_lost`` signal names the rows, and each app's receiver moves them to a state
a person sees (a seller's connection to "needs re-authorization", the catalog's API access
to "needs sign-in"). ``ciphertext_rotated`` names the rows re-encrypted (the sellers app
records a connection event). Idempotent: a second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import models, transaction
from django.dispatch import receiver
from django.views.decorators.debug import sensitive_variables

from sellers import services, vault
from sellers.models import ConnectionEvent, PlatformConnection
from sellers.signals import ciphertext_lost, ciphertext_rotated


@dataclass
class FieldCounts:
    checked: int = 0  # rows holding ciphertext in the field
    reencrypted: int = 0
    current: int = 0  # already under the first key
    undecryptable: int = 0


@dataclass
class RotationReport:
    # "app_label.Model.field" -> its counts, for every encrypted field of the project.
    fields: dict[str, FieldCounts] = field(default_factory=dict)

    @property
    def reencrypted(self) -> int:
        return sum(counts.reencrypted for counts in self.fields.values())

    @property
    def undecryptable(self) -> int:
        return sum(counts.undecryptable for counts in self.fields.values())


def field_label(model: type[models.Model], name: str) -> str:
    return f"{model._meta.label}.{name}"


@sensitive_variables()
def rotate(
    *, batch_size: int = 500, progress: Callable[[str, int, int], None] | None = None
) -> RotationReport:
    """Re-encrypt every stored ciphertext with the first key of TOKEN_ENCRYPTION_KEYS;
    ``progress(model label, done, total)`` after each batch."""
    report = RotationReport()
    for model, names in vault.encrypted_fields().items():
        for name in names:
            report.fields[field_label(model, name)] = FieldCounts()
        _rotate_model(model, names, report, batch_size=batch_size, progress=progress)
    return report


def _rotate_model(
    model: type[models.Model],
    names: list[str],
    report: RotationReport,
    *,
    batch_size: int,
    progress: Callable[[str, int, int], None] | None,
) -> None:
    holding = models.Q()
    for name in names:
        holding |= ~models.Q(**{name: ""})
    base = model._default_manager.filter(holding).order_by("pk")
    total = base.count()
    done = 0
    last_pk: object = None
    while True:
        page = base if last_pk is None else base.filter(pk__gt=last_pk)
        pks = list(page.values_list("pk", flat=True)[:batch_size])
        if not pks:
            break
        rotated: list[object] = []
        lost: list[object] = []
        with transaction.atomic():
            for row in model._default_manager.select_for_update().filter(pk__in=pks):
                changed, dead = _rotate_row(row, names, report)
                if changed:
                    row.save(update_fields=changed)
                    rotated.append(row.pk)
                if dead:
                    lost.append(row.pk)
        # After the commit: a receiver takes its own locks and sends its own e-mail.
        if rotated:
            ciphertext_rotated.send(sender=model, pks=rotated)
        if lost:
            ciphertext_lost.send(sender=model, pks=lost)
        done += len(pks)
        last_pk = pks[-1]
        if progress is not None:
            progress(model._meta.label, done, total)


@sensitive_variables()
def _rotate_row(
    row: models.Model, names: list[str], report: RotationReport
) -> tuple[list[str], bool]:
    """Re-encrypt the row's fields; returns the fields changed and whether one is dead."""
    changed: list[str] = []
    dead = False
    for name in names:
        ciphertext = getattr(row, name)
        if not ciphertext:
            continue
        counts = report.fields[field_label(type(row), name)]
        counts.checked += 1
        if vault.token_is_current(ciphertext):
            counts.current += 1
        elif not vault.token_decryptable(ciphertext):
            counts.undecryptable += 1
            dead = True
        else:
            setattr(row, name, vault.token_reencrypt(ciphertext))
            counts.reencrypted += 1
            changed.append(name)
    return changed, dead


# --- the sellers app's own receivers ----------------------------------------------------------


@receiver(ciphertext_rotated, sender=PlatformConnection)
def _connections_rotated(sender: type[models.Model], pks: list[int], **kwargs: object) -> None:
    for seller_id in PlatformConnection.objects.filter(pk__in=pks).values_list(
        "seller_id", flat=True
    ):
        services.connection_event_record(
            seller_id=seller_id,
            kind=ConnectionEvent.Kind.KEY_ROTATED,
            detail="Stored tokens re-encrypted with the current key.",
        )


@receiver(ciphertext_lost, sender=PlatformConnection)
def _connections_lost(sender: type[models.Model], pks: list[int], **kwargs: object) -> None:
    for connection_id in pks:
        services.connection_key_lost(connection_id=connection_id)
