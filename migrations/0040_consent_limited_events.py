"""Consent-limited tracking events: an event whose page's consent signals (TCF, GPP) do not let adnet keep a viewer
id on the device is recorded with ``consent_limited`` set, its viewer id left out (``adnet.delivery.consent``)."""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('models', '0039_decision_samples')]

    initial = False

    operations = [
        ops.AddField(
            model_name='TrackingEvent',
            name='consent_limited',
            field=fields.BooleanField(default=False, db_default=False, description="the page's consent signals did not let adnet keep a viewer id: none is stored, and no per-viewer state was derived from it"),
        ),
    ]
