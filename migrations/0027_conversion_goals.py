"""Conversion goals per campaign and the conversions reported for them (``adnet.conversions``): two tables, each
with its unique keys (a goal per campaign and event; a conversion per campaign and order id, and per goal, wallet
and slot), the campaign's ``click_param``, and the webhook event type ``conversion.recorded``.

The event type changes only the column's description (the enum's values), not its schema: that operation changes the
models' state alone, since SQLite would otherwise rebuild ``webhook_event`` and lose its index on ``wallet``.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops
from adnet.campaigns.models import GoalKind
from adnet.webhooks.models import WebhookEventType
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class StateOnlyAlterField(ops.AlterField):
    """An ``AlterField`` whose column is unchanged in the database: only the models' state moves."""

    async def database_forward(self, app_label, old_state, new_state, state_editor=None) -> None:
        return None

    async def database_backward(self, app_label, old_state, new_state, state_editor=None) -> None:
        return None


class Migration(migrations.Migration):
    dependencies = [('models', '0026_demo_banners_on_adnet')]

    initial = False

    operations = [
        ops.CreateModel(
            name='ConversionGoal',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('campaign', fields.ForeignKeyField('models.Campaign', source_field='campaign_id', db_constraint=True, to_field='id', related_name='goals', on_delete=OnDelete.CASCADE)),
                ('name', fields.CharField(max_length=120)),
                ('kind', fields.CharEnumField(default=GoalKind.OFFCHAIN, description='OFFCHAIN: offchain', enum_type=GoalKind, max_length=16)),
                ('event', fields.CharField(description='the named event the advertiser reports', max_length=64)),
                ('click_window_days', fields.SmallIntField(default=7, description='a click attributes for this many days')),
                ('wallet_cap', fields.SmallIntField(default=1, description='most attributed conversions per proven wallet')),
                ('cpa', fields.DecimalField(default=0, description='G$ paid per verified conversion - 0 = counted, not paid', max_digits=40, decimal_places=0)),
                ('public', fields.BooleanField(default=False, description="whether a pixel on the advertiser's page may report it")),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('updated_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'conversion_goal', 'app': 'models', 'unique_together': (('campaign', 'event'),), 'pk_attr': 'id', 'table_description': 'An outcome a campaign counts, and may pay for (``cpa``), after a click of its ads. Its content (kind, event,'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='Conversion',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('campaign_id', fields.CharField(max_length=48)),
                ('goal', fields.ForeignKeyField('models.ConversionGoal', source_field='goal_id', db_constraint=True, to_field='id', related_name='conversions', on_delete=OnDelete.RESTRICT)),
                ('order_id', fields.CharField(max_length=128)),
                ('click_event_id', fields.CharField(null=True, description="the click's tracking_event id", max_length=48)),
                ('site_id', fields.CharField(null=True, description="the click's site", max_length=48)),
                ('creative_id', fields.CharField(null=True, max_length=48)),
                ('wallet', fields.CharField(null=True, description='a wallet the advertiser proved for the conversion', max_length=42)),
                ('wallet_slot', fields.SmallIntField(null=True, description="which of the goal's conversions per wallet it is")),
                ('value', fields.DecimalField(null=True, description="the order's value as the advertiser reported it", max_digits=40, decimal_places=0)),
                ('clicked_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('occurred_at', fields.DatetimeField(description='when it happened, as reported (else when it was received)', auto_now=False, auto_now_add=False)),
                ('received_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('attributed', fields.BooleanField(description='verified and attributed to its click: no fraud reason')),
                ('paid', fields.BooleanField(default=False)),
                ('reason', fields.CharField(null=True, description='why it was not attributed or not paid', max_length=32)),
                ('cost', fields.DecimalField(default=0, max_digits=40, decimal_places=0)),
                ('publisher_amount', fields.DecimalField(default=0, max_digits=40, decimal_places=0)),
            ],
            options={'table': 'conversion', 'app': 'models', 'unique_together': (('campaign_id', 'order_id'), ('goal', 'wallet', 'wallet_slot')), 'indexes': [Index(fields=['campaign_id', 'received_at']), Index(fields=['site_id', 'received_at'])], 'pk_attr': 'id', 'table_description': "One reported conversion, recorded once per campaign and order id (the database's unique key), with the click"},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='Campaign',
            name='click_param',
            field=fields.CharField(default='adnet_click', description="the query parameter a click's id reaches the landing page under", db_default='adnet_click', max_length=40),
        ),
        StateOnlyAlterField(
            model_name='WebhookEvent',
            name='type',
            field=fields.CharEnumField(description='DEPOSIT_CREDITED: deposit.credited\nCAMPAIGN_APPROVED: campaign.approved\nCAMPAIGN_REJECTED: campaign.rejected\nCAMPAIGN_ENDED: campaign.ended\nWITHDRAWAL_REDEEMED: withdrawal.redeemed\nWITHDRAWAL_RELEASED: withdrawal.released\nSITE_VERIFIED: site.verified\nSITE_LAPSED: site.lapsed\nCONVERSION_RECORDED: conversion.recorded', enum_type=WebhookEventType, max_length=32),
        ),
    ]
