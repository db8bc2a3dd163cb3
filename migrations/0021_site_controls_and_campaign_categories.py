from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from adnet.campaigns.models import Category
from json import dumps, loads
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0020_reports_by_placement_country_device')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Campaign',
            name='category',
            field=fields.CharEnumField(default=Category.OTHER, db_default=Category.OTHER, description='what it advertises, which publishers may block', enum_type=Category, max_length=16),
        ),
        ops.AddField(
            model_name='Site',
            name='controls',
            field=fields.JSONField(default=dict, db_default='{}', description='what its owner blocks or refuses to show (adnet.delivery.controls) - {} = nothing', encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads),
        ),
    ]
