"""Who takes part: publishers and their sites, advertisers, and wallet sign-in (SIWE nonces, sessions)."""

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import identifier, wallet


class Publisher(Model):
    """A site owner, identified by the wallet that signs in."""

    id = identifier()
    wallet = wallet(unique=True)
    created_at = fields.DatetimeField()

    class Meta:
        table = "publisher"


class Site(Model):
    """A registered domain of a publisher: only registered, active sites are served and billed."""

    id = identifier()
    publisher = fields.ForeignKeyField("models.Publisher", related_name="sites", on_delete=fields.RESTRICT)
    domain = fields.CharField(max_length=253, unique=True)
    name = fields.CharField(max_length=120, default="")
    verified = fields.BooleanField(default=False)
    active = fields.BooleanField(default=True)
    created_at = fields.DatetimeField()

    class Meta:
        table = "site"


class Advertiser(Model):
    """A party that funds campaigns and units, identified by its wallet."""

    id = identifier()
    wallet = wallet(unique=True)
    name = fields.CharField(max_length=120, default="")
    created_at = fields.DatetimeField()

    class Meta:
        table = "advertiser"


class AuthNonce(Model):
    """A SIWE nonce we issued, consumed by one conditional update (``used_at`` from NULL)."""

    nonce = fields.CharField(max_length=32, primary_key=True)
    created_at = fields.DatetimeField()
    expires_at = fields.DatetimeField()
    used_at = fields.DatetimeField(null=True)

    class Meta:
        table = "auth_nonce"


class Session(Model):
    """A signed-in wallet. Only the SHA-256 of the session token is stored."""

    token_hash = fields.CharField(max_length=64, primary_key=True)
    wallet = wallet(db_index=True)
    created_at = fields.DatetimeField()
    expires_at = fields.DatetimeField()
    ended_at = fields.DatetimeField(null=True)

    class Meta:
        table = "auth_session"
