"""Viewers' answers to standalone units: one response per unit and respondent, and multi-step survey sessions."""

from enum import StrEnum

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import identifier, token_amount, wallet


class SessionStatus(StrEnum):
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    ABANDONED = "abandoned"


class Interaction(Model):
    """A completed response. ``respondent`` is the wallet, or ``fp:<fingerprint>`` without one. The unique key
    (unit, respondent) makes "one response each" hold under concurrency; the device's slot makes the unit's
    ``max_per_fingerprint`` hold: the n-th response given on a device takes ``fingerprint_slot`` n - 1, whatever
    wallet it names, and no slot exists at the limit."""

    id = identifier()
    unit = fields.ForeignKeyField("models.Task", related_name="interactions", on_delete=fields.RESTRICT)
    unit_id: str
    site = fields.ForeignKeyField("models.Site", related_name="interactions", on_delete=fields.RESTRICT)
    site_id: str
    respondent = fields.CharField(max_length=140)
    wallet = wallet(null=True)
    fingerprint = fields.CharField(max_length=128)
    fingerprint_slot = fields.IntField(default=0, db_default=0)
    answers = fields.JSONField()
    points = fields.IntField(default=0)
    gs_amount = token_amount(default=0)
    claim = fields.OneToOneField("models.Claim", related_name="interaction", null=True, on_delete=fields.RESTRICT)
    claim_id: str | None
    created_at = fields.DatetimeField()

    class Meta:
        table = "interaction"
        unique_together = (("unit_id", "respondent"), ("unit_id", "fingerprint", "fingerprint_slot"))


class SurveySession(Model):
    """A survey in progress, bound to its unit, fingerprint and wallet, which expires 24 h after it opened."""

    id = identifier()
    unit = fields.ForeignKeyField("models.Task", related_name="survey_sessions", on_delete=fields.CASCADE)
    unit_id: str
    site = fields.ForeignKeyField("models.Site", related_name="survey_sessions", on_delete=fields.RESTRICT)
    site_id: str
    wallet = wallet(null=True)
    fingerprint = fields.CharField(max_length=128)
    answers = fields.JSONField(default=dict)
    step = fields.IntField(default=0)
    version = fields.IntField(default=0)
    status = fields.CharEnumField(SessionStatus, max_length=16, default=SessionStatus.IN_PROGRESS)
    created_at = fields.DatetimeField()
    expires_at = fields.DatetimeField()
    completed_at = fields.DatetimeField(null=True)

    class Meta:
        table = "survey_session"
