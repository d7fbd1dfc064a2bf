"""Every ledger row gets ``payment_key`` (``payment_keys.py``), what the payments side pays
against; rows written before are given theirs here, from their refund or return.

The append-only triggers refuse any change but the paid-out mark, so they are removed
first and installed again last (SQLite's UPDATE trigger lists the ledger's columns, which
now include the key; SQLite also drops a table's triggers when it rebuilds it).
"""

from django.db import migrations, models

from marketplace.returns import append_only
from marketplace.returns.payment_keys import (
    refund_payment_key,
    return_payment_key,
    reversal_payment_key,
)


def triggers_install(apps, schema_editor):
    ledger = apps.get_model("returns", "RefundLedgerEntry")
    append_only.triggers_install(
        schema_editor, ledger_columns=[field.column for field in ledger._meta.concrete_fields]
    )


def triggers_remove(apps, schema_editor):
    append_only.triggers_remove(schema_editor)


def _key(entry):
    number = entry.order_line.mp_line_number
    if entry.refund_id is not None:
        return refund_payment_key(
            mp_order_number=entry.order.mp_order_number,
            refund_id=entry.refund.refund_id,
            mp_line_number=number,
        )
    return return_payment_key(
        mp_order_number=entry.order.mp_order_number,
        mp_return_number=entry.return_request.mp_return_number,
        mp_line_number=number,
    )


def keys_backfill(apps, schema_editor):
    Entry = apps.get_model("returns", "RefundLedgerEntry")
    rows = Entry.objects.select_related("order", "order_line", "refund", "return_request")
    # Entries first, then their reversals (a reversal's key is its entry's, prefixed).
    keys = {}
    for entry in rows.filter(reverses__isnull=True).iterator():
        keys[entry.pk] = _key(entry)
        Entry.objects.filter(pk=entry.pk).update(payment_key=keys[entry.pk])
    for entry in rows.filter(reverses__isnull=False).iterator():
        key = reversal_payment_key(keys.get(entry.reverses_id) or _key(entry))
        Entry.objects.filter(pk=entry.pk).update(payment_key=key)


class Migration(migrations.Migration):
    dependencies = [
        ("returns", "0006_return_authorized_at"),
    ]

    operations = [
        migrations.RunPython(triggers_remove, triggers_install),
        migrations.AddField(
            model_name="refundledgerentry",
            name="payment_key",
            field=models.CharField(max_length=512, null=True),
        ),
        migrations.RunPython(keys_backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="refundledgerentry",
            name="payment_key",
            field=models.CharField(max_length=512, unique=True),
        ),
        # Last: the ledger's columns are final here.
        migrations.RunPython(triggers_install, triggers_remove),
    ]
