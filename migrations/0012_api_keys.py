"""API keys (``adnet.accounts.api_keys``): a wallet's long-lived, scoped, revocable credentials for scripts."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0011_creative_rotation')]

    initial = False

    operations = [
        ops.CreateModel(
            name='ApiKey',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('wallet', fields.CharField(db_index=True, max_length=42)),
                ('name', fields.CharField(max_length=60)),
                ('scopes', fields.CharField(description='the scopes it holds, separated by spaces', max_length=120)),
                ('secret_hash', fields.CharField(description='SHA-256 (hex) of the whole token', max_length=64)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('last_used_at', fields.DatetimeField(null=True, description='when it last opened a request (to the minute)', auto_now=False, auto_now_add=False)),
                ('revoked_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'api_key', 'app': 'models', 'pk_attr': 'id', 'table_description': "A wallet's long-lived key for scripts: it acts as its wallet within its scopes until revoked. The token is"},
            bases=['Model'],
        ),
    ]
