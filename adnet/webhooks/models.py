"""Webhook endpoints, the outbox of events, each event's delivery to each endpoint, and every attempt of it."""

from enum import StrEnum

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import identifier, wallet


class WebhookEventType(StrEnum):
    """What an account can be told about."""

    DEPOSIT_CREDITED = "deposit.credited"
    CAMPAIGN_APPROVED = "campaign.approved"
    CAMPAIGN_REJECTED = "campaign.rejected"
    CAMPAIGN_ENDED = "campaign.ended"
    CREATIVE_REJECTED = "creative.rejected"
    TASK_REJECTED = "task.rejected"
    WITHDRAWAL_REDEEMED = "withdrawal.redeemed"
    WITHDRAWAL_RELEASED = "withdrawal.released"
    SITE_VERIFIED = "site.verified"
    SITE_LAPSED = "site.lapsed"
    CONVERSION_RECORDED = "conversion.recorded"


class DeliveryStatus(StrEnum):
    """Where one event's delivery to one endpoint stands: still to be (re)tried, answered 2xx, or given up."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class WebhookEndpoint(Model):
    """A URL a wallet's account registered for some events, with the secret its deliveries are signed with (shown
    to the wallet once).

    ``slot`` bounds a wallet's endpoints in the database: an endpoint in use holds one of the wallet's
    ``MAX_ENDPOINTS`` slots (unique per wallet), a removed one none (``adnet.webhooks.endpoints``). ``held_until``
    is when the next attempt to it may begin: the lease of the attempt in flight, or the backoff after a failed
    one; ``paused_at`` is set when its circuit breaker opened (``adnet.webhooks.delivery``)."""

    id = identifier()
    wallet = wallet(db_index=True)
    url = fields.CharField(max_length=2048)
    events = fields.CharField(max_length=400, description="the event types it receives, separated by spaces")
    secret = fields.CharField(max_length=64, description="the HMAC key of its signatures")
    created_at = fields.DatetimeField()
    deleted_at = fields.DatetimeField(null=True)
    slot = fields.SmallIntField(null=True, description="its place among the wallet's endpoints in use, null once "
                                                       "removed")
    consecutive_failures = fields.IntField(default=0, db_default=0, description="failed attempts since its last 2xx")
    held_until = fields.DatetimeField(null=True, description="no attempt before: one in flight, or a backoff")
    paused_at = fields.DatetimeField(null=True, description="when its circuit breaker opened, null while active")

    class Meta:
        table = "webhook_endpoint"
        unique_together = (("wallet", "slot"),)


class WebhookEvent(Model):
    """One event of a wallet's account, written in the transaction of what it reports (the outbox)."""

    id = identifier()
    wallet = wallet(db_index=True)
    type = fields.CharEnumField(WebhookEventType, max_length=32)
    payload = fields.JSONField(description="the event's data, as the body's ``data``")
    created_at = fields.DatetimeField()

    class Meta:
        table = "webhook_event"


class WebhookDelivery(Model):
    """One event to one endpoint: tried until it is answered 2xx or ``MAX_ATTEMPTS`` attempts failed. A worker
    takes it by a conditional update of ``attempts`` (``adnet.webhooks.delivery``)."""

    id = identifier()
    event = fields.ForeignKeyField("models.WebhookEvent", related_name="deliveries", on_delete=fields.CASCADE)
    event_id: str
    endpoint = fields.ForeignKeyField("models.WebhookEndpoint", related_name="deliveries",
                                      on_delete=fields.CASCADE)
    endpoint_id: str
    status = fields.CharEnumField(DeliveryStatus, max_length=16, default=DeliveryStatus.PENDING)
    attempts = fields.IntField(default=0, description="attempts started")
    next_attempt_at = fields.DatetimeField(db_index=True)
    delivered_at = fields.DatetimeField(null=True)

    class Meta:
        table = "webhook_delivery"
        unique_together = (("event", "endpoint"),)


class WebhookAttempt(Model):
    """One attempt of a delivery: when, and the endpoint's answer or why there was none. One row per attempt number
    (unique), however many workers or restarts."""

    id = identifier()
    delivery = fields.ForeignKeyField("models.WebhookDelivery", related_name="attempt_log", on_delete=fields.CASCADE)
    delivery_id: str
    number = fields.IntField()
    attempted_at = fields.DatetimeField()
    status_code = fields.IntField(null=True)
    error = fields.CharField(max_length=300, default="")

    class Meta:
        table = "webhook_attempt"
        unique_together = (("delivery", "number"),)
