"""Reach and frequency as pure functions: distinct viewers, average frequency and the distribution are exact on
small fixtures and on a large synthetic audience; the viewer digest is stable within a campaign and unrelated
across campaigns."""

from __future__ import annotations

import random

from adnet.delivery.reach import viewer_key
from adnet.reporting.reach import BUCKETS, bucket_of, frequency_of


def test_each_count_falls_in_its_bucket():
    expected = {1: "1", 2: "2", 3: "3", 4: "4-5", 5: "4-5", 6: "6-10", 10: "6-10", 11: ">10", 500: ">10"}
    assert {count: bucket_of(count) for count in expected} == expected


def test_a_small_fixture_gives_exact_figures():
    figures = frequency_of([1, 1, 2, 3, 4, 5, 7, 12])
    assert figures.reach == 8
    assert figures.impressions == 35
    assert figures.average == 35 / 8
    assert figures.distribution == {"1": 2, "2": 1, "3": 1, "4-5": 2, "6-10": 1, ">10": 1}


def test_no_viewers_give_zeros_in_every_bucket():
    figures = frequency_of([])
    assert (figures.reach, figures.impressions, figures.average) == (0, 0, 0.0)
    assert figures.distribution == {name: 0 for name, _ in BUCKETS}


def test_a_large_audience_is_counted_exactly():
    """100 000 viewers of one campaign: their digests stay distinct (no collision), so reach is exact."""
    rng = random.Random(7)
    viewers = [f"viewer-{number}" for number in range(100_000)]
    counts = {viewer_key("cmp_a", viewer): rng.randint(1, 15) for viewer in viewers}
    assert len(counts) == len(viewers)
    figures = frequency_of(counts.values())
    assert figures.reach == 100_000
    assert figures.impressions == sum(counts.values())
    assert sum(figures.distribution.values()) == 100_000


def test_the_digest_names_a_viewer_per_campaign_without_the_id():
    key = viewer_key("cmp_a", "viewer-1")
    assert key == viewer_key("cmp_a", "viewer-1")
    assert key != viewer_key("cmp_b", "viewer-1")
    assert "viewer-1" not in key and len(key) == 32
