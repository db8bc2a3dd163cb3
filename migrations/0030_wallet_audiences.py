"""Wallet audiences: the wallets viewers proved, which audience rules each matched and until when, and whether the
viewer switched wallet targeting off (``audience_wallet``). The rules themselves live in a campaign's targeting
(no schema change)."""

from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from json import dumps, loads
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0029_conversion_rules')]

    initial = False

    operations = [
        ops.CreateModel(
            name='AudienceWallet',
            fields=[
                ('wallet', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=42)),
                ('proven_at', fields.DatetimeField(description='when the viewer last proved the wallet', auto_now=False, auto_now_add=False)),
                ('evaluated_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('expires_at', fields.DatetimeField(null=True, description='when the evaluation stops counting', auto_now=False, auto_now_add=False)),
                ('evaluated', fields.JSONField(default=list, description='the rule keys the evaluation asked', encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('matched', fields.JSONField(default=list, description='the rule keys the wallet matched', encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('rules_digest', fields.CharField(default='', description='a digest of the keys evaluated', max_length=64)),
                ('opted_out', fields.BooleanField(default=False, description='the viewer switched wallet targeting off')),
            ],
            options={'table': 'audience_wallet', 'app': 'models', 'indexes': [Index(fields=['opted_out', 'evaluated_at']), Index(fields=['proven_at'])], 'pk_attr': 'wallet', 'table_description': 'A wallet its viewer proved (the rewards sign-in), and which audience rules (``adnet.campaigns.audiences``'},
            bases=['Model'],
        ),
    ]
