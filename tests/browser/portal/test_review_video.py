"""A video creative in the operators' review queue plays in headless Chromium although it lives on a plain http
host of another origin, which the portal's CSP does not name: adnet serves it (``portal.operators.operator_banner``),
at its declared size, at 1280 and 390 px, with a clean console and axe, and no sideways scroll on a phone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from adnet.campaigns.models import CampaignStatus, CreativeStatus, MediaType
from tests.browser.conftest import (
    OPERATOR_INDEX,
    LiveServer,
    PublisherSite,
    serious_violations,
    sideways_overflow,
    sign_in_to_portal,
)
from tests.factories import make_campaign, make_creative

# A 300x250 VP8 WebM of about a second, recorded once from a canvas by Chromium's MediaRecorder.
CLIP = (Path(__file__).resolve().parent.parent / "fixtures" / "clip.webm").read_bytes()
# The picture of docs/advertisers.md, rewritten only by ``make screenshots``.
SCREENSHOT = Path(__file__).resolve().parents[3] / "docs" / "screenshots" / "review-queue.png"
UPDATE_SCREENSHOTS = os.environ.get("ADNET_UPDATE_SCREENSHOTS") == "1"


@pytest.mark.parametrize("width", [1280, 390])
def test_a_video_creative_on_an_http_host_plays_in_the_queue(open_portal, server: LiveServer,
                                                             publisher_site: PublisherSite, width: int,
                                                             tmp_path: Path) -> None:
    publisher_site.pages[f"/clip-{width}.webm"] = CLIP
    clip_url = f"{publisher_site.origin}/clip-{width}.webm"  # http, another origin: the CSP would block it

    async def in_review() -> tuple[str, str]:
        campaign = await make_campaign(status=CampaignStatus.REVIEW, name=f"Video at {width}",
                                       now=server.clock.now())
        creative = await make_creative(campaign, status=CreativeStatus.REVIEW, banner_url=clip_url,
                                       media_type=MediaType.VIDEO, now=server.clock.now())
        return campaign.id, creative.id

    campaign_id, creative_id = server.call(in_review)
    page, console = open_portal(OPERATOR_INDEX, viewport={"width": width, "height": 900})
    sign_in_to_portal(page)
    page.goto(f"{server.url}/portal/operator")
    video = page.locator(f"#review-{campaign_id} .creative-box video")
    expect(video).to_have_attribute("src", f"/portal/operator/creatives/{creative_id}/banner")  # served by adnet
    video.scroll_into_view_if_needed()
    page.wait_for_function("video => video.readyState >= 1 && video.videoWidth === 300", arg=video.element_handle())
    box = video.bounding_box()
    assert box is not None and (round(box["width"]), round(box["height"])) == (300, 250)
    expect(page.locator(f"#review-{campaign_id}")).to_contain_text(f"Its address: {clip_url}")
    assert serious_violations(page, f"#review-{campaign_id}") == []
    assert sideways_overflow(page) == 0
    assert console.errors() == [] and console.page_errors == []
    if width == 1280:
        screenshot = SCREENSHOT if UPDATE_SCREENSHOTS else tmp_path / SCREENSHOT.name
        page.locator(f"#review-{campaign_id}").screenshot(path=str(screenshot))
        assert screenshot.stat().st_size > 10_000  # a rendered card, not a blank one
