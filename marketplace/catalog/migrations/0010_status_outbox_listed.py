"""Cheaper status triggers for big feeds (docs/benchmarks.md P6).

* The listing table's triggers read the changed listings from their transition table
  instead of looking each one up again (``status_outbox._RECORD_LISTED``): the same
  outbox rows, without a join over every seller's listings.
* The outbox's seller is no database constraint any more (``StatusChange.seller``):
  one deferred check per outbox row at commit was a million for a first million-row feed.
* The listing's seller has no index of its own (``listing_seller_sku_uniq`` leads with
  it): one index fewer to write per listing.

The triggers are removed first and installed again last (``triggers_install`` replaces
the functions): SQLite rebuilds both tables, and a trigger naming them must not exist
meanwhile (a rebuilt table's own triggers would be gone).
"""

import django.db.models.deletion
from django.db import migrations, models

from marketplace.catalog.listing_status import status_outbox


def triggers_install(apps, schema_editor):
    status_outbox.triggers_install(schema_editor)


def triggers_remove(apps, schema_editor):
    status_outbox.triggers_remove(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0009_status_outbox"),
        ("sellers", "0003_seller_name_index"),
    ]

    operations = [
        migrations.RunPython(triggers_remove, triggers_install),
        migrations.AlterField(
            model_name="statuschange",
            name="seller",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="status_changes",
                to="sellers.seller",
            ),
        ),
        migrations.AlterField(
            model_name="listing",
            name="seller",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="listings",
                to="sellers.seller",
            ),
        ),
        migrations.RunPython(triggers_install, triggers_remove),
    ]
