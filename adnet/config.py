"""Settings: one object read from ``ADNET_*`` environment variables.

Development needs no configuration at all: secrets are generated once and kept in a git-ignored file under the
data directory, the database is a SQLite file there, and the chain is the embedded development chain.
Production (``ADNET_ENV=production``) refuses to start on anything that only suits development and names the
variable to set.

The variables are read by pydantic-settings, one ``BaseSettings`` per concern (``SecretSettings``,
``DatabaseSettings``, ``ChainSettings`` …), each field one variable (``ADNET_`` and its name in capitals) with its
type, default and bounds; each concern's rules, production's among them, are its validators, and every refusal is
a ``ConfigError`` naming the variable to fix. ``Settings`` is all the concerns in one object, which
``load_settings`` builds and the rest of adnet reads. docs/configuration.md lists every variable with its default
(tests/adnet/test_config.py holds the two together).

A generated development secret carries a tag derived from the rest of it (``is_development_secret``), so
production recognises one wherever it comes from: copied out of any data directory's secrets file into the
environment, or into another secret's variable. Production also refuses the secrets of its own data directory's
file (those generated before the tag) and the development chain's well-known account keys.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import itertools
import json
import math
import os
import re
import secrets
import string
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args
from urllib.parse import urlsplit

from eth_account import Account
from pydantic import (
    AfterValidator,
    BeforeValidator,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, EnvSettingsSource, NoDecode, SettingsConfigDict
from pydantic_settings.sources.utils import parse_env_vars

from adnet.core.wallets import InvalidWallet, dev_accounts, normalize_wallet

Environment = Literal["development", "test", "production"]
ENVIRONMENTS: tuple[str, ...] = get_args(Environment)
ENV_PREFIX = "ADNET_"
DEV_SECRETS_FILE = "dev-secrets.json"
# Names of the generated development secrets and the variables that replace them in production.
SECRET_VARIABLES = {
    "secret_key": "ADNET_SECRET_KEY",
    "tracking_secret": "ADNET_TRACKING_SECRET",
    "signer_key": "ADNET_SIGNER_KEY",
}
# Other secrets production may be given; each is held to the same strength and none may repeat another.
OPTIONAL_SECRET_VARIABLES = ("ADNET_TRACKING_SECRET_PREVIOUS", "ADNET_METRICS_TOKEN")
MIN_SECRET_LENGTH = 32
# How long one chain call may take (ADNET_CHAIN_TIMEOUT_SECONDS): a request that needs a hung node answers 503
# chain_unavailable after about this long, well within a client's patience.
DEFAULT_CHAIN_TIMEOUT_SECONDS = 3
# How long a serving process keeps serving after SIGTERM while health answers `draining` (ADNET_DRAIN_SECONDS,
# adnet.core.drain): long enough for a balancer's health checks to take the host out of rotation.
DEFAULT_DRAIN_SECONDS = 5
# The least a production secret's characters must carry, estimated from their frequencies (Shannon): 32 random hex
# digits (128 bits) carry about 113 by this estimate, a 32-character password of repeated words far less.
MIN_SECRET_BITS = 96
# The longest window of a billing cap (``adnet.delivery.caps`` keeps a day of counts).
MAX_CAP_WINDOW_SECONDS = 86_400
_RECIPE = "python -c 'import secrets; print(secrets.token_urlsafe(48))'"
# The tag of a development secret: its last characters (text) or bytes (the signer key) are an HMAC of the rest
# under this public key. A random production secret carries it by chance once in 2**48 (text) or 2**32 (key).
_DEVELOPMENT_TAG_KEY = b"adnet development secret"
_TEXT_TAG_BYTES, _KEY_TAG_BYTES, _KEY_BYTES = 6, 4, 32
_TEXT_TAG_LENGTH = 4 * _TEXT_TAG_BYTES // 3  # base64 characters, no padding
_SECRET_RECIPES = {"ADNET_SIGNER_KEY": "a new account's key, authorized as a signer on the vault"}


# ADNET_ADS_SYSTEM_DOMAIN: lower-case labels of letters, digits and hyphens, or an IP address (development).
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_CERTIFICATION_ID = re.compile(r"^[A-Za-z0-9]{1,64}$")
_CURRENCY_CODE = re.compile(r"^[A-Z]{3}$")
# How adnet names its payout token where a currency is asked for (Prebid bids' ``currency``).
GS_CURRENCY = "G$"


class ConfigError(Exception):
    """The environment does not describe a service that may start."""


@dataclass(frozen=True)
class RateLimit:
    """``count`` requests per ``seconds``, written ``"count/seconds"``."""

    count: int
    seconds: int

    def __str__(self) -> str:
        return f"{self.count}/{self.seconds}"


def variable(field_name: str) -> str:
    """The environment variable of a settings field."""
    return ENV_PREFIX + field_name.upper()


# Field types: each reads the variable's text and refuses it in a sentence that names the variable. -------------

def _between(minimum: int, maximum: int | None = None) -> BeforeValidator:
    """An integer from ``minimum`` to ``maximum`` (no upper bound when None); None stays None (an optional
    field's default)."""
    def check(value: Any, info: ValidationInfo) -> int | None:
        if value is None:
            return None
        name = variable(str(info.field_name))
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be an integer, got {value!r}") from None
        if number < minimum or (maximum is not None and number > maximum):
            bounds = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
            raise ValueError(f"{name} must be {bounds}, got {number}")
        return number
    return BeforeValidator(check)


def _rate(value: Any, info: ValidationInfo) -> RateLimit:
    if isinstance(value, RateLimit):
        return value
    name = variable(str(info.field_name))
    try:
        count, seconds = (int(part) for part in str(value).split("/", 1))
    except ValueError:
        raise ValueError(f"{name} must look like 600/60 (requests/seconds), got {value!r}") from None
    if count < 1 or seconds < 1:
        raise ValueError(f"{name} must have a positive count and period, got {value!r}")
    return RateLimit(count, seconds)


def _cap_window(cap: RateLimit, info: ValidationInfo) -> RateLimit:
    if cap.seconds > MAX_CAP_WINDOW_SECONDS:
        raise ValueError(f"{variable(str(info.field_name))} must have a window of at most {MAX_CAP_WINDOW_SECONDS} "
                         f"seconds, got {cap.seconds}")
    return cap


def _address(value: Any, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    try:
        return normalize_wallet(str(value).strip())
    except InvalidWallet as exc:
        raise ValueError(f"{variable(str(info.field_name))}: {exc}") from None


def _addresses(value: Any, info: ValidationInfo) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    return tuple(_address(item, info) or "" for item in items if str(item).strip())


def _schemes(*allowed: str, says: str) -> AfterValidator:
    """A URL of one of the ``allowed`` schemes (``says`` how the refusal names them)."""
    def check(url: str | None, info: ValidationInfo) -> str | None:
        if url is not None and not url.startswith(allowed):
            raise ValueError(f"{variable(str(info.field_name))} must be {says} URL")
        return url
    return AfterValidator(check)


# ``count/seconds``; a cap's window is at most a day.
Rate = Annotated[RateLimit, NoDecode, BeforeValidator(_rate)]
Cap = Annotated[RateLimit, NoDecode, BeforeValidator(_rate), AfterValidator(_cap_window)]
Address = Annotated[str | None, BeforeValidator(_address)]


class _Concern(BaseSettings):
    """What every concern reads besides its own variables: the environment adnet runs in, on which production's
    rules depend, and the data directory development keeps its files in."""

    # pydantic-settings validates defaults too, so a default derived from other fields is made by a validator.
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, extra="ignore")

    env: Environment = "development"
    data_dir: Path = Path("var")

    @field_validator("env", mode="before")
    @classmethod
    def _known_environment(cls, value: Any) -> Any:
        if value not in ENVIRONMENTS:
            raise ValueError(f"ADNET_ENV must be one of {', '.join(ENVIRONMENTS)}, got {value!r}")
        return value

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, path: Path) -> Path:
        return path.resolve()

    @property
    def production(self) -> bool:
        return self.env == "production"


def _production(info: ValidationInfo) -> bool:
    """Whether the settings being validated are production's (``env`` comes first)."""
    return info.data.get("env") == "production"


class SiteCheckSettings(_Concern):
    """How adnet checks the proof of a publisher's site."""

    site_recheck_hours: Annotated[int, _between(1, 24 * 30)] = 24
    site_check_port: Annotated[int | None, _between(0, 65535)] = None

    @field_validator("site_check_port")
    @classmethod
    def _development_port(cls, port: int | None, info: ValidationInfo) -> int | None:
        if port and _production(info):
            raise ValueError("ADNET_SITE_CHECK_PORT is for development only: production fetches sites on 443")
        return port or None


class PrivacySettings(_Concern):
    """What adnet keeps about clients, and how it locates them."""

    event_retention_days: Annotated[int, _between(1)] = 90
    geoip_database: Path | None = None
    country_header: str = "CF-IPCountry"

    @field_validator("geoip_database")
    @classmethod
    def _existing_file(cls, path: Path | None) -> Path | None:
        if path is not None and not path.is_file():
            raise ValueError(f"ADNET_GEOIP_DATABASE names no file: {path}")
        return path


class CapSettings(_Concern):
    """Billing caps per client network (``adnet.delivery.caps``)."""

    cap_site_impressions: Cap = RateLimit(5, 300)
    cap_site_clicks: Cap = RateLimit(2, 300)
    cap_campaign_impressions: Cap = RateLimit(3, 300)
    cap_campaign_clicks: Cap = RateLimit(1, 300)
    conversion_network_limit: Annotated[int, _between(0, 100_000)] = 20


class LimitSettings(_Concern):
    """Request rate limits (``web.limits``)."""

    rate_limit_public: Rate = RateLimit(1200, 60)
    rate_limit_auth: Rate = RateLimit(30, 60)
    rate_limit_account: Rate = RateLimit(120, 60)
    rate_limit_api_key: Rate = RateLimit(300, 60)


class MoneySettings(_Concern):
    """The terms of money: the publishers' share, claims, withdrawals, and who operates the network."""

    publisher_share_bps: Annotated[int, _between(0, 10000)] = 7000
    claim_deadline_seconds: Annotated[int, _between(300)] = 7 * 24 * 3600
    min_withdrawal: Annotated[int, _between(1)] = 10**18
    operators: Annotated[tuple[str, ...], NoDecode, BeforeValidator(_addresses)] = ()


class ServerSettings(_Concern):
    """Where adnet listens, where browsers reach it, and the proxies in front of it."""

    host: str = "127.0.0.1"
    port: Annotated[int, _between(1, 65535)] = 8000
    public_url: str = ""
    ads_system_domain: str = ""
    trusted_proxies: Annotated[int, _between(0, 10)] = 0
    drain_seconds: Annotated[int, _between(0, 300)] = DEFAULT_DRAIN_SECONDS

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, url: str, info: ValidationInfo) -> str:
        """By default the address served; absolute, and https in production."""
        if not url and {"host", "port"} <= info.data.keys():
            url = served_url(info.data["host"], info.data["port"])
        url = url.rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"ADNET_PUBLIC_URL must be an absolute http(s) URL, got {url!r}")
        if _production(info) and parts.scheme != "https":
            raise ValueError("production needs an https ADNET_PUBLIC_URL")
        return url

    @field_validator("ads_system_domain")
    @classmethod
    def _ads_system_domain(cls, domain: str, info: ValidationInfo) -> str:
        """How ads.txt files and sellers.json name adnet: by default the host of the public URL."""
        domain = domain.strip().lower().rstrip(".")
        if not domain and "public_url" in info.data:
            domain = (urlsplit(info.data["public_url"]).hostname or "").lower()
        if domain and not _HOSTNAME.match(domain) and not _is_ip(domain):
            raise ValueError(f"ADNET_ADS_SYSTEM_DOMAIN must be a domain name such as ads.example, got {domain!r}")
        return domain


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class SellersSettings(_Concern):
    """What adnet publishes about itself as an advertising system: the contact of its ``/sellers.json``, the
    version it declares, its certification authority id for ads.txt lines, and how long the document is cached."""

    sellers_contact_email: str | None = None
    sellers_contact_address: str | None = None
    sellers_version: Literal["1.0"] = "1.0"
    sellers_cache_seconds: Annotated[int, _between(0, 86400)] = 300
    ads_txt_certification_id: str | None = None
    # adnet's id in the IAB Global Vendor List: when set, a TCF consent string must also give this vendor consent
    # for the viewer's device to be used (adnet.delivery.consent).
    iab_vendor_id: Annotated[int | None, _between(1, 65535)] = None

    @field_validator("sellers_contact_email")
    @classmethod
    def _email(cls, email: str | None) -> str | None:
        if email is not None and not _EMAIL.match(email.strip()):
            raise ValueError(f"ADNET_SELLERS_CONTACT_EMAIL must be an email address, got {email!r}")
        return email.strip() if email else None

    @field_validator("ads_txt_certification_id")
    @classmethod
    def _certification_id(cls, value: str | None) -> str | None:
        if value is not None and not _CERTIFICATION_ID.match(value.strip()):
            raise ValueError("ADNET_ADS_TXT_CERTIFICATION_ID must be letters and digits (a TAG-ID such as "
                             f"f08c47fec0942fa0), got {value!r}")
        return value.strip() if value else None


class BidSettings(_Concern):
    """What ``POST /api/bid`` (Prebid.js's adnet bidder, ``adnet.delivery.bidding``) prices its bids in: G$ as
    adnet does, or a currency the publishers' Prebid configurations use, at a rate the operator sets."""

    bid_currency: str = GS_CURRENCY
    bid_currency_rate: Decimal | None = None

    @field_validator("bid_currency")
    @classmethod
    def _bid_currency(cls, currency: str) -> str:
        currency = currency.strip()
        if currency != GS_CURRENCY and not _CURRENCY_CODE.match(currency):
            raise ValueError(f"ADNET_BID_CURRENCY must be {GS_CURRENCY} or an ISO 4217 code such as USD, "
                             f"got {currency!r}")
        return currency

    @model_validator(mode="after")
    def _rate(self) -> BidSettings:
        """A currency other than G$ needs its rate (units of it per 1 G$); G$ needs none."""
        rate = self.bid_currency_rate
        if rate is not None and not (rate.is_finite() and rate > 0):
            raise ValueError(f"ADNET_BID_CURRENCY_RATE must be a positive number, got {rate}")
        if self.bid_currency != GS_CURRENCY and rate is None:
            raise ValueError(f"ADNET_BID_CURRENCY {self.bid_currency} needs ADNET_BID_CURRENCY_RATE: how many "
                             f"{self.bid_currency} one G$ is worth")
        return self


class ChainSettings(_Concern):
    """The chain adnet reads and pays on: the embedded development chain unless a node's URL is set."""

    chain_rpc_url: str | None = None
    chain_confirmations: Annotated[int, _between(0)] = 0
    chain_timeout_seconds: Annotated[int, _between(1, 60)] = DEFAULT_CHAIN_TIMEOUT_SECONDS
    vault_address: Address = None
    gs_token_address: Address = None
    sov_token_address: Address = None

    @model_validator(mode="before")
    @classmethod
    def _confirmations(cls, values: Any) -> Any:
        """One block on top on a node, unless set (none on the development chain)."""
        if isinstance(values, dict) and values.get("chain_rpc_url") and "chain_confirmations" not in values:
            return {**values, "chain_confirmations": 1}
        return values

    @model_validator(mode="after")
    def _production_chain(self) -> ChainSettings:
        if not self.production:
            return self
        if self.chain_rpc_url is None:
            raise ValueError("production needs ADNET_CHAIN_RPC_URL; the embedded chain is for development only")
        absent = [variable(name) for name in ("vault_address", "gs_token_address", "sov_token_address")
                  if getattr(self, name) is None]
        if absent:
            raise ValueError(f"production needs {', '.join(absent)} (printed by `adnet chain deploy`)")
        return self

    @property
    def embedded_chain(self) -> bool:
        return self.chain_rpc_url is None


class DatabaseSettings(_Concern):
    """Where adnet keeps its data: the database, the Redis that workers share, and the tracking spool."""

    database_url: Annotated[str, _schemes("sqlite://", "postgres://", "postgresql://", "asyncpg://",
                                          says="a sqlite:// or postgres://")] = ""
    redis_url: Annotated[str | None, _schemes("redis://", "rediss://", "unix://",
                                              says="a redis://, rediss:// or unix://")] = None
    # The tracking spool (adnet.delivery.spool): how many events, and how old, a worker keeps while the database
    # is away; 0 events turns it off.
    spool_max_events: Annotated[int, _between(0)] = 100_000
    spool_max_seconds: Annotated[int, _between(1)] = 3600

    @field_validator("database_url", mode="before")
    @classmethod
    def _database_url(cls, url: Any, info: ValidationInfo) -> Any:
        """By default a SQLite file in the data directory."""
        if not url and "data_dir" in info.data:
            return f"sqlite://{info.data['data_dir'] / 'adnet.sqlite3'}"
        return url


class SecretSettings(_Concern):
    """The keys adnet signs with. Development generates the three it needs (``load_settings``); production must be
    given them, each strong, its own, and none that development made or that is public."""

    secret_key: str = ""
    tracking_secret: str = ""
    tracking_secret_previous: str | None = None
    signer_key: str = ""
    metrics_token: str | None = None

    @field_validator("signer_key")
    @classmethod
    def _private_key(cls, key: str) -> str:
        if key:
            try:
                Account.from_key(key)
            except (ValueError, TypeError):
                raise ValueError("ADNET_SIGNER_KEY must be a 32-byte hex private key") from None
        return key

    @model_validator(mode="after")
    def _production_secrets(self) -> SecretSettings:
        if not self.production:
            return self
        missing = [name for key, name in SECRET_VARIABLES.items() if not getattr(self, key)]
        if missing:
            raise ValueError(f"production needs {', '.join(missing)}; development secrets are refused")
        given = {variable(name): value for name in (*SECRET_VARIABLES, "tracking_secret_previous", "metrics_token")
                 if (value := getattr(self, name)) is not None}
        _check_production_secrets(given)
        _refuse_development_secrets(given, self.data_dir)
        return self

    @property
    def signer_address(self) -> str:
        return Account.from_key(self.signer_key).address.lower()


class Settings(SecretSettings, DatabaseSettings, ChainSettings, ServerSettings, MoneySettings, LimitSettings,
               CapSettings, PrivacySettings, SiteCheckSettings, SellersSettings, BidSettings):
    """Everything adnet reads from its environment, validated once at start (``load_settings``)."""

    _generated_secrets: frozenset[str] = PrivateAttr(default_factory=frozenset)

    @property
    def generated_secrets(self) -> frozenset[str]:
        """The variables whose secrets development generated (none in production)."""
        return self._generated_secrets

    @property
    def secure_cookies(self) -> bool:
        """Cookies carry ``Secure`` everywhere but in development, which runs on plain http://127.0.0.1."""
        return self.env != "development"

    @property
    def public_origin(self) -> str:
        parts = urlsplit(self.public_url)
        return f"{parts.scheme}://{parts.netloc}"


def load_settings(environ: Mapping[str, str] | None = None, *, create_data_dir: bool = True) -> Settings:
    """Read and validate the settings from ``environ`` (the process's environment by default); raise ConfigError
    saying what to fix. Development's missing secrets come from its data directory, generated there once; without
    ``create_data_dir`` (commands that only read what exists), they must already be there: a directory that lacks
    them holds no adnet data, and none is created."""
    values = read_environment(Settings, os.environ if environ is None else environ)
    where = _validated(_Concern, values)
    missing = [key for key in SECRET_VARIABLES if key not in values]
    generated: dict[str, str] = {}
    if missing and not where.production:
        stored = _development_secrets(where.data_dir, create=create_data_dir)
        generated = {key: stored[key] for key in missing}
    settings = _validated(Settings, {**values, **generated})
    settings._generated_secrets = frozenset(SECRET_VARIABLES[key] for key in generated)
    return settings


S = TypeVar("S", bound=BaseSettings)


class _Environ(EnvSettingsSource):
    """pydantic-settings' reading of environment variables, from a given mapping rather than the process's (the
    tests and the CLI's checks pass one). A value is trimmed, and one that is empty counts as unset."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = {name: value.strip() for name, value in environ.items() if value.strip()}
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


def read_environment(concern: type[BaseSettings], environ: Mapping[str, str]) -> dict[str, Any]:
    """The values ``environ`` sets for ``concern``'s fields, by field name, as text."""
    return _Environ(concern, environ)()


def _validated(concern: type[S], values: Mapping[str, Any]) -> S:
    """``values`` as ``concern``; ConfigError with the first refusal, which names its variable."""
    try:
        return concern.model_validate(values)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        cause = (first.get("ctx") or {}).get("error")
        if isinstance(cause, ValueError):
            raise ConfigError(str(cause)) from None
        name = variable(str(first["loc"][0])) if first["loc"] else "the environment"
        raise ConfigError(f"{name}: {first['msg']}") from None


def served_url(host: str, port: int) -> str:
    """The public URL where none is configured: the address adnet listens on (``ADNET_HOST`` and ``ADNET_PORT``,
    which ``adnet serve --host --port`` set), an IPv6 address in brackets. Behind a proxy, or listening on every
    address (``0.0.0.0``), ``ADNET_PUBLIC_URL`` must say where browsers reach adnet."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _development_secrets(data_dir: Path, *, create: bool) -> dict[str, str]:
    """Load, or create once (``create``), the development secrets file (mode 0600, git-ignored with the data
    directory)."""
    path = data_dir / DEV_SECRETS_FILE
    try:
        stored = json.loads(path.read_text())
    except FileNotFoundError:
        stored = {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read development secrets at {path}: {exc}") from None
    if all(isinstance(stored.get(key), str) for key in SECRET_VARIABLES):
        return stored
    if not create:
        raise ConfigError(f"no adnet data in {data_dir} (its development secrets are missing): set ADNET_DATA_DIR "
                          "to adnet's data directory, or create one with `adnet migrate`")
    fresh = {
        "secret_key": _development_text_secret(),
        "tracking_secret": _development_text_secret(),
        "signer_key": _development_signer_key(),
    }
    stored = {**fresh, **{k: v for k, v in stored.items() if isinstance(v, str)}}
    data_dir.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(stored, handle, indent=2)
    return stored


def _check_production_secrets(secrets_by_variable: dict[str, str]) -> None:
    """Every production secret strong (``secret_weakness``) and its own: a value shared by two secrets falls with
    either (a leaked metrics token would be the key that signs sessions)."""
    seen: dict[str, str] = {}
    for name, value in secrets_by_variable.items():
        weakness = secret_weakness(value.removeprefix("0x") if name == "ADNET_SIGNER_KEY" else value)
        if weakness is not None:
            raise ValueError(f"{name} {weakness}; set a random one ({_SECRET_RECIPES.get(name, _RECIPE)})")
        same = value.lower().removeprefix("0x")  # a key in hex is the same key in any case, with or without 0x
        if same in seen:
            raise ValueError(f"{name} repeats the value of {seen[same]}; every secret must be its own")
        seen[same] = name


def secret_weakness(value: str) -> str | None:
    """Why ``value`` is too weak to be a production secret, or None: shorter than ``MIN_SECRET_LENGTH``; one
    character making up over a third of it, or a shorter string repeated; mostly runs of neighbouring characters
    (``abcd``, ``1234``); or under ``MIN_SECRET_BITS`` by its character frequencies. Random secrets of the length
    asked for pass (of 32 random hex digits, about one in 7,500 fails)."""
    length = len(value)
    if length < MIN_SECRET_LENGTH:
        return f"must be at least {MIN_SECRET_LENGTH} characters"
    counts = Counter(value)
    repeated = any(value[shift:] == value[:-shift] for shift in range(1, length // 2 + 1))
    if repeated or max(counts.values()) * 3 > length:
        return "repeats characters"
    if sum(abs(ord(b) - ord(a)) <= 1 for a, b in itertools.pairwise(value)) * 2 > length - 1:
        return "is mostly runs of neighbouring characters"
    bits = -sum(count * math.log2(count / length) for count in counts.values())
    if bits < MIN_SECRET_BITS:
        return f"has too little entropy (about {bits:.0f} bits, at least {MIN_SECRET_BITS} needed)"
    return None


def _refuse_development_secrets(secrets_by_variable: dict[str, str], data_dir: Path) -> None:
    """Production must not run on a secret that development generated or that is public: one carrying the
    development tag (wherever it was copied from), one in this data directory's development secrets file, or a key
    of the development chain's well-known accounts."""
    for name, value in secrets_by_variable.items():
        if is_development_secret(value):
            raise ValueError(f"{name} is a development secret (adnet generated it for development, in some "
                             f"data directory's {DEV_SECRETS_FILE}); set a production one")
    path = data_dir / DEV_SECRETS_FILE
    try:
        stored = json.loads(path.read_text())
    except (OSError, ValueError):
        stored = {}
    for key, name in SECRET_VARIABLES.items():
        if isinstance(stored, dict) and stored.get(key) == secrets_by_variable[name]:
            raise ValueError(f"{name} is a development secret (from {path}); set a production one")
    signer = Account.from_key(secrets_by_variable["ADNET_SIGNER_KEY"]).address
    if signer in {account.address for account in dev_accounts()}:
        raise ValueError("ADNET_SIGNER_KEY is a well-known development account key; set a production one")


def is_development_secret(value: str) -> bool:
    """Whether ``value`` is a secret adnet generated for development: text whose last characters are the tag of
    the rest, or a 32-byte key in hex (with or without ``0x``, in any case) whose last bytes are."""
    body, tag = value[:-_TEXT_TAG_LENGTH], value[-_TEXT_TAG_LENGTH:]
    if body and hmac.compare_digest(tag.encode(), _text_tag(body).encode()):
        return True
    digits = value.lower().removeprefix("0x")
    if len(digits) != 2 * _KEY_BYTES or not set(digits) <= set(string.hexdigits):
        return False
    key = bytes.fromhex(digits)
    return hmac.compare_digest(key[-_KEY_TAG_BYTES:], _tag(key[:-_KEY_TAG_BYTES], _KEY_TAG_BYTES))


def _development_text_secret() -> str:
    body = secrets.token_urlsafe(42)
    return body + _text_tag(body)


def _development_signer_key() -> str:
    body = secrets.token_bytes(_KEY_BYTES - _KEY_TAG_BYTES)
    return "0x" + (body + _tag(body, _KEY_TAG_BYTES)).hex()


def _text_tag(body: str) -> str:
    return base64.urlsafe_b64encode(_tag(body.encode(), _TEXT_TAG_BYTES)).decode()


def _tag(body: bytes, size: int) -> bytes:
    return hmac.new(_DEVELOPMENT_TAG_KEY, body, hashlib.sha256).digest()[:size]
