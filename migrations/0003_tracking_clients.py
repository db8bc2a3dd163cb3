from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

from adnet.delivery.clients import network


async def addresses_to_networks(apps, editor) -> None:
    """Keep only the network of each address already stored (an IPv4 /24 or IPv6 /48), then drop the addresses."""
    client = editor.client
    marks = ("$1", "$2") if client.capabilities.dialect == "postgres" else ("?", "?")
    rows = await client.execute_query_dict("SELECT DISTINCT ip FROM tracking_event WHERE ip <> ''")
    for row in rows:
        await client.execute_query(
            f"UPDATE tracking_event SET client_network = {marks[0]} WHERE ip = {marks[1]}", [network(row["ip"]), row["ip"]])

class Migration(migrations.Migration):
    dependencies = [('models', '0002_campaigns')]

    initial = False

    operations = [
        ops.AlterField(
            model_name='TrackingEvent',
            name='user_agent',
            field=fields.CharField(default='', description="the request's User-Agent header", max_length=512),
        ),
        ops.AddField(
            model_name='TrackingEvent',
            name='client_network',
            field=fields.CharField(default='', description="the client's IPv4 /24 or IPv6 /48, never its address", max_length=45),
        ),
        ops.AddField(
            model_name='TrackingEvent',
            name='reported_user_agent',
            field=fields.CharField(null=True, description='the userAgent the page reported, kept as information only', max_length=512),
        ),
        ops.RunPython(addresses_to_networks, ops.RunPython.noop),
        ops.RemoveField(model_name='TrackingEvent', name='ip'),
    ]
