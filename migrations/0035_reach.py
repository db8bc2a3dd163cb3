"""Unique reach and frequency: per UTC day, campaign, creative, site and viewer digest, the billed impressions
(``reach_viewer_daily``, ``adnet.delivery.reach``)."""

from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('models', '0028_onchain_goals')]

    initial = False

    operations = [
        ops.CreateModel(
            name='ReachViewerDaily',
            fields=[
                ('id', fields.BigIntField(primary_key=True, unique=True, db_index=True)),
                ('day', fields.DateField()),
                ('campaign_id', fields.CharField(max_length=48)),
                ('creative_id', fields.CharField(max_length=48)),
                ('site_id', fields.CharField(max_length=48)),
                ('viewer_key', fields.CharField(description='SHA-256 of the campaign and the viewer id, 128 bits', max_length=32)),
                ('impressions', fields.IntField(default=0)),
            ],
            options={'table': 'reach_viewer_daily', 'app': 'models', 'unique_together': (('day', 'campaign_id', 'creative_id', 'site_id', 'viewer_key'),), 'indexes': [Index(fields=['campaign_id', 'day'])], 'pk_attr': 'id', 'table_description': 'Per UTC day, campaign, creative, site and viewer (a per-campaign digest of the viewer id, never the id):\nthe billed impressions (``adnet.delivery.reach``), what unique reach and frequency are counted from. Kept for\nthe longest report range, then deleted (``adnet.delivery.retention``).'},
            bases=['Model'],
        ),
    ]
