"""The listing table's status triggers read the changed listings from their transition
table instead of looking each one up again (``status_outbox._RECORD_LISTED``): the same
outbox rows, without a join over every seller's listings. ``triggers_install`` replaces
the functions and triggers in place (Postgres; SQLite's row-level triggers are the same).
"""

from django.db import migrations

from marketplace.catalog import status_outbox


def triggers_install(apps, schema_editor):
    status_outbox.triggers_install(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0009_status_outbox"),
    ]

    # Backwards: 0009's functions are not restored (this SQL records the same rows).
    operations = [migrations.RunPython(triggers_install, migrations.RunPython.noop)]
