"""Rewards sessions: a session says what it may do, everything its wallet may (``account``, every existing session)
or only list and redeem the wallet's rewards (``rewards``)."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from adnet.accounts.models import SessionScope
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0016_withdrawal_idempotency_keys')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Session',
            name='scope',
            field=fields.CharEnumField(default=SessionScope.ACCOUNT, description='ACCOUNT: account\nREWARDS: rewards', db_default='account', enum_type=SessionScope, max_length=16),
        ),
    ]
