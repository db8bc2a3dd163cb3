"""Reports by audience: each tracking event keeps the number of its campaign's audience rule group that admitted the
viewer at serving (its tracking token carries it, ``adnet.delivery.tokens``); events recorded before have none (0)."""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('models', '0036_webhook_rejections')]

    initial = False

    operations = [
        ops.AddField(
            model_name='TrackingEvent',
            name='audience_group',
            field=fields.SmallIntField(default=0, db_default=0, description="the audience rule group (1 the first) that admitted the viewer at serving, 0 for none"),
        ),
    ]
