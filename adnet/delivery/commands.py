"""What a publisher's page asks of delivery: a serve query, a header-bidding auction's bids, and an impression or
click it reports."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator

from adnet.audiences.passes import MAX_PASS_LENGTH
from adnet.campaigns.commands import MAX_LIST, MAX_PLACEMENT_LENGTH, Description, Placement
from adnet.campaigns.targeting import normalize_keyword
from adnet.core.inputs import Command, Fingerprint, Price, Size, WalletAddress, WebUrl, rule
from adnet.delivery.consent import GPP_STRING, MAX_CONSENT_LENGTH, TC_STRING
from adnet.delivery.models import EventType
from adnet.delivery.tokens import MAX_TOKEN_LENGTH
from adnet.tasks.models import TaskKind

BANNER = "BANNER"
KINDS = (BANNER, TaskKind.POLL.value, TaskKind.FEEDBACK.value, TaskKind.SURVEY.value)
MAX_ID_LENGTH = 48
MAX_USER_AGENT_LENGTH = 512
MAX_PAGE_KEYWORDS = 20


def _kinds(value: Any) -> frozenset[str]:
    kinds = frozenset(part.strip().upper() for part in value.split(",")) if isinstance(value, str) else frozenset()
    if not kinds or not kinds <= set(KINDS):
        raise rule("invalid_field", f"a comma-separated list of {', '.join(KINDS)}")
    return kinds


def _keywords(value: Any) -> frozenset[str]:
    parts = [part for part in value.split(",") if part.strip()] if isinstance(value, str) else [value]
    if len(parts) > MAX_PAGE_KEYWORDS:
        raise rule("invalid_keyword", f"at most {MAX_PAGE_KEYWORDS} keywords")
    return frozenset(normalize_keyword(part) for part in parts)


def _switch(value: Any) -> bool:
    if value not in ("0", "1"):
        raise rule("invalid_field", "0 or 1, or leave it out")
    return bool(value == "1")


def _gdpr(value: Any) -> bool | None:
    if value is None or value == "":
        return None
    if value not in (0, 1, "0", "1"):  # True and False too (as the spool writes it back)
        raise rule("invalid_field", "1 when GDPR applies, 0 when it does not, or leave it out")
    return value in (1, "1")


MAX_GPP_SIDS = 32


def _section_ids(value: Any) -> tuple[int, ...] | None:
    if value is None or value == "":
        return None
    parts = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else None
    try:
        ids = tuple(int(part) for part in parts) if parts is not None and len(parts) <= MAX_GPP_SIDS else None
    except (TypeError, ValueError):
        ids = None
    if ids is None or not all(-1 <= section_id <= 255 for section_id in ids):
        raise rule("invalid_field", f"comma-separated GPP section ids (-1 to 255, at most {MAX_GPP_SIDS})")
    return ids


def _text_or_none(value: Any) -> Any:
    return value or None


class ConsentSignals(Command):
    """The page's consent signals, as its consent management platform gave them to the embed (the rule they feed:
    ``adnet.delivery.consent.limitation``)."""

    gdpr: Annotated[bool | None, BeforeValidator(_gdpr), WithJsonSchema(
        {"enum": [0, 1, "0", "1"], "description": "1: GDPR applies to the request, 0: it does not (TCF gdprApplies)"}
    )] = None
    gdpr_consent: Annotated[str | None, BeforeValidator(_text_or_none)] = Field(
        default=None, max_length=MAX_CONSENT_LENGTH, pattern=TC_STRING.pattern,
        description="the IAB TCF v2.2 consent string (TC string) of the page's CMP")
    gpp: Annotated[str | None, BeforeValidator(_text_or_none)] = Field(
        default=None, max_length=MAX_CONSENT_LENGTH, pattern=GPP_STRING.pattern,
        description="the IAB GPP string of the page's CMP")
    gpp_sid: Annotated[tuple[int, ...] | None, BeforeValidator(_section_ids), WithJsonSchema(
        {"type": "string", "examples": ["7,8"],
         "description": "the GPP section ids that apply, comma-separated (GPP applicableSections)"})] = None


class ServeQuery(ConsentSignals):
    """The query string of ``GET /api/serve``."""

    site_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH, description="site asking for content")
    kinds: Annotated[frozenset[str], BeforeValidator(_kinds), WithJsonSchema(
        {"type": "string", "default": BANNER, "description": f"comma-separated {', '.join(KINDS)}"})] = Field(
        frozenset({BANNER}), alias="kind")
    size: Size | None = Field(None, description="only creatives of this size")
    placement: str = Field("", max_length=MAX_PLACEMENT_LENGTH, description="free-form label for analytics")
    wallet: WalletAddress | None = Field(None, description="binds the tracking token to this wallet")
    attached: Annotated[bool, BeforeValidator(_switch), WithJsonSchema({"type": "string", "enum": ["0", "1"]})] = \
        Field(False, description="1: include up to two attached CTA tasks")
    house: Annotated[bool, BeforeValidator(_switch), WithJsonSchema(
        {"type": "string", "enum": ["0", "1"], "default": "1"})] = Field(
        True, description="0: a banner slot no paid campaign fills stays empty instead of showing a house ad")
    viewer: Fingerprint | None = Field(None, description="the embed's viewer id, for campaigns' frequency caps")
    keywords: Annotated[frozenset[str], BeforeValidator(_keywords), WithJsonSchema(
        {"type": "string", "examples": ["defi,wallets"],
         "description": f"the page's keywords, comma-separated (at most {MAX_PAGE_KEYWORDS})"})] = Field(
        frozenset(), description="the page's keywords, for campaigns that target or exclude them")
    audience: str | None = Field(None, max_length=MAX_PASS_LENGTH, description=(
        "the audience pass of the viewer's proven wallet (the rewards sign-in's audiencePass), for campaigns "
        "with wallet audiences"))
    injected_wallet: Annotated[bool, BeforeValidator(_switch), WithJsonSchema(
        {"type": "string", "enum": ["0", "1"]})] = Field(
        False, description="1: the page found a wallet extension (window.ethereum); a weak signal that proves nothing")

    @field_validator("size", "wallet", "viewer", "audience", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return value or None


class TrackEvent(ConsentSignals):
    """An impression or click as the embed reports it; ``renderTime`` and ``timestamp`` are milliseconds."""

    model_config = ConfigDict(strict=True, extra="forbid")

    type: EventType = Field(strict=False)
    campaign_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH)
    ad_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH)
    site_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH)
    fingerprint: Fingerprint
    rendered: bool = False
    viewport_visible: bool = False
    render_time: float | None = Field(None, ge=0, le=3_600_000)
    timestamp: int | None = Field(None, ge=0, le=10**14)
    page_url: str = Field("", max_length=2048)
    user_agent: str | None = Field(None, max_length=MAX_USER_AGENT_LENGTH)
    tracking_token: str | None = Field(None, min_length=1, max_length=MAX_TOKEN_LENGTH)

    @field_validator("page_url")
    @classmethod
    def _absolute(cls, value: str) -> str:
        parts = urlsplit(value)
        if value and (parts.scheme not in ("http", "https") or not parts.netloc):
            raise rule("invalid_field", "an absolute http(s) URL")
        return value


MAX_BIDS = 20
MAX_BID_SIZES = 10


class BidSlot(Command):
    """One ad unit of the auction, as Prebid names it: its bid id, code, banner sizes and floor."""

    bid_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH, description="Prebid's bidId, echoed in the bid")
    ad_unit_code: str = Field("", max_length=256, description="the ad unit's code, for logs")
    sizes: list[Size] = Field(min_length=1, max_length=MAX_BID_SIZES, description="banner sizes, preferred first")
    placement: str = Field("", max_length=MAX_PLACEMENT_LENGTH,
                           description="adnet placement label (floors, targeting, reports)")
    floor: float | None = Field(None, ge=0, le=1_000_000, description="the auction's floor CPM, net")
    floor_currency: str | None = Field(None, max_length=8, description="the floor's currency (Prebid's getFloor)")


class BidRequest(ConsentSignals):
    """What Prebid.js's adnet bidder asks for one site: its ad units, the page, the viewer id it may keep, and the
    page's consent strings, under the names and rules the embed sends them with (``ConsentSignals``)."""

    site_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH, description="the adnet site the page belongs to")
    page_url: WebUrl | None = Field(None, description="the page the auction runs on (Prebid's refererInfo.page)")
    viewer: Fingerprint | None = Field(None, description="the viewer id for frequency caps; left out without "
                                                         "consent to store it")
    bids: list[BidSlot] = Field(min_length=1, max_length=MAX_BIDS)

    @field_validator("bids")
    @classmethod
    def _distinct(cls, bids: list[BidSlot]) -> list[BidSlot]:
        if len({slot.bid_id for slot in bids}) != len(bids):
            raise rule("invalid_field", "each bidId once")
        return bids


class HouseEvent(Command):
    """An impression or click of a house ad as the embed reports it: only counted, never billed."""

    model_config = ConfigDict(strict=True, extra="forbid")

    type: EventType = Field(strict=False)
    site_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH)
    house_ad_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH)


class NewHouseAd(Command):
    """A publisher's own banner for its site, checked as a campaign's creative is: an http(s) image and landing
    page, a description, a size."""

    banner_url: WebUrl
    target_url: WebUrl
    description: Description = ""
    size: Size


class SiteFloors(Command):
    """A site's floors, G$ per 1000 impressions: ``floorCpm`` for the whole site ("0" for none), and per placement
    label a floor that replaces it there. Both are replaced whole."""

    floor_cpm: Price = Field(0, description="the least eCPM a paid campaign must offer here; 0 = none")
    placement_floors: dict[Placement, Price] = Field(
        {}, max_length=MAX_LIST, description="placement label -> its floor, replacing floorCpm there")


MAX_EXPLAIN_HOURS = 168


class ExplainQuery(Command):
    """What the decision explainer is asked (``adnet.delivery.explainer``): a slot (the site, unless the path names
    it; a placement; a size), a viewer (a country, a device, an operating system, the page's keywords), and either
    now (``hours`` left out) or the sampled decisions of the last ``hours``."""

    site_id: str | None = Field(None, min_length=1, max_length=MAX_ID_LENGTH, description="the site of the slot")
    placement: str = Field("", max_length=MAX_PLACEMENT_LENGTH, description="the slot's placement label")
    size: Size | None = Field(None, description="the slot's size, such as 300x250")
    country: str | None = Field(None, pattern=r"^[A-Za-z]{2}$", description="the viewer's country (ISO code)")
    device: Literal["desktop", "mobile", "tablet"] | None = Field(None, description="the viewer's device")
    os: Literal["windows", "macos", "ios", "android", "linux", "chromeos", "other"] | None = Field(
        None, description="the viewer's operating system")
    keywords: Annotated[frozenset[str], BeforeValidator(_keywords), WithJsonSchema(
        {"type": "string", "examples": ["defi,wallets"], "description": "the page's keywords, comma-separated"})] = \
        Field(frozenset(), description="the page's keywords")
    hours: int | None = Field(None, ge=1, le=MAX_EXPLAIN_HOURS, description=(
        f"answer from the decisions sampled in the last 1 to {MAX_EXPLAIN_HOURS} hours instead of now"))

    @field_validator("size", "site_id", "country", "device", "os", "hours", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return value or None
