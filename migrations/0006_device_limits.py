"""Device limits for units and quiz tries: each response to a unit holds a slot of its device (``fingerprint_slot``,
unique per unit and fingerprint), and each wrong quiz try an attempt number of its device besides its wallet's
(``fingerprint`` and ``fingerprint_attempt``, unique per task and fingerprint).

Every operation adds a column or a unique index, so no table is rebuilt and the keys already there stay. Responses
recorded before are numbered per unit and device in the order they came (``number_device_responses``) before the
key is added, so a device that answered several times keeps all its answers, and they count against its limit.
Wrong tries recorded before have no device (NULL, which no unique key compares equal), so they count for their
wallet only.
"""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops
from tortoise.migrations.constraints import UniqueConstraint


async def number_device_responses(apps, editor) -> None:
    """Give each response its device's slot: how many responses of the same unit and fingerprint came before it."""
    await editor.client.execute_script(
        "UPDATE interaction SET fingerprint_slot = (SELECT COUNT(*) FROM interaction AS earlier "
        "WHERE earlier.unit_id = interaction.unit_id AND earlier.fingerprint = interaction.fingerprint "
        "AND (earlier.created_at < interaction.created_at "
        "OR (earlier.created_at = interaction.created_at AND earlier.id < interaction.id)))")


class Migration(migrations.Migration):
    dependencies = [('models', '0005_billing_windows')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Interaction',
            name='fingerprint_slot',
            field=fields.IntField(default=0, db_default=0),
        ),
        ops.RunPython(number_device_responses, ops.RunPython.noop),
        ops.AddConstraint(
            model_name='Interaction',
            constraint=UniqueConstraint(fields=('unit_id', 'fingerprint', 'fingerprint_slot'), name=None),
        ),
        ops.AddField(
            model_name='TaskAttempt',
            name='fingerprint',
            field=fields.CharField(null=True, max_length=128),
        ),
        ops.AddField(
            model_name='TaskAttempt',
            name='fingerprint_attempt',
            field=fields.IntField(null=True),
        ),
        ops.AddConstraint(
            model_name='TaskAttempt',
            constraint=UniqueConstraint(fields=('task_id', 'fingerprint', 'fingerprint_attempt'), name=None),
        ),
        ops.AlterModelOptions(
            name='TaskAttempt',
            options={'table': 'task_attempt', 'app': 'models', 'unique_together': (('task_id', 'wallet', 'attempt'), ('task_id', 'fingerprint', 'fingerprint_attempt')), 'pk_attr': 'id', 'table_description': 'A wrong QUIZ answer: attempt numbers are unique per wallet and per device, so both limits hold under concurrency.'},
        ),
    ]
