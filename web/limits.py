"""Rate limits that follow the settings, kept where each kind of limit needs them, for both surfaces: the app's
limiter (``OwnLimitsFirst``), what a route declares (``settings_limit``, ``ACCOUNT_LIMIT``) and whom a limit counts
(``client_ip_key``).

quart-rate-limiter reads a route's limits when its decorator runs, at import time, before any settings exist.
``settings_limit("rate_limit_auth")`` gives a limit that names a setting; on every request the app's limiter
(``OwnLimitsFirst``) puts the running app's configured count and period in its place, so ``ADNET_RATE_LIMIT_*``
applies without module-level state.

The limiter admits a request in one step of a store (``AdmittingStore.admit``): the library reads a client's
state, decides and writes it back in separate calls, which is exact only while one event loop owns the state. The
same step tells how far ahead the client's shortest limit now stands, which gives the answer's ``RateLimit-*``
headers without reading the store again. Where a limit is kept depends on what it guards:

- **Limits that guard accounts** (``ACCOUNT_SETTINGS``: sign-in, the signed-in routes, API keys) are exact across
  every worker and host: in Redis with ``ADNET_REDIS_URL`` (``RedisStore``, one script decides), in the database
  without it or while Redis does not answer (``DatabaseStore``, one conditional upsert decides,
  ``adnet.accounts.limits``). They are few, so a database write each costs little.
- **The public per-address limit** (``rate_limit_public``: serving, tracking, the embed's routes) is in Redis with
  ``ADNET_REDIS_URL``, and otherwise in each process's memory (``ExpiringMemoryStore``): serving must not touch
  the database, so without Redis N workers admit up to N times its count from one address. It guards capacity, not
  money: billing's own caps are exact in the database.
"""

from __future__ import annotations

import contextlib
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from flask.sansio.blueprints import Blueprint
from quart import Quart, Response, g, request
from quart_rate_limiter import RateLimit, RateLimiter, RateLimitExceeded
from quart_rate_limiter.store import MemoryStore
from redis.asyncio import Redis

from adnet.accounts import limits as database_limits
from adnet.config import RateLimit as ConfiguredLimit
from adnet.config import Settings
from adnet.core.redis_link import RedisLink, RedisUnavailable
from web.context import client_ip

# The limits that guard accounts, exact across processes without Redis (in the database).
ACCOUNT_SETTINGS = frozenset({"rate_limit_auth", "rate_limit_account", "rate_limit_api_key"})
LIMIT_SETTINGS = ACCOUNT_SETTINGS | {"rate_limit_public"}
# Where the app keeps its limiter (``OwnLimitsFirst``), for limits that are counted inside a handler.
LIMITER = "adnet_rate_limiter"


class SettingsRateLimit(RateLimit):
    """A quart-rate-limiter limit that names one of the app's rate limit settings; ``OwnLimitsFirst`` gives the
    limiter the configured limit in its place."""

    def __init__(self, setting: str) -> None:
        if setting not in LIMIT_SETTINGS:
            raise ValueError(f"unknown rate limit setting {setting!r}")
        self.setting = setting
        self.key_function = None
        self.skip_function = None


def settings_limit(setting: str) -> list[RateLimit]:
    """The ``limits=`` argument of ``quart_rate_limiter.rate_limit`` for one settings-driven limit."""
    return [SettingsRateLimit(setting)]


# The limit of every route a signed-in account or an API key calls (quart-rate-limiter counts it per route).
ACCOUNT_LIMIT = settings_limit("rate_limit_account")


async def client_ip_key() -> str:
    """Rate-limit key: the client's address."""
    return client_ip()


async def skip_preflight() -> bool:
    """CORS preflights do not count against a route's rate limit."""
    return request.method == "OPTIONS"


@dataclass
class ConfiguredRateLimit(RateLimit):
    """A settings limit as the app configured it: its count and period, and which setting it is."""

    setting: str = ""

    @property
    def guards_accounts(self) -> bool:
        return self.setting in ACCOUNT_SETTINGS


@dataclass(frozen=True)
class Admission:
    """A store's decision: ``wait`` None when the request was admitted (and counted), else the whole seconds until
    the full limit has room; ``ahead``, how many seconds the first limit's theoretical arrival time stands ahead of
    now after the decision (what the ``RateLimit-*`` headers are computed from)."""

    wait: int | None
    ahead: float


class AdmittingStore(ABC):
    """Where a limiter keeps each key's theoretical arrival time (the GCRA's state, as quart-rate-limiter's stores
    do), deciding and counting a request in one step."""

    @abstractmethod
    async def admit(self, limits: list[tuple[str, RateLimit]]) -> Admission:
        """Count a request against each ``(key, limit)``; or, when one limit has no room, count nothing."""


class ExpiringMemoryStore(MemoryStore, AdmittingStore):
    """quart-rate-limiter's in-memory store, less the keys whose limit has fully recovered.

    The library's ``MemoryStore`` keeps an entry per client address and limit for ever, so a server's memory would
    grow with every new client address (``make soak`` shows it flat). A key whose theoretical arrival time has
    passed means the same as no key (the limiter takes the later of it and now), so at most every ``sweep_seconds``
    a write drops all such keys.
    """

    def __init__(self, sweep_seconds: float = 60.0) -> None:
        super().__init__()
        self.sweep_seconds = sweep_seconds
        self._next_sweep = time.monotonic() + sweep_seconds

    async def set(self, key: str, tat: datetime) -> None:
        await super().set(key, tat)
        if time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + self.sweep_seconds
            now = datetime.now(UTC)  # the limiter's own clock
            self._tats = {kept: until for kept, until in self._tats.items() if until > now}

    async def admit(self, limits: list[tuple[str, RateLimit]]) -> Admission:
        now = datetime.now(UTC)
        arrivals = [max(self._tats.get(key, now), now) for key, _limit in limits]
        for arrival, (_key, limit) in zip(arrivals, limits, strict=True):
            wait = (arrival - now).total_seconds() - (limit.period.total_seconds() - limit.inverse)
            if wait > 0:
                return Admission(math.ceil(wait), (arrivals[0] - now).total_seconds())
        for arrival, (key, limit) in zip(arrivals, limits, strict=True):
            await self.set(key, arrival + timedelta(seconds=limit.inverse))
        return Admission(None, (arrivals[0] - now).total_seconds() + limits[0][1].inverse)

    async def before_serving(self) -> None:
        """An app that starts serving starts with no counts (a test app may start several times)."""
        self._tats = {}

    def __len__(self) -> int:
        return len(self._tats)


# The GCRA of quart-rate-limiter for every limit of a request at once, on Redis's clock so hosts agree. KEYS: one
# per limit; ARGV: per limit, its emission interval and its period, in seconds. Returns {wait, ahead} as text: wait
# is empty when admitted, else the seconds until the first full limit has room; ahead is how far the first limit's
# arrival time stands ahead of now after the decision. A key expires when its limit has fully recovered.
_ADMIT = """
local time = redis.call('TIME')
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
local arrivals = {}
for i, key in ipairs(KEYS) do
  local inverse, period = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  local arrival = math.max(tonumber(redis.call('GET', key) or 0), now)
  local wait = arrival - now - (period - inverse)
  if wait > 0 then
    local first = i == 1 and arrival or math.max(tonumber(redis.call('GET', KEYS[1]) or 0), now)
    return {tostring(wait), tostring(first - now)}
  end
  arrivals[i] = arrival + inverse
end
for i, key in ipairs(KEYS) do
  local expiry = math.max(1, math.ceil((arrivals[i] - now) * 1000))  -- a tiny interval can vanish next to now
  redis.call('SET', key, string.format('%.6f', arrivals[i]), 'PX', expiry)
end
return {'', tostring(arrivals[1] - now)}
"""


class RedisStore(AdmittingStore):
    """Limits shared by every worker and host that use one Redis (``ADNET_REDIS_URL``): a request is decided and
    counted by one script, atomic in Redis, so concurrent requests to different workers cannot both take the last
    slot (quart-rate-limiter's own Redis store reads and writes in separate calls, and its keys never expire).

    While Redis cannot be reached, ``admit`` raises RedisUnavailable (``adnet.core.redis_link``) and the limiter
    uses its store without Redis for that limit."""

    PREFIX = "adnet:rate:"

    def __init__(self, redis_url: str, link: RedisLink | None = None) -> None:
        self.link = link or RedisLink(redis_url)
        self._redis: Redis | None = None
        self._admit: Any = None

    async def before_serving(self) -> None:
        self._redis = self.link.client()
        self._admit = self._redis.register_script(_ADMIT)

    async def after_serving(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def admit(self, limits: list[tuple[str, RateLimit]]) -> Admission:
        keys = [self.PREFIX + key for key, _limit in limits]
        arguments = [figure for _key, limit in limits for figure in (limit.inverse, limit.period.total_seconds())]
        wait, ahead = await self.link.call(lambda: self._admit(keys=keys, args=arguments))
        return Admission(math.ceil(float(wait)) if wait else None, float(ahead))


class DatabaseStore(AdmittingStore):
    """Limits in the database (``adnet.accounts.limits``): exact across the workers and hosts of one database,
    for the limits that guard accounts when there is no Redis, or while it does not answer."""

    async def admit(self, limits: list[tuple[str, RateLimit]]) -> Admission:
        decision = await database_limits.admit(
            [database_limits.Limit.of(key, limit.count, limit.period.total_seconds()) for key, limit in limits],
            database_limits.now())
        return Admission(None if decision.wait is None else math.ceil(decision.wait), decision.ahead)


class OwnLimitsFirst(RateLimiter):
    """The app's rate limiter: its default limits apply only to routes that declare no limit of their own, a
    settings limit is the app's configured one, and each limit is kept where it must be (the module's docstring).

    quart-rate-limiter adds the defaults to every route's own limits; a route that declares the same limit as the
    default would then count each request twice against one key and get half its budget. The limiter reads a
    limit's count and period about sixteen times a request, so each settings limit is made a plain ``RateLimit``
    (``ConfiguredRateLimit``) once, from the settings the app was built with. ``redis``: the process's link to the
    Redis of ``ADNET_REDIS_URL``, if one is named.
    """

    def __init__(self, app: Quart, *, settings: Settings, redis: RedisLink | None, **kwargs: Any) -> None:
        self.memory = ExpiringMemoryStore()
        self.database = DatabaseStore()
        self.redis = RedisStore(redis.url, redis) if redis is not None else None
        # Every call the library makes to its store is overridden here; ``memory`` stands as its store.
        super().__init__(app, store=self.memory, **kwargs)
        self._configured = {name: _rate_limit(name, getattr(settings, name)) for name in LIMIT_SETTINGS}
        app.extensions[LIMITER] = self

    async def _before_serving(self) -> None:
        await self.memory.before_serving()
        if self.redis is not None:
            await self.redis.before_serving()

    async def _after_serving(self) -> None:
        if self.redis is not None:
            await self.redis.after_serving()

    async def _admitted(self, limits: list[tuple[str, RateLimit]]) -> Admission:
        """Admit by Redis if there is one and it answers; else by the database for limits that guard accounts, by
        this process's memory for the public one (a route's limits are all of one kind: its first decides)."""
        if self.redis is not None:
            with contextlib.suppress(RedisUnavailable):
                return await self.redis.admit(limits)
        first = limits[0][1]
        store = self.database if isinstance(first, ConfiguredRateLimit) and first.guards_accounts else self.memory
        return await store.admit(limits)

    async def _raise_on_rejection(self, endpoint: str, rate_limits: list[RateLimit]) -> None:
        if not rate_limits:
            return
        limits = sorted(rate_limits, key=lambda limit: limit.period)  # the headers speak of the shortest
        admission = await self._admitted([(await self._create_key(endpoint, limit), limit) for limit in limits])
        g.rate_limit_state = (limits[0], admission.ahead)
        if admission.wait is not None:
            raise RateLimitExceeded(admission.wait)

    async def _after_request(self, response: Response) -> Response:
        """The ``RateLimit-*`` headers of the shortest limit, from what admitting the request found."""
        state = g.get("rate_limit_state")
        if state is not None:
            limit, ahead = state
            response.headers["RateLimit-Limit"] = str(limit.count)
            response.headers["RateLimit-Remaining"] = str(int((limit.period.total_seconds() - ahead) / limit.inverse))
            response.headers["RateLimit-Reset"] = str(math.ceil(ahead))
        return response

    async def admit(self, key: str, setting: str) -> None:
        """Count one request against the configured limit ``setting`` under ``key`` (rather than the client's
        address); RateLimitExceeded when it has no room. For limits of what a handler learns, such as an API key."""
        admission = await self._admitted([(f"{setting}:{key}", self._configured[setting])])
        if admission.wait is not None:
            raise RateLimitExceeded(admission.wait)

    async def _update_limits(self, endpoint: str, rate_limits: list[RateLimit]) -> None:
        """Nothing: ``_raise_on_rejection`` counted the request when it admitted it."""

    def _get_limits_for_view_function(self, view_func: Callable[..., Any],
                                      blueprint: Blueprint | None) -> list[RateLimit]:
        limits = super()._get_limits_for_view_function(view_func, blueprint)
        own = limits[: len(limits) - len(self._default_rate_limits)]
        return [self._configured_limit(limit) for limit in own or limits]

    def _configured_limit(self, limit: RateLimit) -> RateLimit:
        return self._configured[limit.setting] if isinstance(limit, SettingsRateLimit) else limit


def _rate_limit(setting: str, configured: ConfiguredLimit) -> ConfiguredRateLimit:
    return ConfiguredRateLimit(configured.count, timedelta(seconds=configured.seconds), setting=setting)
