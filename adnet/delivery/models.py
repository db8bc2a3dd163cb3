"""What happened on publishers' pages: tracking events, the deduplication keys, and daily counters; and the ad units
publishers define for their pages."""

from enum import StrEnum

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import identifier, token_amount, wallet


class EventType(StrEnum):
    IMPRESSION = "IMPRESSION"
    CLICK = "CLICK"


class TrackingEvent(Model):
    """One accepted impression or click, billable or not (with the named reason it was not)."""

    id = identifier()
    type = fields.CharEnumField(EventType, max_length=16)
    campaign = fields.ForeignKeyField("models.Campaign", related_name="events", on_delete=fields.RESTRICT)
    campaign_id: str
    creative = fields.ForeignKeyField("models.Creative", related_name="events", on_delete=fields.RESTRICT)
    creative_id: str
    site = fields.ForeignKeyField("models.Site", related_name="events", on_delete=fields.RESTRICT)
    site_id: str
    fingerprint = fields.CharField(max_length=128)
    wallet = wallet(null=True)
    placement = fields.CharField(max_length=64, default="")
    token_ref = fields.CharField(max_length=64, null=True, db_index=True,
                                 description="digest of the tracking token, to pair a click with its impression")
    rendered = fields.BooleanField()
    viewport_visible = fields.BooleanField()
    render_time_ms = fields.IntField(null=True)
    client_timestamp_ms = fields.BigIntField(null=True)
    page_url = fields.CharField(max_length=2048, default="")
    user_agent = fields.CharField(max_length=512, default="", description="the request's User-Agent header")
    reported_user_agent = fields.CharField(max_length=512, null=True,
                                           description="the userAgent the page reported, kept as information only")
    client_network = fields.CharField(max_length=45, default="",
                                      description="the client's IPv4 /24 or IPv6 /48, never its address")
    country = fields.CharField(max_length=2, default="", description="where the client was located (ISO 3166-1 "
                                                                     "alpha-2), empty when unknown")
    device = fields.CharField(max_length=8, default="", description="desktop, mobile or tablet, from the request's "
                                                                    "User-Agent")
    billable = fields.BooleanField()
    refusal_reason = fields.CharField(max_length=32, null=True)
    audience_group = fields.SmallIntField(
        default=0, db_default=0,
        description="the audience rule group (1 the first) that admitted the viewer at serving, 0 for none")
    consent_limited = fields.BooleanField(
        default=False, db_default=False, description="the page's consent signals did not let adnet keep a viewer id: "
                                                     "none is stored, and no per-viewer state was derived from it")
    cost = token_amount(default=0)
    publisher_amount = token_amount(default=0)
    received_at = fields.DatetimeField()
    viewer_key = fields.CharField(max_length=32, null=True,
                                  description="the viewer's digest in its campaign (adnet.delivery.reach)")
    recorded_at = fields.DatetimeField(null=True, description="when its batch was written, the reach job's cursor")

    class Meta:
        table = "tracking_event"
        indexes = (("site_id", "received_at"), ("campaign_id", "received_at"), ("received_at",), ("recorded_at",))


class DedupKey(Model):
    """The last accepted event per fingerprint + campaign + type. Accepting an event is one conditional write
    on this row (insert, or move ``last_accepted_at`` only when the window has passed)."""

    id = fields.BigIntField(primary_key=True)
    fingerprint = fields.CharField(max_length=128)
    campaign_id = fields.CharField(max_length=48)
    type = fields.CharEnumField(EventType, max_length=16)
    last_accepted_at = fields.DatetimeField()

    class Meta:
        table = "dedup_key"
        unique_together = (("fingerprint", "campaign_id", "type"),)
        indexes = (("last_accepted_at",),)


class AdUnit(Model):
    """A named slot a publisher defines for a site (``adnet.delivery.ad_units``): what may fill it, at which size,
    with attached tasks or not, under which placement label, with house ads or not; the portal writes its embed
    snippet from it."""

    id = identifier()
    site = fields.ForeignKeyField("models.Site", related_name="ad_units", on_delete=fields.CASCADE)
    site_id: str
    name = fields.CharField(max_length=120)
    kinds = fields.JSONField(description="what may fill it: BANNER, POLL, FEEDBACK, SURVEY (at least one)")
    size = fields.CharField(max_length=16, null=True, description="the banner size WIDTHxHEIGHT, null when responsive")
    attached_tasks = fields.BooleanField(default=False, description="a banner shows its attached tasks")
    placement = fields.CharField(max_length=64, default="", description="the placement label serving receives")
    house_ads = fields.BooleanField(default=True, description="a banner slot no paid campaign fills shows a house ad")
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    class Meta:
        table = "ad_unit"
        unique_together = (("site_id", "name"),)


class SiteDailyStat(Model):
    """Per site and UTC day: serve decisions (for fill rate) and event counts. Rebuildable from raw events."""

    id = fields.BigIntField(primary_key=True)
    site = fields.ForeignKeyField("models.Site", related_name="daily_stats", on_delete=fields.CASCADE)
    site_id: str
    day = fields.DateField()
    requests = fields.IntField(default=0)
    filled = fields.IntField(default=0)
    impressions = fields.IntField(default=0)
    billable_impressions = fields.IntField(default=0)
    clicks = fields.IntField(default=0)
    billable_clicks = fields.IntField(default=0)

    class Meta:
        table = "site_daily_stat"
        unique_together = (("site_id", "day"),)


class RequestHour(Model):
    """How many serve requests one UTC hour brought for a site, banner size (empty: any), country (empty: unknown)
    and device kind: counted in memory by serving (``adnet.delivery.requests``), added here by the counters' job, kept
    ``REQUEST_DAYS`` days. Never a request, a viewer or an address: only these counts (docs/privacy.md)."""

    id = fields.BigIntField(primary_key=True)
    site_id = fields.CharField(max_length=48)
    hour = fields.DatetimeField(db_index=True)
    size = fields.CharField(max_length=20, default="")
    country = fields.CharField(max_length=2, default="")
    device = fields.CharField(max_length=10, default="")
    requests = fields.IntField(default=0)

    class Meta:
        table = "request_hour"
        unique_together = (("site_id", "hour", "size", "country", "device"),)


class BillingWindow(Model):
    """What was billed in one window for one key (``adnet.delivery.caps``): events of a client network on a site
    or for a campaign, or a campaign's spend in a UTC day (smallest units)."""

    id = fields.BigIntField(primary_key=True)
    key = fields.CharField(max_length=200)
    window_start = fields.DatetimeField(db_index=True)
    used = token_amount(default=0)

    class Meta:
        table = "billing_window"
        unique_together = (("key", "window_start"),)


class TrafficDaily(Model):
    """Per UTC day, site, campaign and event type: how many recorded events were billed (``reason`` empty) or kept
    from billing by each named reason, with what the billed ones cost and earned. Added to by every tracking batch
    in its transaction; outlives the raw events (``adnet.delivery.retention``)."""

    id = fields.BigIntField(primary_key=True)
    day = fields.DateField()
    site = fields.ForeignKeyField("models.Site", related_name="traffic", on_delete=fields.RESTRICT)
    site_id: str
    campaign = fields.ForeignKeyField("models.Campaign", related_name="traffic", on_delete=fields.RESTRICT)
    campaign_id: str
    type = fields.CharEnumField(EventType, max_length=16)
    reason = fields.CharField(max_length=32, default="", description="empty for billed events")
    events = fields.IntField(default=0)
    cost = token_amount(default=0)
    publisher_amount = token_amount(default=0)

    class Meta:
        table = "traffic_daily"
        unique_together = (("day", "site_id", "campaign_id", "type", "reason"),)
        indexes = (("campaign_id", "day"),)


class HouseAd(Model):
    """A publisher's own promotion for one of its sites (``adnet.delivery.house_ads``): shown in a banner slot that no
    paid campaign fills; its impressions and clicks are counted (``HouseAdDaily``), never billed."""

    id = identifier()
    site = fields.ForeignKeyField("models.Site", related_name="house_ads", on_delete=fields.CASCADE)
    site_id: str
    banner_url = fields.CharField(max_length=2048)
    target_url = fields.CharField(max_length=2048)
    description = fields.CharField(max_length=500, default="")
    width = fields.IntField()
    height = fields.IntField()
    created_at = fields.DatetimeField()

    class Meta:
        table = "house_ad"
        indexes = (("site_id", "created_at"),)


class HouseAdDaily(Model):
    """Per UTC day, house ad and event type: how many impressions or clicks the site's pages reported for one of its
    house ads (``adnet.delivery.house_ads.record_house_event``). Counted, never billed: nothing here moves money."""

    id = fields.BigIntField(primary_key=True)
    day = fields.DateField()
    site = fields.ForeignKeyField("models.Site", related_name="house_ad_days", on_delete=fields.CASCADE)
    site_id: str
    house_ad_id = fields.CharField(max_length=48, description="kept after the house ad is deleted")
    type = fields.CharEnumField(EventType, max_length=16)
    events = fields.IntField(default=0)

    class Meta:
        table = "house_ad_daily"
        unique_together = (("day", "house_ad_id", "type"),)
        indexes = (("site_id", "day"),)


class ReportDaily(Model):
    """Per UTC day, campaign, site, placement, country and device: the billed impressions and clicks, what they cost
    the campaign and earned the site (``adnet.reporting.breakdowns``). Added to by every tracking batch in its
    transaction; rebuilt from the raw events by ``adnet reports rebuild``."""

    id = fields.BigIntField(primary_key=True)
    day = fields.DateField()
    campaign = fields.ForeignKeyField("models.Campaign", related_name="report_days", on_delete=fields.RESTRICT)
    campaign_id: str
    site = fields.ForeignKeyField("models.Site", related_name="report_days", on_delete=fields.RESTRICT)
    site_id: str
    placement = fields.CharField(max_length=64, default="")
    country = fields.CharField(max_length=2, default="", description="empty when unknown")
    device = fields.CharField(max_length=8, default="")
    impressions = fields.IntField(default=0)
    clicks = fields.IntField(default=0)
    cost = token_amount(default=0)
    publisher_amount = token_amount(default=0)

    class Meta:
        table = "report_daily"
        unique_together = (("day", "campaign_id", "site_id", "placement", "country", "device"),)
        indexes = (("campaign_id", "day"), ("site_id", "day"))


class ReachViewerDaily(Model):
    """Per UTC day, campaign, creative, site and viewer (a per-campaign digest of the viewer id, never the id):
    the billed impressions (``adnet.delivery.reach``), what unique reach and frequency are counted from. Kept for
    the longest report range, then deleted (``adnet.delivery.retention``)."""

    id = fields.BigIntField(primary_key=True)
    day = fields.DateField()
    campaign_id = fields.CharField(max_length=48)
    creative_id = fields.CharField(max_length=48)
    site_id = fields.CharField(max_length=48)
    viewer_key = fields.CharField(max_length=32, description="SHA-256 of the campaign and the viewer id, 128 bits")
    impressions = fields.IntField(default=0)

    class Meta:
        table = "reach_viewer_daily"
        unique_together = (("day", "campaign_id", "creative_id", "site_id", "viewer_key"),)
        indexes = (("campaign_id", "day"),)


class ReachCursor(Model):
    """How far the reach job (``adnet.delivery.reach``) has counted ``tracking_event``: every event recorded before
    ``recorded_at``, and at that moment those up to ``event_id``: one row, kept across restarts."""

    name = fields.CharField(max_length=32, primary_key=True)
    recorded_at = fields.DatetimeField()
    event_id = fields.CharField(max_length=48)

    class Meta:
        table = "reach_cursor"


class DecisionSample(Model):
    """One serve decision of the few each process samples (``adnet.delivery.explainer``): the slot, the viewer's
    country and device, what it showed, and the first rule that kept out each campaign of the index (an empty
    reason: it was a candidate). Kept ``SAMPLES_KEPT`` (``adnet.delivery.retention``)."""

    id = fields.BigIntField(primary_key=True)
    decided_at = fields.DatetimeField(db_index=True)
    site_id = fields.CharField(max_length=48)
    placement = fields.CharField(max_length=64, default="")
    size = fields.CharField(max_length=16, default="")
    country = fields.CharField(max_length=8, default="")
    device = fields.CharField(max_length=16, default="")
    outcome = fields.CharField(max_length=48, description="the campaign shown, or the kind (HOUSE, NONE, a unit's)")
    verdicts = fields.JSONField(default=dict, description="campaign id → first excluding rule ('' for a candidate)")
    filtered = fields.CharField(max_length=32, default="",
                                description="the tracking filter's reason its events would not be billed, if any")

    class Meta:
        table = "decision_sample"
        indexes = (("site_id", "decided_at"),)
