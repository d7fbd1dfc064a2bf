
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        # The rows were copied into sync.SellerSync first.
        ('sync', '0002_merge_pull_state_tables'),
        ('returns', '0004_order_delete_takes_returns'),
    ]

    operations = [
        migrations.DeleteModel(
            name='SellerReturnsPullState',
        ),
    ]
