"""On-chain goals and proven wallets: a goal's contract, topic0 and where its event holds the wallet and the amount
(``adnet.campaigns.goal_events``), the goal kind ``onchain``, and the table of wallets proven for clicks
(``click_binding``, one per click). The reader's cursor is a row of ``chain_cursor`` (no schema change).

The kind's new value changes only the column's description, not its schema: as in 0027, that operation moves the
models' state alone, since SQLite would otherwise rebuild ``conversion_goal``.
"""

from importlib import import_module

from tortoise import migrations
from tortoise.migrations import operations as ops
from adnet.campaigns.models import GoalKind
from tortoise import fields
from tortoise.indexes import Index

StateOnlyAlterField = import_module("migrations.0027_conversion_goals").StateOnlyAlterField


class Migration(migrations.Migration):
    dependencies = [('models', '0027_conversion_goals')]

    initial = False

    operations = [
        ops.CreateModel(
            name='ClickBinding',
            fields=[
                ('click_event_id', fields.CharField(primary_key=True, unique=True, db_index=True, description="the click's tracking_event id", max_length=48)),
                ('campaign_id', fields.CharField(max_length=48)),
                ('site_id', fields.CharField(max_length=48)),
                ('creative_id', fields.CharField(max_length=48)),
                ('wallet', fields.CharField(description='the wallet that signed the binding message', max_length=42)),
                ('clicked_at', fields.DatetimeField(description='when the click id was issued, as it says', auto_now=False, auto_now_add=False)),
                ('bound_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'click_binding', 'app': 'models', 'indexes': [Index(fields=['wallet', 'campaign_id', 'clicked_at'])], 'pk_attr': 'click_event_id', 'table_description': "A wallet proven for a recorded click: the wallet signed the message naming the click's id"},
            bases=['Model'],
        ),
        StateOnlyAlterField(
            model_name='ConversionGoal',
            name='kind',
            field=fields.CharEnumField(default=GoalKind.OFFCHAIN, description='OFFCHAIN: offchain\nONCHAIN: onchain', enum_type=GoalKind, max_length=16),
        ),
        ops.AddField(
            model_name='ConversionGoal',
            name='amount_field',
            field=fields.CharField(null=True, description='onchain: where the amount is', max_length=16),
        ),
        ops.AddField(
            model_name='ConversionGoal',
            name='contract',
            field=fields.CharField(null=True, description='onchain: the contract that emits the event', max_length=42),
        ),
        ops.AddField(
            model_name='ConversionGoal',
            name='min_amount',
            field=fields.DecimalField(null=True, description='onchain: the least amount that counts', max_digits=78, decimal_places=0),
        ),
        ops.AddField(
            model_name='ConversionGoal',
            name='topic0',
            field=fields.CharField(null=True, description="onchain: the event's topic0", max_length=66),
        ),
        ops.AddField(
            model_name='ConversionGoal',
            name='wallet_field',
            field=fields.CharField(null=True, description='onchain: where the wallet is', max_length=16),
        ),
    ]
