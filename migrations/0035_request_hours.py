"""Serve request aggregates for forecasts: per site, UTC hour, size, country and device kind, how many serve requests
came (``request_hour``, ``adnet.delivery.requests``); never a request itself."""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('models', '0034_reach')]

    initial = False

    operations = [
        ops.CreateModel(
            name='RequestHour',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('site_id', fields.CharField(max_length=48)),
                ('hour', fields.DatetimeField(db_index=True, auto_now=False, auto_now_add=False)),
                ('size', fields.CharField(default='', max_length=20)),
                ('country', fields.CharField(default='', max_length=2)),
                ('device', fields.CharField(default='', max_length=10)),
                ('requests', fields.IntField(default=0)),
            ],
            options={'table': 'request_hour', 'app': 'models', 'unique_together': (('site_id', 'hour', 'size', 'country', 'device'),), 'pk_attr': 'id', 'table_description': 'How many serve requests one UTC hour brought for a site, banner size (empty: any), country (empty: unknown)'},
            bases=['Model'],
        ),
    ]
