"""Rate limits that follow the settings.

quart-rate-limiter reads a route's limits when its decorator runs, at import time, before any settings exist.
``settings_limit("rate_limit_auth")`` gives a limit whose count and period are looked up in the running app's
settings on every request, so ``ADNET_RATE_LIMIT_*`` applies without module-level state.
"""

from __future__ import annotations

from datetime import timedelta

from quart import current_app
from quart_rate_limiter import RateLimit

from adnet.config import RateLimit as ConfiguredLimit

LIMIT_SETTINGS = frozenset({"rate_limit_public", "rate_limit_auth", "rate_limit_account"})


class SettingsRateLimit(RateLimit):
    """A quart-rate-limiter limit whose count and period are the named settings of the running app."""

    def __init__(self, setting: str) -> None:
        if setting not in LIMIT_SETTINGS:
            raise ValueError(f"unknown rate limit setting {setting!r}")
        self.setting = setting
        self.key_function = None
        self.skip_function = None

    @property
    def count(self) -> int:  # type: ignore[override]
        return self._configured().count

    @property
    def period(self) -> timedelta:  # type: ignore[override]
        return timedelta(seconds=self._configured().seconds)

    def _configured(self) -> ConfiguredLimit:
        return getattr(current_app.extensions["adnet"].settings, self.setting)


def settings_limit(setting: str) -> list[RateLimit]:
    """The ``limits=`` argument of ``quart_rate_limiter.rate_limit`` for one settings-driven limit."""
    return [SettingsRateLimit(setting)]
