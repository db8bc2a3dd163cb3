"""A site's own content categories, as IAB Content Taxonomy 3.1 ids (``adnet.accounts.content_taxonomy``): sites had
none before, so every existing site starts with an empty list and nothing is mapped."""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('models', '0037_audience_group_reports')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Site',
            name='content_categories',
            field=fields.JSONField(default=list, db_default='[]', description='its own content categories: IAB Content Taxonomy 3.1 ids'),
        ),
    ]
