"""What the jobs keep in the database: the leases that let one process of all workers and hosts lead a job."""

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
