"""The seller's record id beside the trimmed SKU, one status time for the status file and
EDRTS, the feed's spacing corrections, and the sender's wait for a sign-in.

* ``record_id`` (listings, rejected SKUs, the outbox): the feed's id exactly as the
  seller's database holds it; EDRTS sends it (a trimmed one created stray products).
* ``Listing.status_at``: the time the status last changed, filled from ``updated_at``.
* The status triggers are installed again (``status_outbox``): they carry the record id,
  read ``status_at``, and fire when the record id changes. Removed first, installed last:
  SQLite rebuilds the tables, and a trigger naming them must not exist meanwhile.
"""

from django.db import migrations, models

from marketplace.catalog.listing_status import status_outbox


def triggers_install(apps, schema_editor):
    status_outbox.triggers_install(schema_editor)


def triggers_remove(apps, schema_editor):
    status_outbox.triggers_remove(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0010_status_outbox_listed"),
    ]

    operations = [
        migrations.RunPython(triggers_remove, triggers_install),
        migrations.AddField(
            model_name="feedrun",
            name="corrected",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="feedrun",
            name="corrections",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="listing",
            name="record_id",
            field=models.TextField(blank=True, db_default="", default=""),
        ),
        migrations.AddField(
            model_name="listing",
            name="status_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="rejectedsku",
            name="record_id",
            field=models.TextField(blank=True, db_default="", default=""),
        ),
        migrations.AddField(
            model_name="statuschange",
            name="record_id",
            field=models.TextField(blank=True, db_default="", default=""),
        ),
        migrations.AddField(
            model_name="statussync",
            name="waiting_for_access",
            field=models.BooleanField(default=False),
        ),
        migrations.RunSQL(
            "UPDATE catalog_listing SET status_at = updated_at WHERE status_at IS NULL",
            migrations.RunSQL.noop,
        ),
        migrations.RunPython(triggers_install, triggers_remove),
    ]
