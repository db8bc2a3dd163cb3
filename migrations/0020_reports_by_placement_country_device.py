from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0019_house_ads_and_floors')]

    initial = False

    operations = [
        ops.CreateModel(
            name='ReportDaily',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('day', fields.DateField()),
                ('campaign', fields.ForeignKeyField('models.Campaign', source_field='campaign_id', db_constraint=True, to_field='id', related_name='report_days', on_delete=OnDelete.RESTRICT)),
                ('site', fields.ForeignKeyField('models.Site', source_field='site_id', db_constraint=True, to_field='id', related_name='report_days', on_delete=OnDelete.RESTRICT)),
                ('placement', fields.CharField(default='', max_length=64)),
                ('country', fields.CharField(default='', description='empty when unknown', max_length=2)),
                ('device', fields.CharField(default='', max_length=8)),
                ('impressions', fields.IntField(default=0)),
                ('clicks', fields.IntField(default=0)),
                ('cost', fields.DecimalField(default=0, max_digits=40, decimal_places=0)),
                ('publisher_amount', fields.DecimalField(default=0, max_digits=40, decimal_places=0)),
            ],
            options={'table': 'report_daily', 'app': 'models', 'unique_together': (('day', 'campaign_id', 'site_id', 'placement', 'country', 'device'),), 'indexes': [Index(fields=['campaign_id', 'day']), Index(fields=['site_id', 'day'])], 'pk_attr': 'id', 'table_description': 'Per UTC day, campaign, site, placement, country and device: the billed impressions and clicks, what they cost'},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='TrackingEvent',
            name='country',
            field=fields.CharField(default='', description='where the client was located (ISO 3166-1 alpha-2), empty when unknown', max_length=2),
        ),
        ops.AddField(
            model_name='TrackingEvent',
            name='device',
            field=fields.CharField(default='', description="desktop, mobile or tablet, from the request's User-Agent", max_length=8),
        ),
    ]
