"""Rate limits that follow the settings.

quart-rate-limiter reads a route's limits when its decorator runs, at import time, before any settings exist.
``settings_limit("rate_limit_auth")`` gives a limit that names a setting; on every request the app's limiter
(``OwnLimitsFirst``) puts the running app's configured count and period in its place, so ``ADNET_RATE_LIMIT_*``
applies without module-level state.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from flask.sansio.blueprints import Blueprint
from quart import Quart
from quart_rate_limiter import RateLimit, RateLimiter
from quart_rate_limiter.store import MemoryStore

from adnet.config import RateLimit as ConfiguredLimit
from adnet.config import Settings

LIMIT_SETTINGS = frozenset({"rate_limit_public", "rate_limit_auth", "rate_limit_account"})


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


class ExpiringMemoryStore(MemoryStore):
    """quart-rate-limiter's in-memory store, less the keys whose limit has fully recovered.

    The library's ``MemoryStore`` keeps an entry per client address and limit for ever, so a server's memory grew
    with every new client address (the soak run measured about 1 MiB a minute at 100 requests/s from many
    addresses). A key whose theoretical arrival time has passed means the same as no key (the limiter takes the
    later of it and now), so at most every ``sweep_seconds`` a write drops all such keys.
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

    def __len__(self) -> int:
        return len(self._tats)


class OwnLimitsFirst(RateLimiter):
    """The app's rate limiter: its default limits apply only to routes that declare no limit of their own, and a
    settings limit is the app's configured one.

    quart-rate-limiter adds the defaults to every route's own limits; a route that declares the same limit as the
    default would then count each request twice against one key and get half its budget. The limiter reads a
    limit's count and period about sixteen times a request, so each settings limit is made a plain ``RateLimit``
    once, from the settings the app was built with. Its keys live in an ``ExpiringMemoryStore`` unless a store is
    given.
    """

    def __init__(self, app: Quart, *, settings: Settings, **kwargs: Any) -> None:
        kwargs.setdefault("store", ExpiringMemoryStore())
        super().__init__(app, **kwargs)
        self._configured = {name: _rate_limit(getattr(settings, name)) for name in LIMIT_SETTINGS}

    def _get_limits_for_view_function(self, view_func: Callable, blueprint: Blueprint | None) -> list[RateLimit]:
        limits = super()._get_limits_for_view_function(view_func, blueprint)
        own = limits[: len(limits) - len(self._default_rate_limits)]
        return [self._configured_limit(limit) for limit in own or limits]

    def _configured_limit(self, limit: RateLimit) -> RateLimit:
        return self._configured[limit.setting] if isinstance(limit, SettingsRateLimit) else limit


def _rate_limit(configured: ConfiguredLimit) -> RateLimit:
    return RateLimit(configured.count, timedelta(seconds=configured.seconds))
