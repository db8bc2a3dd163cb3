from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0024_webhook_endpoint_breaker')]

    initial = False

    operations = [
        ops.CreateModel(
            name='AnnouncedChange',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('origin', fields.CharField(max_length=32)),
                ('changed', fields.TextField(description='the ids announced, a JSON array', unique=False)),
                ('created_at', fields.DatetimeField(db_index=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'announced_change', 'app': 'models', 'pk_attr': 'id', 'table_description': 'The ids of what a process changed (``adnet.core.changes.announce``), for every other serving process of a'},
            bases=['Model'],
        ),
    ]
