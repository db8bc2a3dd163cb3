"""Sites can be deleted (``adnet.money.closing``): when, kept for the books."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0012_api_keys')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Site',
            name='deleted_at',
            field=fields.DatetimeField(null=True, description='when its owner deleted it (its records are kept)', auto_now=False, auto_now_add=False),
        ),
    ]
