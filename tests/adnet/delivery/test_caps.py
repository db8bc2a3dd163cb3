"""Billing caps without HTTP: epoch-aligned windows, the windows an event counts in, and the settings."""

from datetime import UTC, datetime

import pytest

from adnet.config import ConfigError, RateLimit
from adnet.delivery.caps import Caps, day_start, spend_window, window_start
from adnet.delivery.models import EventType
from tests.conftest import make_settings

CAPS = Caps(site_impressions=RateLimit(5, 300), site_clicks=RateLimit(2, 300),
            campaign_impressions=RateLimit(3, 600), campaign_clicks=RateLimit(1, 60))


def test_windows_are_aligned_to_the_epoch():
    moment = datetime(2026, 3, 1, 12, 7, 59, tzinfo=UTC)
    assert window_start(moment, 300) == datetime(2026, 3, 1, 12, 5, tzinfo=UTC)
    assert window_start(moment, 60) == datetime(2026, 3, 1, 12, 7, tzinfo=UTC)
    assert window_start(datetime(2026, 3, 1, 12, 10, tzinfo=UTC), 300) == datetime(2026, 3, 1, 12, 10, tzinfo=UTC)
    assert day_start(moment) == datetime(2026, 3, 1, tzinfo=UTC)


def test_an_event_counts_per_site_and_per_campaign_for_its_network_and_type():
    moment = datetime(2026, 3, 1, 12, 7, 59, tzinfo=UTC)
    impressions = CAPS.client_windows(site_id="site_a", campaign_id="cmp_b", network="203.0.113.0/24",
                                      kind=EventType.IMPRESSION, at=moment)
    assert impressions == [
        (("site:site_a:203.0.113.0/24:IMPRESSION", datetime(2026, 3, 1, 12, 5, tzinfo=UTC)), 5),
        (("campaign:cmp_b:203.0.113.0/24:IMPRESSION", datetime(2026, 3, 1, 12, 0, tzinfo=UTC)), 3),
    ]
    clicks = CAPS.client_windows(site_id="site_a", campaign_id="cmp_b", network="203.0.113.0/24",
                                 kind=EventType.CLICK, at=moment)
    assert [cap for _, cap in clicks] == [2, 1]
    assert clicks[1][0] == ("campaign:cmp_b:203.0.113.0/24:CLICK", datetime(2026, 3, 1, 12, 7, tzinfo=UTC))
    assert spend_window("cmp_b", moment) == ("spend:cmp_b", datetime(2026, 3, 1, tzinfo=UTC))


def test_defaults_are_no_looser_than_five_billed_views_per_five_minutes(tmp_path):
    settings = make_settings("sqlite://:memory:", tmp_path)
    assert Caps.of(settings) == Caps(RateLimit(5, 300), RateLimit(2, 300), RateLimit(3, 300), RateLimit(1, 300))
    tighter = make_settings("sqlite://:memory:", tmp_path, ADNET_CAP_SITE_IMPRESSIONS="2/600")
    assert tighter.cap_site_impressions == RateLimit(2, 600)
    with pytest.raises(ConfigError, match="ADNET_CAP_CAMPAIGN_CLICKS"):
        make_settings("sqlite://:memory:", tmp_path, ADNET_CAP_CAMPAIGN_CLICKS="1/172800")
    with pytest.raises(ConfigError, match="ADNET_CAP_SITE_CLICKS"):
        make_settings("sqlite://:memory:", tmp_path, ADNET_CAP_SITE_CLICKS="many")
