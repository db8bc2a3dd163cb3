"""The database's rate limit keys (``adnet.accounts.limits``): the limits that guard accounts hold across workers
and hosts without Redis."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0022_ad_units')]

    initial = False

    operations = [
        ops.CreateModel(
            name='RateLimitState',
            fields=[
                ('key', fields.CharField(primary_key=True, unique=True, db_index=True, description="SHA-256 (hex) of the limit's key", max_length=64)),
                ('arrival', fields.BigIntField(db_index=True)),
            ],
            options={'table': 'rate_limit', 'app': 'models', 'pk_attr': 'key', 'table_description': 'Where a rate limit that guards accounts stands for one client (``adnet.accounts.limits``): the theoretical'},
            bases=['Model'],
        ),
    ]
