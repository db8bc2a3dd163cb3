"""A task's rejection reason: an operator rejects one task of a campaign in review with a reason its advertiser
reads (``adnet.campaigns.review.reject_task``); the task is switched off, as an ended one, so no path serves it or
pays for it."""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('models', '0032_conversion_report_keys')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Task',
            name='rejection_reason',
            field=fields.CharField(default='', db_default='', description='why an operator rejected it in review (it is then inactive)', max_length=500),
        ),
    ]
