"""CTA tasks and units as advertisers configure them, and what viewers do with them: completions with their
limits, the visits and message nonces proofs use up, and wrong quiz answers."""

from enum import StrEnum

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import identifier, token_amount, wallet


class TaskKind(StrEnum):
    VISIT_URL = "VISIT_URL"
    SIGN_MESSAGE = "SIGN_MESSAGE"
    ONCHAIN_EVENT = "ONCHAIN_EVENT"
    QUIZ = "QUIZ"
    POLL = "POLL"
    FEEDBACK = "FEEDBACK"
    SURVEY = "SURVEY"


class TaskSurface(StrEnum):
    ATTACHED = "attached"
    STANDALONE = "standalone"


class Task(Model):
    """A CTA task attached to a campaign's banner, or a standalone unit (poll, feedback, survey).

    ``config`` holds the advertiser's settings, secrets included (quiz answers): it never leaves the server as is.
    The G$ pool is the task's ledger account."""

    id = identifier()
    advertiser = fields.ForeignKeyField("models.Advertiser", related_name="tasks", on_delete=fields.RESTRICT)
    advertiser_id: str
    campaign = fields.ForeignKeyField("models.Campaign", related_name="tasks", null=True, on_delete=fields.CASCADE)
    campaign_id: str | None
    kind = fields.CharEnumField(TaskKind, max_length=16)
    surface = fields.CharEnumField(TaskSurface, max_length=16)
    title = fields.CharField(max_length=200)
    description = fields.CharField(max_length=1000, default="")
    config = fields.JSONField(default=dict)
    reward_points = fields.IntField(default=0)
    reward_gs = token_amount(default=0)
    max_per_wallet = fields.IntField(default=1)
    max_per_fingerprint = fields.IntField(default=1)
    starts_at = fields.DatetimeField()
    ends_at = fields.DatetimeField(null=True)
    active = fields.BooleanField(default=True)
    rejection_reason = fields.CharField(max_length=500, default="", db_default="",
                                        description="why an operator rejected it in review (it is then inactive)")
    created_at = fields.DatetimeField()

    class Meta:
        table = "task"


class Completion(Model):
    """A verified completion. The slots make the per-wallet and per-fingerprint limits unique keys: the n-th
    completion by a wallet takes slot n, and a slot at the limit does not exist."""

    id = identifier()
    task = fields.ForeignKeyField("models.Task", related_name="completions", on_delete=fields.RESTRICT)
    task_id: str
    wallet = wallet()
    fingerprint = fields.CharField(max_length=128)
    wallet_slot = fields.IntField(default=0)
    fingerprint_slot = fields.IntField(default=0)
    site = fields.ForeignKeyField("models.Site", related_name="completions", null=True, on_delete=fields.RESTRICT)
    site_id: str | None
    tx_hash = fields.CharField(max_length=66, null=True, unique=True,
                               description="ONCHAIN_EVENT proof - each transaction counts once")
    points = fields.IntField()
    gs_amount = token_amount()
    claim = fields.OneToOneField("models.Claim", related_name="completion", null=True, on_delete=fields.RESTRICT)
    claim_id: str | None
    created_at = fields.DatetimeField()

    class Meta:
        table = "completion"
        unique_together = (("task_id", "wallet", "wallet_slot"), ("task_id", "fingerprint", "fingerprint_slot"))


class TaskVisit(Model):
    """Where a VISIT_URL dwell starts: recorded by our redirect, never by the client."""

    id = fields.BigIntField(primary_key=True)
    task = fields.ForeignKeyField("models.Task", related_name="visits", on_delete=fields.CASCADE)
    task_id: str
    fingerprint = fields.CharField(max_length=128)
    started_at = fields.DatetimeField()

    class Meta:
        table = "task_visit"
        unique_together = (("task_id", "fingerprint"),)


class TaskMessageNonce(Model):
    """A single-use nonce for a SIGN_MESSAGE task, issued to one wallet."""

    nonce = fields.CharField(max_length=32, primary_key=True)
    task = fields.ForeignKeyField("models.Task", related_name="message_nonces", on_delete=fields.CASCADE)
    task_id: str
    wallet = wallet()
    created_at = fields.DatetimeField()
    expires_at = fields.DatetimeField()
    used_at = fields.DatetimeField(null=True)

    class Meta:
        table = "task_message_nonce"


class TaskAttempt(Model):
    """A wrong QUIZ answer: attempt numbers are unique per wallet and per device, so both limits hold under concurrency.

    Each try holds a number of its wallet (``attempt``) and one of its device (``fingerprint_attempt``); tries
    recorded before devices were counted have neither ``fingerprint`` nor its number."""

    id = fields.BigIntField(primary_key=True)
    task = fields.ForeignKeyField("models.Task", related_name="attempts", on_delete=fields.CASCADE)
    task_id: str
    wallet = wallet()
    attempt = fields.IntField()
    fingerprint = fields.CharField(max_length=128, null=True)
    fingerprint_attempt = fields.IntField(null=True)
    created_at = fields.DatetimeField()

    class Meta:
        table = "task_attempt"
        unique_together = (("task_id", "wallet", "attempt"), ("task_id", "fingerprint", "fingerprint_attempt"))
