from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0021_site_controls_and_campaign_categories')]

    initial = False

    operations = [
        ops.CreateModel(
            name='AdUnit',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('site', fields.ForeignKeyField('models.Site', source_field='site_id', db_constraint=True, to_field='id', related_name='ad_units', on_delete=OnDelete.CASCADE)),
                ('name', fields.CharField(max_length=120)),
                ('kinds', fields.JSONField(description='what may fill it: BANNER, POLL, FEEDBACK, SURVEY (at least one)', encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('size', fields.CharField(null=True, description='the banner size WIDTHxHEIGHT, null when responsive', max_length=16)),
                ('attached_tasks', fields.BooleanField(default=False, description='a banner shows its attached tasks')),
                ('placement', fields.CharField(default='', description='the placement label serving receives', max_length=64)),
                ('house_ads', fields.BooleanField(default=True, description='a banner slot no paid campaign fills shows a house ad')),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('updated_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'ad_unit', 'app': 'models', 'unique_together': (('site_id', 'name'),), 'pk_attr': 'id', 'table_description': 'A named slot a publisher defines for a site (``adnet.delivery.ad_units``): what may fill it, at which size,'},
            bases=['Model'],
        ),
    ]
