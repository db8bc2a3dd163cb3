from tortoise import migrations
from tortoise.migrations import operations as ops
from adnet.delivery.models import EventType
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

async def count_recorded_events(apps, editor) -> None:
    """Count the events already recorded into ``traffic_daily``, so reports that read it keep their history."""
    client = editor.client
    day = ("(received_at AT TIME ZONE 'UTC')::date" if client.capabilities.dialect == "postgres"
           else "date(received_at)")
    await client.execute_script(
        "INSERT INTO traffic_daily (day, site_id, campaign_id, type, reason, events, cost, publisher_amount) "
        f"SELECT {day}, site_id, campaign_id, type, COALESCE(refusal_reason, ''), COUNT(*), SUM(cost), "
        f"SUM(publisher_amount) FROM tracking_event GROUP BY {day}, site_id, campaign_id, type, "
        "COALESCE(refusal_reason, '')")


class Migration(migrations.Migration):
    dependencies = [('models', '0004_site_ownership')]

    initial = False

    operations = [
        ops.CreateModel(
            name='BillingWindow',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('key', fields.CharField(max_length=200)),
                ('window_start', fields.DatetimeField(db_index=True, auto_now=False, auto_now_add=False)),
                ('used', fields.DecimalField(default=0, max_digits=40, decimal_places=0)),
            ],
            options={'table': 'billing_window', 'app': 'models', 'unique_together': (('key', 'window_start'),), 'pk_attr': 'id', 'table_description': 'What was billed in one window for one key (``adnet.delivery.caps``): events of a client network on a site'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='TrafficDaily',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('day', fields.DateField()),
                ('site', fields.ForeignKeyField('models.Site', source_field='site_id', db_constraint=True, to_field='id', related_name='traffic', on_delete=OnDelete.RESTRICT)),
                ('campaign', fields.ForeignKeyField('models.Campaign', source_field='campaign_id', db_constraint=True, to_field='id', related_name='traffic', on_delete=OnDelete.RESTRICT)),
                ('type', fields.CharEnumField(description='IMPRESSION: IMPRESSION\nCLICK: CLICK', enum_type=EventType, max_length=16)),
                ('reason', fields.CharField(default='', description='empty for billed events', max_length=32)),
                ('events', fields.IntField(default=0)),
                ('cost', fields.DecimalField(default=0, max_digits=40, decimal_places=0)),
                ('publisher_amount', fields.DecimalField(default=0, max_digits=40, decimal_places=0)),
            ],
            options={'table': 'traffic_daily', 'app': 'models', 'unique_together': (('day', 'site_id', 'campaign_id', 'type', 'reason'),), 'indexes': [Index(fields=['campaign_id', 'day'])], 'pk_attr': 'id', 'table_description': 'Per UTC day, site, campaign and event type: how many recorded events were billed (``reason`` empty) or kept'},
            bases=['Model'],
        ),
        ops.AddIndex(
            model_name='DedupKey',
            index=Index(fields=['last_accepted_at']),
        ),
        ops.AddIndex(
            model_name='TrackingEvent',
            index=Index(fields=['received_at']),
        ),
        ops.RunPython(count_recorded_events, ops.RunPython.noop),
    ]
