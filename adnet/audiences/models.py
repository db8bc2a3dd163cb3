"""What adnet keeps about a wallet a viewer proved, for wallet audiences (``adnet.audiences``)."""

from __future__ import annotations

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import wallet


class AudienceWallet(Model):
    """A wallet its viewer proved (the rewards sign-in), and which audience rules (``adnet.campaigns.audiences``
    keys) it was found to match: ``evaluated`` the keys asked, ``matched`` those that held, both as of
    ``evaluated_at`` and believed until ``expires_at``. ``opted_out``: the viewer switched wallet targeting off;
    nothing is evaluated or kept for it then but the choice. A wallet not proven again within the audience window
    is deleted by the audience job."""

    wallet = wallet(primary_key=True)
    proven_at = fields.DatetimeField(description="when the viewer last proved the wallet")
    evaluated_at = fields.DatetimeField(null=True)
    expires_at = fields.DatetimeField(null=True, description="when the evaluation stops counting")
    evaluated = fields.JSONField(default=list, description="the rule keys the evaluation asked")
    matched = fields.JSONField(default=list, description="the rule keys the wallet matched")
    rules_digest = fields.CharField(max_length=64, default="", description="a digest of the keys evaluated")
    opted_out = fields.BooleanField(default=False, description="the viewer switched wallet targeting off")

    class Meta:
        table = "audience_wallet"
        indexes = (("opted_out", "evaluated_at"), ("proven_at",))
