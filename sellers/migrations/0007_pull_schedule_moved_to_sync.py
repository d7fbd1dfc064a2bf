
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        # The rows were copied into sync.SellerSync first.
        ('sync', '0002_merge_pull_state_tables'),
        ('sellers', '0006_admin_plural_names'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='pullschedule',
            name='seller',
        ),
        migrations.AddIndex(
            model_name='platformconnection',
            index=models.Index(fields=['connected_at'], name='conn_connected_at_idx'),
        ),
        migrations.DeleteModel(
            name='PullSchedule',
        ),
    ]
