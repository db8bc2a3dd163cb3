"""Campaigns carry a frequency cap: the most billed impressions per viewer in a period of hours."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0009_campaign_targeting')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Campaign',
            name='frequency_cap',
            field=fields.IntField(null=True, description='most billed impressions per viewer in a period'),
        ),
        ops.AddField(
            model_name='Campaign',
            name='frequency_hours',
            field=fields.IntField(default=24, description='the period of frequency_cap, 1 to 24 hours'),
        ),
    ]
