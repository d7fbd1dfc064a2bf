
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        # The rows were copied into sync.SellerSync first.
        ('sync', '0002_merge_pull_state_tables'),
        ('orders', '0006_order_list_indexes'),
    ]

    operations = [
        migrations.DeleteModel(
            name='SellerPullState',
        ),
    ]
