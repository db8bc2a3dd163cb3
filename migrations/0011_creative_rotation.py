"""Creatives carry a weight and campaigns a rotation mode (``adnet.delivery.rotation``)."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from adnet.campaigns.models import Rotation
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0010_campaign_frequency_caps')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Campaign',
            name='rotation',
            field=fields.CharEnumField(default=Rotation.EVEN, description='EVEN: even\nWEIGHTED: weighted\nBEST_CTR: best_ctr', enum_type=Rotation, max_length=16),
        ),
        ops.AddField(
            model_name='Creative',
            name='weight',
            field=fields.IntField(default=1, description="its share of its campaign's slots under weighted rotation"),
        ),
    ]
