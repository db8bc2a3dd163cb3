"""Sampled serve decisions: one in every ``SAMPLE_EVERY`` serve decisions of each process, with the
first rule that kept out each campaign, for the decision explainer's answers over a recent period
(``adnet.delivery.explainer``); deleted after ``SAMPLES_KEPT`` by the retention job."""

from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from json import dumps, loads
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0038_site_content_categories')]

    initial = False

    operations = [
        ops.CreateModel(
            name='DecisionSample',
            fields=[
                ('id', fields.BigIntField(primary_key=True, unique=True, db_index=True)),
                ('decided_at', fields.DatetimeField(db_index=True, auto_now=False, auto_now_add=False)),
                ('site_id', fields.CharField(max_length=48)),
                ('placement', fields.CharField(default='', max_length=64)),
                ('size', fields.CharField(default='', max_length=16)),
                ('country', fields.CharField(default='', max_length=8)),
                ('device', fields.CharField(default='', max_length=16)),
                ('outcome', fields.CharField(description='the campaign shown, or the kind (HOUSE, NONE, a unit\'s)', max_length=48)),
                ('verdicts', fields.JSONField(default=dict, description="campaign id → first excluding rule ('' for a candidate)", encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('filtered', fields.CharField(default='', description="the tracking filter's reason its events would not be billed, if any", max_length=32)),
            ],
            options={'table': 'decision_sample', 'app': 'models', 'indexes': [Index(fields=['site_id', 'decided_at'])], 'pk_attr': 'id', 'table_description': 'One serve decision of the few each process samples (``adnet.delivery.explainer``): the slot, the viewer\'s'},
            bases=['Model'],
        ),
    ]
