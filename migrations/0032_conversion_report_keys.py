"""Conversions keep their click's placement, country and device, so that reports break conversions down as they
break down billed traffic (``adnet.reporting.breakdowns``), also after the click's raw event is deleted. Conversions
recorded before keep empty values (``unknown`` in reports)."""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('models', '0031_sellers_ads_txt_and_iab_ids')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Conversion',
            name='placement',
            field=fields.CharField(default='', description="the click's placement label", max_length=64),
        ),
        ops.AddField(
            model_name='Conversion',
            name='country',
            field=fields.CharField(default='', description="the click's country, empty when unknown", max_length=2),
        ),
        ops.AddField(
            model_name='Conversion',
            name='device',
            field=fields.CharField(default='', description="the click's device kind, empty when unknown", max_length=8),
        ),
    ]
