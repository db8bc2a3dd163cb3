"""Settings: one object read from ``ADNET_*`` environment variables.

Development needs no configuration at all: secrets are generated once and kept in a git-ignored file under the
data directory, the database is a SQLite file there, and the chain is the embedded development chain.
Production (``ADNET_ENV=production``) refuses to start on anything that only suits development and names the
variable to set.

A generated development secret carries a tag derived from the rest of it (``is_development_secret``), so
production recognises one wherever it comes from: copied out of any data directory's secrets file into the
environment, or into another secret's variable. Production also refuses the secrets of its own data directory's
file (those generated before the tag) and the development chain's well-known account keys.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import math
import os
import secrets
import string
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from eth_account import Account

from adnet.core.wallets import InvalidWallet, dev_accounts, normalize_wallet

ENVIRONMENTS = ("development", "test", "production")
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
_RECIPE = "python -c 'import secrets; print(secrets.token_urlsafe(48))'"
# The tag of a development secret: its last characters (text) or bytes (the signer key) are an HMAC of the rest
# under this public key. A random production secret carries it by chance once in 2**48 (text) or 2**32 (key).
_DEVELOPMENT_TAG_KEY = b"adnet development secret"
_TEXT_TAG_BYTES, _KEY_TAG_BYTES, _KEY_BYTES = 6, 4, 32
_TEXT_TAG_LENGTH = 4 * _TEXT_TAG_BYTES // 3  # base64 characters, no padding
_SECRET_RECIPES = {"ADNET_SIGNER_KEY": "a new account's key, authorized as a signer on the vault"}


class ConfigError(Exception):
    """The environment does not describe a service that may start."""


@dataclass(frozen=True)
class RateLimit:
    """``count`` requests per ``seconds``, parsed from ``"count/seconds"``."""

    count: int
    seconds: int

    @classmethod
    def parse(cls, name: str, text: str) -> RateLimit:
        try:
            count, seconds = (int(part) for part in text.split("/", 1))
        except ValueError:
            raise ConfigError(f"{name} must look like 600/60 (requests/seconds), got {text!r}") from None
        if count < 1 or seconds < 1:
            raise ConfigError(f"{name} must have a positive count and period, got {text!r}")
        return cls(count, seconds)


@dataclass(frozen=True)
class Settings:
    """Everything adnet reads from its environment, validated once at start."""

    env: str
    data_dir: Path
    database_url: str
    public_url: str
    host: str
    port: int
    secret_key: str
    tracking_secret: str
    tracking_secret_previous: str | None
    signer_key: str
    chain_rpc_url: str | None
    chain_confirmations: int
    vault_address: str | None
    gs_token_address: str | None
    sov_token_address: str | None
    publisher_share_bps: int
    claim_deadline_seconds: int
    min_withdrawal: int
    operators: tuple[str, ...]
    trusted_proxies: int
    rate_limit_public: RateLimit
    rate_limit_auth: RateLimit
    rate_limit_account: RateLimit
    rate_limit_api_key: RateLimit
    cap_site_impressions: RateLimit
    cap_site_clicks: RateLimit
    cap_campaign_impressions: RateLimit
    cap_campaign_clicks: RateLimit
    event_retention_days: int
    site_recheck_hours: int = 24
    chain_timeout_seconds: int = DEFAULT_CHAIN_TIMEOUT_SECONDS
    spool_max_events: int = 100_000
    spool_max_seconds: int = 3600
    drain_seconds: int = DEFAULT_DRAIN_SECONDS
    site_check_port: int | None = None
    redis_url: str | None = None
    metrics_token: str | None = None
    geoip_database: Path | None = None
    country_header: str = "CF-IPCountry"
    generated_secrets: frozenset[str] = field(default_factory=frozenset)

    @property
    def production(self) -> bool:
        return self.env == "production"

    @property
    def secure_cookies(self) -> bool:
        """Cookies carry ``Secure`` everywhere but in development, which runs on plain http://127.0.0.1."""
        return self.env != "development"

    @property
    def embedded_chain(self) -> bool:
        return self.chain_rpc_url is None

    @property
    def public_origin(self) -> str:
        parts = urlsplit(self.public_url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def signer_address(self) -> str:
        return Account.from_key(self.signer_key).address.lower()


def load_settings(environ: Mapping[str, str] | None = None, *, create_data_dir: bool = True) -> Settings:
    """Read and validate the settings; raise ConfigError saying what to fix. Without ``create_data_dir`` (commands
    that only read what exists), development's secrets must already be in the data directory: a directory that
    lacks them holds no adnet data, and none is created."""
    env_vars = os.environ if environ is None else environ

    def get(name: str, default: str | None = None) -> str | None:
        value = env_vars.get(name, "").strip()
        return value or default

    env = get("ADNET_ENV", "development")
    if env not in ENVIRONMENTS:
        raise ConfigError(f"ADNET_ENV must be one of {', '.join(ENVIRONMENTS)}, got {env!r}")
    production = env == "production"
    data_dir = Path(get("ADNET_DATA_DIR", "var") or "var").resolve()

    secrets_given = {key: get(var) for key, var in SECRET_VARIABLES.items()}
    missing = [SECRET_VARIABLES[key] for key, value in secrets_given.items() if value is None]
    if production and missing:
        raise ConfigError(f"production needs {', '.join(missing)}; development secrets are refused")
    generated = _development_secrets(data_dir, create=create_data_dir) if missing else {}
    values = {key: secrets_given[key] or generated[key] for key in SECRET_VARIABLES}
    try:
        Account.from_key(values["signer_key"])
    except (ValueError, TypeError):
        raise ConfigError("ADNET_SIGNER_KEY must be a 32-byte hex private key") from None
    if production:
        production_secrets = {
            **{SECRET_VARIABLES[key]: value for key, value in values.items()},
            **{name: value for name in OPTIONAL_SECRET_VARIABLES if (value := get(name)) is not None},
        }
        _check_production_secrets(production_secrets)
        _refuse_development_secrets(production_secrets, data_dir)

    chain_rpc_url = get("ADNET_CHAIN_RPC_URL")
    if production and chain_rpc_url is None:
        raise ConfigError("production needs ADNET_CHAIN_RPC_URL; the embedded chain is for development only")
    vault = {name: _optional_address(get, var) for name, var in (
        ("vault_address", "ADNET_VAULT_ADDRESS"),
        ("gs_token_address", "ADNET_GS_TOKEN_ADDRESS"),
        ("sov_token_address", "ADNET_SOV_TOKEN_ADDRESS"),
    )}
    if production:
        absent = [var for name, var in (
            ("vault_address", "ADNET_VAULT_ADDRESS"),
            ("gs_token_address", "ADNET_GS_TOKEN_ADDRESS"),
            ("sov_token_address", "ADNET_SOV_TOKEN_ADDRESS"),
        ) if vault[name] is None]
        if absent:
            raise ConfigError(f"production needs {', '.join(absent)} (printed by `adnet chain deploy`)")

    host = get("ADNET_HOST", "127.0.0.1") or "127.0.0.1"
    port = _int(get, "ADNET_PORT", 8000, minimum=1, maximum=65535)
    public_url = (get("ADNET_PUBLIC_URL") or served_url(host, port)).rstrip("/")
    parts = urlsplit(public_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"ADNET_PUBLIC_URL must be an absolute http(s) URL, got {public_url!r}")
    if production and parts.scheme != "https":
        raise ConfigError("production needs an https ADNET_PUBLIC_URL")

    default_db = f"sqlite://{data_dir / 'adnet.sqlite3'}"
    database_url = get("ADNET_DATABASE_URL", default_db) or default_db
    if not database_url.startswith(("sqlite://", "postgres://", "postgresql://", "asyncpg://")):
        raise ConfigError("ADNET_DATABASE_URL must be a sqlite:// or postgres:// URL")

    site_check_port = _int(get, "ADNET_SITE_CHECK_PORT", 0, minimum=0, maximum=65535) or None
    if production and site_check_port is not None:
        raise ConfigError("ADNET_SITE_CHECK_PORT is for development only: production fetches sites on 443")

    redis_url = get("ADNET_REDIS_URL")
    if redis_url is not None and not redis_url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError("ADNET_REDIS_URL must be a redis://, rediss:// or unix:// URL")

    geoip_text = get("ADNET_GEOIP_DATABASE")
    geoip_database = Path(geoip_text) if geoip_text else None
    if geoip_database is not None and not geoip_database.is_file():
        raise ConfigError(f"ADNET_GEOIP_DATABASE names no file: {geoip_text}")

    operators = tuple(
        _address("ADNET_OPERATORS", item) for item in (get("ADNET_OPERATORS", "") or "").split(",") if item.strip()
    )
    return Settings(
        env=env,
        data_dir=data_dir,
        database_url=database_url,
        public_url=public_url,
        host=host,
        port=port,
        secret_key=values["secret_key"],
        tracking_secret=values["tracking_secret"],
        tracking_secret_previous=get("ADNET_TRACKING_SECRET_PREVIOUS"),
        signer_key=values["signer_key"],
        chain_rpc_url=chain_rpc_url,
        chain_confirmations=_int(get, "ADNET_CHAIN_CONFIRMATIONS", 1 if chain_rpc_url else 0, minimum=0),
        vault_address=vault["vault_address"],
        gs_token_address=vault["gs_token_address"],
        sov_token_address=vault["sov_token_address"],
        publisher_share_bps=_int(get, "ADNET_PUBLISHER_SHARE_BPS", 7000, minimum=0, maximum=10000),
        claim_deadline_seconds=_int(get, "ADNET_CLAIM_DEADLINE_SECONDS", 7 * 24 * 3600, minimum=300),
        min_withdrawal=_int(get, "ADNET_MIN_WITHDRAWAL", 10**18, minimum=1),
        operators=operators,
        trusted_proxies=_int(get, "ADNET_TRUSTED_PROXIES", 0, minimum=0, maximum=10),
        rate_limit_public=RateLimit.parse("ADNET_RATE_LIMIT_PUBLIC",
                                          get("ADNET_RATE_LIMIT_PUBLIC", "1200/60") or ""),
        rate_limit_auth=RateLimit.parse("ADNET_RATE_LIMIT_AUTH", get("ADNET_RATE_LIMIT_AUTH", "30/60") or ""),
        rate_limit_account=RateLimit.parse("ADNET_RATE_LIMIT_ACCOUNT",
                                           get("ADNET_RATE_LIMIT_ACCOUNT", "120/60") or ""),
        rate_limit_api_key=RateLimit.parse("ADNET_RATE_LIMIT_API_KEY",
                                           get("ADNET_RATE_LIMIT_API_KEY", "300/60") or ""),
        cap_site_impressions=_cap(get, "ADNET_CAP_SITE_IMPRESSIONS", "5/300"),
        cap_site_clicks=_cap(get, "ADNET_CAP_SITE_CLICKS", "2/300"),
        cap_campaign_impressions=_cap(get, "ADNET_CAP_CAMPAIGN_IMPRESSIONS", "3/300"),
        cap_campaign_clicks=_cap(get, "ADNET_CAP_CAMPAIGN_CLICKS", "1/300"),
        event_retention_days=_int(get, "ADNET_EVENT_RETENTION_DAYS", 90, minimum=1),
        site_recheck_hours=_int(get, "ADNET_SITE_RECHECK_HOURS", 24, minimum=1, maximum=24 * 30),
        chain_timeout_seconds=_int(get, "ADNET_CHAIN_TIMEOUT_SECONDS", DEFAULT_CHAIN_TIMEOUT_SECONDS, minimum=1,
                                   maximum=60),
        spool_max_events=_int(get, "ADNET_SPOOL_MAX_EVENTS", 100_000, minimum=0),
        spool_max_seconds=_int(get, "ADNET_SPOOL_MAX_SECONDS", 3600, minimum=1),
        drain_seconds=_int(get, "ADNET_DRAIN_SECONDS", DEFAULT_DRAIN_SECONDS, minimum=0, maximum=300),
        site_check_port=site_check_port,
        redis_url=redis_url,
        metrics_token=get("ADNET_METRICS_TOKEN"),
        geoip_database=geoip_database,
        country_header=get("ADNET_COUNTRY_HEADER", "CF-IPCountry") or "CF-IPCountry",
        generated_secrets=frozenset(SECRET_VARIABLES[key] for key in generated),
    )


def served_url(host: str, port: int) -> str:
    """The public URL where none is configured: the address adnet listens on (``ADNET_HOST`` and ``ADNET_PORT``,
    which ``adnet serve --host --port`` set), an IPv6 address in brackets. Behind a proxy, or listening on every
    address (``0.0.0.0``), ``ADNET_PUBLIC_URL`` must say where browsers reach adnet."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _cap(get, name: str, default: str) -> RateLimit:
    """A billing cap: ``count/seconds``, with a window of at most a day (``adnet.delivery.caps``)."""
    cap = RateLimit.parse(name, get(name, default) or default)
    if cap.seconds > 86_400:
        raise ConfigError(f"{name} must have a window of at most 86400 seconds, got {cap.seconds}")
    return cap


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
    for variable, value in secrets_by_variable.items():
        weakness = secret_weakness(value.removeprefix("0x") if variable == "ADNET_SIGNER_KEY" else value)
        if weakness is not None:
            raise ConfigError(f"{variable} {weakness}; set a random one ({_SECRET_RECIPES.get(variable, _RECIPE)})")
        same = value.lower().removeprefix("0x")  # a key in hex is the same key in any case, with or without 0x
        if same in seen:
            raise ConfigError(f"{variable} repeats the value of {seen[same]}; every secret must be its own")
        seen[same] = variable


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
    for variable, value in secrets_by_variable.items():
        if is_development_secret(value):
            raise ConfigError(f"{variable} is a development secret (adnet generated it for development, in some "
                              f"data directory's {DEV_SECRETS_FILE}); set a production one")
    path = data_dir / DEV_SECRETS_FILE
    try:
        stored = json.loads(path.read_text())
    except (OSError, ValueError):
        stored = {}
    for key, variable in SECRET_VARIABLES.items():
        if isinstance(stored, dict) and stored.get(key) == secrets_by_variable[variable]:
            raise ConfigError(f"{variable} is a development secret (from {path}); set a production one")
    signer = Account.from_key(secrets_by_variable["ADNET_SIGNER_KEY"]).address
    if signer in {account.address for account in dev_accounts()}:
        raise ConfigError("ADNET_SIGNER_KEY is a well-known development account key; set a production one")


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


def _int(get, name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    text = get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {text!r}") from None
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ConfigError(f"{name} must be between {minimum} and {maximum}, got {value}")
    return value


def _address(name: str, text: str) -> str:
    try:
        return normalize_wallet(text.strip())
    except InvalidWallet as exc:
        raise ConfigError(f"{name}: {exc}") from None


def _optional_address(get, name: str) -> str | None:
    text = get(name)
    return None if text is None else _address(name, text)
