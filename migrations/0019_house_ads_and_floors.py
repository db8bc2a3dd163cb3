from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from adnet.delivery.models import EventType
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0018_advertiser_members')]

    initial = False

    operations = [
        ops.CreateModel(
            name='HouseAd',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('site', fields.ForeignKeyField('models.Site', source_field='site_id', db_constraint=True, to_field='id', related_name='house_ads', on_delete=OnDelete.CASCADE)),
                ('banner_url', fields.CharField(max_length=2048)),
                ('target_url', fields.CharField(max_length=2048)),
                ('description', fields.CharField(default='', max_length=500)),
                ('width', fields.IntField()),
                ('height', fields.IntField()),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'house_ad', 'app': 'models', 'indexes': [Index(fields=['site_id', 'created_at'])], 'pk_attr': 'id', 'table_description': "A publisher's own promotion for one of its sites (``adnet.delivery.house_ads``): shown in a banner slot that no"},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='HouseAdDaily',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('day', fields.DateField()),
                ('site', fields.ForeignKeyField('models.Site', source_field='site_id', db_constraint=True, to_field='id', related_name='house_ad_days', on_delete=OnDelete.CASCADE)),
                ('house_ad_id', fields.CharField(description='kept after the house ad is deleted', max_length=48)),
                ('type', fields.CharEnumField(description='IMPRESSION: IMPRESSION\nCLICK: CLICK', enum_type=EventType, max_length=16)),
                ('events', fields.IntField(default=0)),
            ],
            options={'table': 'house_ad_daily', 'app': 'models', 'unique_together': (('day', 'house_ad_id', 'type'),), 'indexes': [Index(fields=['site_id', 'day'])], 'pk_attr': 'id', 'table_description': "Per UTC day, house ad and event type: how many impressions or clicks the site's pages reported for one of its"},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='Site',
            name='floor_cpm',
            field=fields.DecimalField(default=0, db_default=0, description='the least eCPM a paid campaign must offer to be served here (smallest units per 1000 impressions, 0 for none)', max_digits=40, decimal_places=0),
        ),
        ops.AddField(
            model_name='Site',
            name='placement_floors',
            field=fields.JSONField(default=dict, db_default='{}', description='placement label -> its floor (smallest units, as text), replacing floor_cpm there', encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads),
        ),
    ]
