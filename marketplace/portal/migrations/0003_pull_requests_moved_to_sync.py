
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        # The rows were copied into sync.SellerSync first.
        ('sync', '0002_merge_pull_state_tables'),
        ('portal', '0002_seller_notifications'),
    ]

    operations = [
        migrations.DeleteModel(
            name='SellerPullRequest',
        ),
    ]
