"""What the jobs keep in the database to coordinate processes: the leases that let one process of all workers and
hosts lead a job, and the changes each process announced, which the others read when no Redis carries them."""

from tortoise import fields
from tortoise.models import Model


class JobLease(Model):
    """Who runs the job ``name`` (``adnet.jobs.leases``): its holder (host, process id and a token of the process),
    until ``expires_at`` unless the holder renews it."""

    name = fields.CharField(max_length=32, primary_key=True)
    holder = fields.CharField(max_length=128)
    expires_at = fields.DatetimeField()

    class Meta:
        table = "job_lease"


class AnnouncedChange(Model):
    """The ids of what a process changed (``adnet.core.changes.announce``), for every other serving process of a
    deployment without Redis to read within a second (``adnet.jobs.changelog``). ``origin`` names the announcing
    process, which skips its own; rows are deleted once every process has had time to read them."""

    id = fields.BigIntField(primary_key=True)
    origin = fields.CharField(max_length=32)
    changed = fields.TextField(description="the ids announced, a JSON array")
    created_at = fields.DatetimeField(db_index=True)

    class Meta:
        table = "announced_change"
