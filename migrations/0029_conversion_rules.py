"""View-through and the conversions' new rules: the goal's view window (``view_window_hours``, 0 = none), what a
conversion names (``attributed_via``: a click or an impression), and the wallets proven for impressions
(``view_binding``, one per impression). The client network limit is a ``billing_window`` row and unbound wallets'
events are ``conversion`` rows: no schema change.

The new descriptions of ``conversion.click_event_id`` and ``clicked_at`` move the models' state alone (as in 0027:
SQLite would otherwise rebuild ``conversion``).
"""

from importlib import import_module

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields
from tortoise.indexes import Index

StateOnlyAlterField = import_module("migrations.0027_conversion_goals").StateOnlyAlterField

class Migration(migrations.Migration):
    dependencies = [('models', '0028_onchain_goals')]

    initial = False

    operations = [
        ops.CreateModel(
            name='ViewBinding',
            fields=[
                ('impression_event_id', fields.CharField(primary_key=True, unique=True, db_index=True, description="the impression's tracking_event id", max_length=48)),
                ('campaign_id', fields.CharField(max_length=48)),
                ('site_id', fields.CharField(max_length=48)),
                ('creative_id', fields.CharField(max_length=48)),
                ('wallet', fields.CharField(description='the wallet of the rewards session that posted it', max_length=42)),
                ('seen_at', fields.DatetimeField(description='when the impression was recorded', auto_now=False, auto_now_add=False)),
                ('bound_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'view_binding', 'app': 'models', 'indexes': [Index(fields=['wallet', 'campaign_id', 'seen_at'])], 'pk_attr': 'impression_event_id', 'table_description': "A wallet proven for a billed impression: the viewer's page held the wallet's rewards session (its SIWE"},
            bases=['Model'],
        ),
        StateOnlyAlterField(
            model_name='Conversion',
            name='click_event_id',
            field=fields.CharField(null=True, description="the click's tracking_event id (a view-through's: its impression's)", max_length=48),
        ),
        StateOnlyAlterField(
            model_name='Conversion',
            name='clicked_at',
            field=fields.DatetimeField(null=True, description='when its click (or impression) was recorded', auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='Conversion',
            name='attributed_via',
            field=fields.CharField(null=True, description='click or view: what it names (null without either)', max_length=8),
        ),
        ops.AddField(
            model_name='ConversionGoal',
            name='view_window_hours',
            field=fields.SmallIntField(default=0, description="a billed impression of a proven wallet's viewer attributes for this many hours - 0 = no view-through", db_default=0),
        ),
    ]
