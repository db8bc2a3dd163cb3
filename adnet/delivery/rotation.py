"""Rotation: how a campaign shares the slots it wins among its creatives (of the size asked for).

- ``even`` (the default): each creative equally.
- ``weighted``: in proportion to each creative's ``weight`` (1 to 100).
- ``best_ctr``: evenly until every creative has ``MIN_IMPRESSIONS`` billed impressions; from then on the creative
  with the best click-through rate (billed clicks over billed impressions) gets ``1 - EXPLORATION`` of the slots
  and all of them share the rest evenly, so a creative that starts doing better can still show it. The counts are
  read when the index is built and raised by tracking as it bills (``adnet.delivery.serving.Server.billed``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from adnet.campaigns.models import Rotation
from adnet.delivery.index import CampaignEntry, CreativeEntry

MIN_IMPRESSIONS = 1000
EXPLORATION = 0.1


def creative_shares(campaign: CampaignEntry, creatives: Sequence[CreativeEntry],
                    stats: Mapping[str, list[int]]) -> list[float]:
    """Each of ``creatives``' share of the campaign's selection weight, in their order; they add up to 1."""
    count = len(creatives)
    if campaign.rotation == Rotation.WEIGHTED:
        total = sum(creative.weight for creative in creatives)
        return [creative.weight / total for creative in creatives]
    if campaign.rotation == Rotation.BEST_CTR and count > 1:
        figures = [stats.get(creative.id, (0, 0)) for creative in creatives]
        if all(impressions >= MIN_IMPRESSIONS for impressions, _ in figures):
            best = max(range(count), key=lambda position: figures[position][1] / figures[position][0])
            return [(1 - EXPLORATION if position == best else 0.0) + EXPLORATION / count for position in range(count)]
    return [1 / count] * count
