"""Unique reach and frequency: per UTC day, campaign, creative, site and viewer digest, the billed impressions
(``reach_viewer_daily``), counted by the reach job from each event's viewer digest (``tracking_event.viewer_key``)
in the order batches were written (``tracking_event.recorded_at``, the job's cursor in ``reach_cursor``)
(``adnet.delivery.reach``). Events recorded before have neither and count in no viewer."""

from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('models', '0033_task_rejection')]

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
            options={'table': 'reach_viewer_daily', 'app': 'models', 'unique_together': (('day', 'campaign_id', 'creative_id', 'site_id', 'viewer_key'),), 'indexes': [Index(fields=['campaign_id', 'day'])], 'pk_attr': 'id', 'table_description': 'Per UTC day, campaign, creative, site and viewer (a per-campaign digest of the viewer id, never the id):'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='ReachCursor',
            fields=[
                ('name', fields.CharField(max_length=32, primary_key=True, unique=True, db_index=True)),
                ('recorded_at', fields.DatetimeField()),
                ('event_id', fields.CharField(max_length=48)),
            ],
            options={'table': 'reach_cursor', 'app': 'models', 'pk_attr': 'name', 'table_description': 'How far the reach job (``adnet.delivery.reach``) has counted ``tracking_event``: every event recorded before'},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='TrackingEvent',
            name='viewer_key',
            field=fields.CharField(null=True, description="the viewer's digest in its campaign (adnet.delivery.reach)", max_length=32),
        ),
        ops.AddField(
            model_name='TrackingEvent',
            name='recorded_at',
            field=fields.DatetimeField(null=True, description="when its batch was written, the reach job's cursor"),
        ),
        ops.AddIndex(
            model_name='TrackingEvent',
            index=Index(fields=['recorded_at']),
        ),
    ]
