from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields
from tortoise.indexes import Index

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
    ]
