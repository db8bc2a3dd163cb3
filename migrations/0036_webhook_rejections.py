"""The webhook event types ``creative.rejected`` and ``task.rejected``: an advertiser hears of each creative and
each task an operator rejects, with its reason (``adnet.campaigns.review``, ``adnet.tasks.review``).

The new values change only the column's description, not its schema: as in 0027, that operation moves the models'
state alone, since SQLite would otherwise rebuild ``webhook_event`` and lose its index on ``wallet``.
"""

from importlib import import_module

from tortoise import fields, migrations

from adnet.webhooks.models import WebhookEventType

StateOnlyAlterField = import_module("migrations.0027_conversion_goals").StateOnlyAlterField


class Migration(migrations.Migration):
    dependencies = [('models', '0035_request_hours')]

    initial = False

    operations = [
        StateOnlyAlterField(
            model_name='WebhookEvent',
            name='type',
            field=fields.CharEnumField(description='DEPOSIT_CREDITED: deposit.credited\nCAMPAIGN_APPROVED: campaign.approved\nCAMPAIGN_REJECTED: campaign.rejected\nCAMPAIGN_ENDED: campaign.ended\nCREATIVE_REJECTED: creative.rejected\nTASK_REJECTED: task.rejected\nWITHDRAWAL_REDEEMED: withdrawal.redeemed\nWITHDRAWAL_RELEASED: withdrawal.released\nSITE_VERIFIED: site.verified\nSITE_LAPSED: site.lapsed\nCONVERSION_RECORDED: conversion.recorded', enum_type=WebhookEventType, max_length=32),
        ),
    ]
