"""Who takes part: publishers and their sites (and which site holds a domain verified), advertisers, and wallet
sign-in (SIWE nonces, sessions)."""

import secrets
from enum import StrEnum

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import identifier, token_amount, wallet


class SiteState(StrEnum):
    """Where a site stands with its domain: never proven, proven now, or proven once and no longer."""

    UNVERIFIED = "unverified"
    VERIFIED = "verified"
    LAPSED = "lapsed"


class ProofMethod(StrEnum):
    """How a site proved its domain: a meta tag on its home page, ``/.well-known/adnet.txt``, an ``ads.txt`` line,
    or (development demo data only) by decree."""

    META_TAG = "meta_tag"
    WELL_KNOWN = "well_known"
    ADS_TXT = "ads_txt"
    DEMO = "demo"


def new_verification_token() -> str:
    """A site's verification token: 128 random bits in hex, what its owner publishes on the domain."""
    return secrets.token_hex(16)


class Publisher(Model):
    """A site owner, identified by the wallet that signs in."""

    id = identifier()
    wallet = wallet(unique=True)
    created_at = fields.DatetimeField()
    confidential = fields.BooleanField(default=False, db_default=False,
                                       description="sellers.json lists it without name or domain")

    class Meta:
        table = "publisher"


class Site(Model):
    """A registered domain of a publisher: only registered, active sites are served, and only verified ones earn.

    Registering proves nothing, so several wallets may register one domain; ``verified`` is True for the one site
    that holds it verified now (its ``VerifiedDomain`` row, in the same transaction), and ``state`` says the rest.
    """

    id = identifier()
    publisher = fields.ForeignKeyField("models.Publisher", related_name="sites", on_delete=fields.RESTRICT)
    publisher_id: str
    domain = fields.CharField(max_length=253, db_index=True)
    name = fields.CharField(max_length=120, default="")
    verified = fields.BooleanField(default=False)  # holds its domain verified now (a VerifiedDomain row)
    active = fields.BooleanField(default=True)
    created_at = fields.DatetimeField()
    state = fields.CharEnumField(SiteState, max_length=16, default=SiteState.UNVERIFIED)
    verification_token = fields.CharField(max_length=32, default=new_verification_token,
                                          description="what the owner publishes on the domain to prove it")
    proof_method = fields.CharEnumField(ProofMethod, max_length=16, null=True,
                                        description="how the domain was last proven")
    verified_at = fields.DatetimeField(null=True, description="when the site last took its domain")
    last_checked_at = fields.DatetimeField(null=True, description="when adnet last looked for the proof")
    check_failure = fields.CharField(max_length=300, default="",
                                     description="why the last check failed, for the owner (empty after a success)")
    failed_checks = fields.SmallIntField(default=0, description="consecutive failed re-checks while verified")
    deleted_at = fields.DatetimeField(null=True, description="when its owner deleted it (its records are kept)")
    ads_txt_listed = fields.BooleanField(null=True, description="whether its ads.txt carried adnet's line when last "
                                                                "read (None: never read)")
    ads_txt_checked_at = fields.DatetimeField(null=True, description="when adnet last read its ads.txt")
    floor_cpm = token_amount(default=0, db_default=0, description="the least eCPM a paid campaign must offer to be "
                                                                  "served here (smallest units per 1000 impressions, "
                                                                  "0 for none)")
    placement_floors: dict[str, str] = fields.JSONField(
        default=dict, db_default="{}",
        description="placement label -> its floor (smallest units, as text), replacing floor_cpm there")
    controls = fields.JSONField(default=dict, db_default="{}", description="what its owner blocks or refuses to show "
                                                                           "(adnet.delivery.controls) - {} = nothing")
    content_categories: list[str] = fields.JSONField(
        default=list, db_default="[]", description="its own content categories: IAB Content Taxonomy 3.1 ids")

    class Meta:
        table = "site"
        unique_together = (("publisher", "domain"),)


class VerifiedDomain(Model):
    """The site that holds a domain verified: one row per domain (its primary key), so however many sites prove
    one domain at once, the database lets exactly one hold it."""

    domain = fields.CharField(max_length=253, primary_key=True)
    site = fields.OneToOneField("models.Site", related_name="held_domain", on_delete=fields.CASCADE)
    site_id: str
    verified_at = fields.DatetimeField()

    class Meta:
        table = "verified_domain"


class MemberRole(StrEnum):
    """What a member of a publisher or advertiser account may do: read (viewer), also manage what the account runs
    and its money (manager), also manage members (owner). The wallet that made the account is its owner without a
    row."""

    VIEWER = "viewer"
    MANAGER = "manager"
    OWNER = "owner"


class Member(Model):
    """Another wallet that signs in with its own key and acts on an account with a role (``adnet.accounts.members``);
    each kind of account has its table, one row per account and wallet."""

    id = identifier()
    wallet = wallet(db_index=True)
    role = fields.CharEnumField(MemberRole, max_length=16)
    created_at = fields.DatetimeField()

    class Meta:
        abstract = True


class PublisherMember(Member):
    """Another wallet that signs in with its own key and acts on a publisher account with a role."""

    publisher = fields.ForeignKeyField("models.Publisher", related_name="members", on_delete=fields.CASCADE)
    publisher_id: str

    class Meta:
        table = "publisher_member"
        unique_together = (("publisher", "wallet"),)


class Advertiser(Model):
    """A party that funds campaigns and units, identified by its wallet."""

    id = identifier()
    wallet = wallet(unique=True)
    name = fields.CharField(max_length=120, default="")
    created_at = fields.DatetimeField()

    class Meta:
        table = "advertiser"


class AdvertiserMember(Member):
    """Another wallet that signs in with its own key and acts on an advertiser account with a role."""

    advertiser = fields.ForeignKeyField("models.Advertiser", related_name="members", on_delete=fields.CASCADE)
    advertiser_id: str

    class Meta:
        table = "advertiser_member"
        unique_together = (("advertiser", "wallet"),)


class AuthNonce(Model):
    """A SIWE nonce we issued, consumed by one conditional update (``used_at`` from NULL)."""

    nonce = fields.CharField(max_length=32, primary_key=True)
    created_at = fields.DatetimeField()
    expires_at = fields.DatetimeField()
    used_at = fields.DatetimeField(null=True)

    class Meta:
        table = "auth_nonce"


class SessionScope(StrEnum):
    """What a session may do: everything its wallet may (``account``: the portal and the publisher and advertiser
    API), or only list and redeem the wallet's own rewards (``rewards``: what a publisher's page may hold)."""

    ACCOUNT = "account"
    REWARDS = "rewards"


class Session(Model):
    """A signed-in wallet. Only the SHA-256 of the session token is stored."""

    token_hash = fields.CharField(max_length=64, primary_key=True)
    wallet = wallet(db_index=True)
    scope = fields.CharEnumField(SessionScope, max_length=16, default=SessionScope.ACCOUNT,
                                 db_default=SessionScope.ACCOUNT.value)
    created_at = fields.DatetimeField()
    expires_at = fields.DatetimeField()
    ended_at = fields.DatetimeField(null=True)

    class Meta:
        table = "auth_session"


class ApiKey(Model):
    """A wallet's long-lived key for scripts: it acts as its wallet within its scopes until revoked. The token is
    shown once; only its SHA-256 is stored (``adnet.accounts.api_keys``)."""

    id = identifier()
    wallet = wallet(db_index=True)
    name = fields.CharField(max_length=60)
    scopes = fields.CharField(max_length=120, description="the scopes it holds, separated by spaces")
    secret_hash = fields.CharField(max_length=64, description="SHA-256 (hex) of the whole token")
    created_at = fields.DatetimeField()
    last_used_at = fields.DatetimeField(null=True, description="when it last opened a request (to the minute)")
    revoked_at = fields.DatetimeField(null=True)

    class Meta:
        table = "api_key"


class RateLimitState(Model):
    """Where a rate limit that guards accounts stands for one client (``adnet.accounts.limits``): the theoretical
    arrival time of the limit's next request, in microseconds since the epoch. A row whose time has passed means
    the same as no row; the ``rate-limits`` job deletes those."""

    key = fields.CharField(max_length=64, primary_key=True, description="SHA-256 (hex) of the limit's key")
    arrival = fields.BigIntField(db_index=True)

    class Meta:
        table = "rate_limit"
