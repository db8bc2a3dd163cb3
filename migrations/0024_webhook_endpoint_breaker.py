"""Webhook endpoints bounded per wallet and paused by a circuit breaker (``adnet.webhooks``): each endpoint in use
holds a slot, unique per wallet; each counts its failed attempts in a row, is held back after a failure or while an
attempt is in flight, and is paused when its breaker opens.

Every operation adds a column or a unique key, so no table is rebuilt. Endpoints in use before take their slots in
the order they were registered (``number_endpoints``), before the key is added. A wallet that registered more
than ``MAX_ENDPOINTS`` keeps them all (slots past the bound); a new endpoint takes one of the first
``MAX_ENDPOINTS`` slots, free again once an endpoint holding it is removed.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields
from tortoise.migrations.constraints import UniqueConstraint


async def number_endpoints(apps, editor) -> None:
    """Give each endpoint in use its slot: how many endpoints of the same wallet in use were registered before it."""
    await editor.client.execute_script(
        "UPDATE webhook_endpoint SET slot = (SELECT COUNT(*) FROM webhook_endpoint AS earlier "
        "WHERE earlier.wallet = webhook_endpoint.wallet AND earlier.deleted_at IS NULL "
        "AND (earlier.created_at < webhook_endpoint.created_at "
        "OR (earlier.created_at = webhook_endpoint.created_at AND earlier.id < webhook_endpoint.id))) "
        "WHERE deleted_at IS NULL")


class Migration(migrations.Migration):
    dependencies = [('models', '0023_rate_limits')]

    initial = False

    operations = [
        ops.AddField(
            model_name='WebhookEndpoint',
            name='consecutive_failures',
            field=fields.IntField(default=0, description='failed attempts since its last 2xx', db_default=0),
        ),
        ops.AddField(
            model_name='WebhookEndpoint',
            name='held_until',
            field=fields.DatetimeField(null=True, description='no attempt before: one in flight, or a backoff', auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='WebhookEndpoint',
            name='paused_at',
            field=fields.DatetimeField(null=True, description='when its circuit breaker opened, null while active', auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='WebhookEndpoint',
            name='slot',
            field=fields.SmallIntField(null=True, description="its place among the wallet's endpoints in use, null once removed"),
        ),
        ops.RunPython(number_endpoints, ops.RunPython.noop),
        ops.AddConstraint(
            model_name='WebhookEndpoint',
            constraint=UniqueConstraint(fields=('wallet', 'slot'), name=None),
        ),
    ]
