"""Webhooks (``adnet.webhooks``): endpoints, the outbox of events, deliveries and their attempts."""

from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from adnet.webhooks.models import DeliveryStatus, WebhookEventType
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0013_site_deletion')]

    initial = False

    operations = [
        ops.CreateModel(
            name='WebhookEndpoint',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('wallet', fields.CharField(db_index=True, max_length=42)),
                ('url', fields.CharField(max_length=2048)),
                ('events', fields.CharField(description='the event types it receives, separated by spaces', max_length=400)),
                ('secret', fields.CharField(description='the HMAC key of its signatures', max_length=64)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('deleted_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'webhook_endpoint', 'app': 'models', 'pk_attr': 'id', 'table_description': "A URL a wallet's account registered for some events, with the secret its deliveries are signed with (shown"},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='WebhookEvent',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('wallet', fields.CharField(db_index=True, max_length=42)),
                ('type', fields.CharEnumField(description='DEPOSIT_CREDITED: deposit.credited\nCAMPAIGN_APPROVED: campaign.approved\nCAMPAIGN_REJECTED: campaign.rejected\nCAMPAIGN_ENDED: campaign.ended\nWITHDRAWAL_REDEEMED: withdrawal.redeemed\nWITHDRAWAL_RELEASED: withdrawal.released\nSITE_VERIFIED: site.verified\nSITE_LAPSED: site.lapsed', enum_type=WebhookEventType, max_length=32)),
                ('payload', fields.JSONField(description="the event's data, as the body's ``data``", encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'webhook_event', 'app': 'models', 'pk_attr': 'id', 'table_description': "One event of a wallet's account, written in the transaction of what it reports (the outbox)."},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='WebhookDelivery',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('event', fields.ForeignKeyField('models.WebhookEvent', source_field='event_id', db_constraint=True, to_field='id', related_name='deliveries', on_delete=OnDelete.CASCADE)),
                ('endpoint', fields.ForeignKeyField('models.WebhookEndpoint', source_field='endpoint_id', db_constraint=True, to_field='id', related_name='deliveries', on_delete=OnDelete.CASCADE)),
                ('status', fields.CharEnumField(default=DeliveryStatus.PENDING, description='PENDING: pending\nDELIVERED: delivered\nFAILED: failed', enum_type=DeliveryStatus, max_length=16)),
                ('attempts', fields.IntField(default=0, description='attempts started')),
                ('next_attempt_at', fields.DatetimeField(db_index=True, auto_now=False, auto_now_add=False)),
                ('delivered_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'webhook_delivery', 'app': 'models', 'unique_together': (('event', 'endpoint'),), 'pk_attr': 'id', 'table_description': 'One event to one endpoint: tried until it is answered 2xx or ``MAX_ATTEMPTS`` attempts failed. A worker'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='WebhookAttempt',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('delivery', fields.ForeignKeyField('models.WebhookDelivery', source_field='delivery_id', db_constraint=True, to_field='id', related_name='attempt_log', on_delete=OnDelete.CASCADE)),
                ('number', fields.IntField()),
                ('attempted_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('status_code', fields.IntField(null=True)),
                ('error', fields.CharField(default='', max_length=300)),
            ],
            options={'table': 'webhook_attempt', 'app': 'models', 'unique_together': (('delivery', 'number'),), 'pk_attr': 'id', 'table_description': "One attempt of a delivery: when, and the endpoint's answer or why there was none. One row per attempt number"},
            bases=['Model'],
        ),
    ]
