"""The jobs' leases (``adnet.jobs.leases``): one process of all workers and hosts on a database leads the chain
watcher, the others stand by."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0007_tracking_event_indexes')]

    initial = False

    operations = [
        ops.CreateModel(
            name='JobLease',
            fields=[
                ('name', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=32)),
                ('holder', fields.CharField(max_length=128)),
                ('expires_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'job_lease', 'app': 'models', 'pk_attr': 'name', 'table_description': 'Who runs the job ``name`` (``adnet.jobs.leases``): its holder (host, process id and a token of the process),'},
            bases=['Model'],
        ),
    ]
