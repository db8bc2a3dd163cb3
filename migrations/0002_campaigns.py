from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0001_initial')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Creative',
            name='rejection_reason',
            field=fields.CharField(default='', max_length=500),
        ),
    ]
