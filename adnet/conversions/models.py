"""The conversions reported for a campaign's goals (``adnet.campaigns.models.ConversionGoal``)."""

from __future__ import annotations

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import identifier, token_amount, wallet


class Conversion(Model):
    """One reported conversion, recorded once per campaign and order id (the database's unique key), with the click
    it was attributed to (or, for a view-through, the impression: ``attributed_via`` says which; with its site,
    placement, country and device, kept for reports after its raw event is deleted), the reason it was not attributed
    or not paid (null when paid or unpriced), and what it cost the campaign and earned the click's site. An attributed
    conversion of a proven wallet takes the next of
    its goal's ``wallet_cap`` slots for that wallet (a unique key too), so the cap holds across processes."""

    id = identifier()
    campaign_id = fields.CharField(max_length=48)
    goal = fields.ForeignKeyField("models.ConversionGoal", related_name="conversions", on_delete=fields.RESTRICT)
    goal_id: str
    order_id = fields.CharField(max_length=128)
    click_event_id = fields.CharField(max_length=48, null=True, description="the click's tracking_event id (a "
                                      "view-through's: its impression's)")
    attributed_via = fields.CharField(max_length=8, null=True, description="click or view: what it names (null "
                                      "without either)")
    site_id = fields.CharField(max_length=48, null=True, description="the click's site")
    creative_id = fields.CharField(max_length=48, null=True)
    placement = fields.CharField(max_length=64, default="", description="the click's placement label")
    country = fields.CharField(max_length=2, default="", description="the click's country, empty when unknown")
    device = fields.CharField(max_length=8, default="", description="the click's device kind, empty when unknown")
    wallet = wallet(null=True, description="a wallet the advertiser proved for the conversion")
    wallet_slot = fields.SmallIntField(null=True, description="which of the goal's conversions per wallet it is")
    value = token_amount(null=True, description="the order's value as the advertiser reported it")
    clicked_at = fields.DatetimeField(null=True, description="when its click (or impression) was recorded")
    occurred_at = fields.DatetimeField(description="when it happened, as reported (else when it was received)")
    received_at = fields.DatetimeField()
    attributed = fields.BooleanField(description="verified and attributed to its click: no fraud reason")
    paid = fields.BooleanField(default=False)
    reason = fields.CharField(max_length=32, null=True, description="why it was not attributed or not paid")
    cost = token_amount(default=0)
    publisher_amount = token_amount(default=0)

    class Meta:
        table = "conversion"
        unique_together = (("campaign_id", "order_id"), ("goal", "wallet", "wallet_slot"))
        indexes = (("campaign_id", "received_at"), ("site_id", "received_at"))


class ClickBinding(Model):
    """A wallet proven for a recorded click: the wallet signed the message naming the click's id
    (``adnet.conversions.binding``). One per click (the primary key): a click's wallet is the first one proven for
    it. The click's campaign, site and creative and when its id was issued come from the verified click id; an
    on-chain goal's event attributes through the binding of its wallet (``adnet.conversions.onchain``)."""

    click_event_id = fields.CharField(max_length=48, primary_key=True, description="the click's tracking_event id")
    campaign_id = fields.CharField(max_length=48)
    site_id = fields.CharField(max_length=48)
    creative_id = fields.CharField(max_length=48)
    wallet = wallet(description="the wallet that signed the binding message")
    clicked_at = fields.DatetimeField(description="when the click id was issued, as it says")
    bound_at = fields.DatetimeField()

    class Meta:
        table = "click_binding"
        indexes = (("wallet", "campaign_id", "clicked_at"),)


class ViewBinding(Model):
    """A wallet proven for a billed impression: the viewer's page held the wallet's rewards session (its SIWE
    sign-in) and posted the impression's tracking token from the client it was served to
    (``adnet.conversions.views``). One per impression (the primary key), the first wallet proven for it. An on-chain
    goal's event of a wallet proven for no click of the campaign may attribute through it, within the goal's view
    window (view-through)."""

    impression_event_id = fields.CharField(max_length=48, primary_key=True,
                                           description="the impression's tracking_event id")
    campaign_id = fields.CharField(max_length=48)
    site_id = fields.CharField(max_length=48)
    creative_id = fields.CharField(max_length=48)
    wallet = wallet(description="the wallet of the rewards session that posted it")
    seen_at = fields.DatetimeField(description="when the impression was recorded")
    bound_at = fields.DatetimeField()

    class Meta:
        table = "view_binding"
        indexes = (("wallet", "campaign_id", "seen_at"),)
