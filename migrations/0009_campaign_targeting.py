"""Campaigns carry targeting rules (``adnet.campaigns.targeting``): geo, device, schedule and keywords."""

from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from json import dumps, loads
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0008_job_leases')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Campaign',
            name='targeting',
            field=fields.JSONField(default=dict, description='targeting rules (adnet.campaigns.targeting) - {} = none', encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads),
        ),
    ]
