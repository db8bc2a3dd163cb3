"""Rotation without HTTP: how a campaign's weight is shared among its creatives, evenly, by weight, or in favour of
the best click-through rate once every creative has enough billed impressions."""

from __future__ import annotations

import pytest

from adnet.campaigns.models import Rotation
from adnet.delivery.rotation import EXPLORATION, MIN_IMPRESSIONS, creative_shares
from tests.adnet.delivery.test_selection import entry


def creatives(campaign, *weights):
    base = campaign.creatives[0]
    return [base.__class__(**{**base.__dict__, "id": f"ad_{number}", "weight": weight})
            for number, weight in enumerate(weights)]


def test_even_rotation_ignores_weights():
    campaign = entry(rotation=Rotation.EVEN)
    assert creative_shares(campaign, creatives(campaign, 1, 3), {}) == [0.5, 0.5]


def test_weighted_rotation_follows_the_weights():
    campaign = entry(rotation=Rotation.WEIGHTED)
    assert creative_shares(campaign, creatives(campaign, 1, 3), {}) == [0.25, 0.75]


def test_best_ctr_is_even_until_every_creative_has_enough_impressions_then_favours_the_best():
    campaign = entry(rotation=Rotation.BEST_CTR)
    three = creatives(campaign, 1, 1, 1)
    almost = {"ad_0": [MIN_IMPRESSIONS, 5], "ad_1": [MIN_IMPRESSIONS, 30], "ad_2": [MIN_IMPRESSIONS - 1, 90]}
    assert creative_shares(campaign, three, almost) == [pytest.approx(1 / 3)] * 3
    enough = {**almost, "ad_2": [4 * MIN_IMPRESSIONS, 40]}  # 1 % against ad_1's 3 %
    shares = creative_shares(campaign, three, enough)
    assert shares == [pytest.approx(EXPLORATION / 3), pytest.approx(1 - EXPLORATION + EXPLORATION / 3),
                      pytest.approx(EXPLORATION / 3)]
    assert sum(shares) == pytest.approx(1)


def test_a_single_creative_takes_the_whole_weight():
    campaign = entry(rotation=Rotation.BEST_CTR)
    assert creative_shares(campaign, creatives(campaign, 7), {}) == [1.0]
