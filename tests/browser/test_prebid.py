"""Prebid.js with adnet's bid adapter (integrations/prebid) in Chromium, on a publisher's page of another origin than
adnet: prebid.js from the npm registry (tests/browser/prebid, installed on first use from its lock file) bundled
with the adapter and a stub bidder. adnet's bid wins against the stub's lower one, renders in Prebid's frame, and its
impression, reported once half of it was in view for a second, is billed once, even when the winning bid is rendered
twice; with the page's consent platform refusing storage (TCF purpose 1), no viewer id is kept on the device. The
adapter's functions, called one by one as Prebid calls them: which bids are valid, the requests (floors, consent
strings, one per network and site), and which answers become bids."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Frame

from adnet.delivery.models import EventType, TrackingEvent
from tests.browser.conftest import LiveServer, PublisherSite, Visitor
from tests.browser.test_banners import track_requests, wait_for_events
from tests.npm import npm_install

# The impressions here are billed, and the billing caps count per client network.
pytestmark = pytest.mark.usefixtures("fresh_billing_windows")
PREBID_DIR = Path(__file__).resolve().parent / "prebid"
TC_STRING = "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"
CONSENT_STUB = """
window.__tcfapi = function (command, version, callback) {
  var tcData = { tcString: "%(tc)s", gdprApplies: true, eventStatus: "tcloaded", cmpStatus: "loaded", listenerId: 1,
    tcfPolicyVersion: 5, purpose: { consents: { 1: %(given)s, 2: %(given)s }, legitimateInterests: {} },
    vendor: { consents: {}, legitimateInterests: {} } };
  if (command === "ping") callback({ gdprApplies: true, cmpLoaded: true, cmpStatus: "loaded", apiVersion: "2.2" },
    true);
  else if (command === "addEventListener" || command === "getTCData") callback(tcData, true);
  else if (command === "removeEventListener") callback(true, true);
};
"""
STUB_CPM = 0.01
# Resolves once the auction is over with the winning bid rendered into the page's frame(s): what Prebid answered.
AUCTION = """
window.pbjs = window.pbjs || { que: [] };
window.pbjs.bidderSettings = { adnet: { storageAllowed: true } };
window.pbjs.que.push(function () {
  pbjs.setConfig({ consentManagement: { gdpr: { cmpApi: "iab", timeout: 1000, defaultGdprScope: true } } });
  pbjs.addAdUnits([{ code: "slot", mediaTypes: { banner: { sizes: [[300, 250]] } }, bids: [
    { bidder: "adnet", params: { siteId: "%(site)s", endpoint: "%(adnet)s" } },
    { bidder: "stub", params: { url: "/stub-bid.json" } }] }]);
  pbjs.requestBids({ timeout: 5000, bidsBackHandler: function () {
    var bids = pbjs.getBidResponsesForAdUnitCode("slot").bids;
    var winner = pbjs.getHighestCpmBids("slot")[0];
    document.querySelectorAll("iframe.slot").forEach(function (frame) {
      if (winner) pbjs.renderAd(frame.contentWindow.document, winner.adId);
    });
    window.__auction = { winner: winner && { bidder: winner.bidderCode, cpm: winner.cpm, currency: winner.currency,
      creativeId: winner.creativeId, advertiserDomains: winner.meta.advertiserDomains },
      bidders: bids.map(function (bid) { return bid.bidderCode; }).sort() };
  } });
});
"""


@pytest.fixture(scope="module")
def prebid_bundle() -> str:
    """prebid.js from npm with adnet's adapter and the stub bidder, bundled by esbuild (tests/browser/prebid)."""
    npm_install(PREBID_DIR, (PREBID_DIR / "node_modules" / "prebid.js" / "package.json",
                             PREBID_DIR / "node_modules" / "esbuild" / "package.json"), "prebid.js and esbuild")
    result = subprocess.run(["node", "build.mjs"], cwd=PREBID_DIR, capture_output=True, text=True,  # noqa: S607
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return (PREBID_DIR / "dist" / "prebid.js").read_text()


@pytest.fixture
def bid_requests(visitor: Visitor) -> Iterator[list[dict[str, Any]]]:
    """Every body the page posts to adnet's /api/bid."""
    sent: list[dict[str, Any]] = []
    visitor.page.on("request", lambda request: sent.append(json.loads(request.post_data or "{}"))
                    if request.url.endswith("/api/bid") else None)
    yield sent


def auction_page(visitor: Visitor, server: LiveServer, site: PublisherSite, bundle: str, *, consent: bool,
                 frames: int = 1) -> dict[str, Any]:
    """Open a publisher's page that runs a Prebid auction for one 300x250 slot with adnet and the stub bidder,
    with a consent platform that gives or refuses storage, and render the winner into ``frames`` frames; what
    the auction answered."""
    site.put("/prebid.js", bundle)
    site.put("/stub-bid.json", json.dumps({"cpm": STUB_CPM, "currency": "G$"}))
    slots = "".join('<iframe class="slot" width="300" height="250" style="border:0;display:block"></iframe>'
                    for _ in range(frames))
    html = ('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Publisher</title>'
            '<link rel="icon" href="data:,">'
            f'<script>{CONSENT_STUB % {"tc": TC_STRING, "given": "true" if consent else "false"}}</script>'
            f'<script>{AUCTION % {"site": server.demo["pageSiteId"], "adnet": server.url}}</script>'
            '<script async src="/prebid.js"></script>'
            f'</head><body><h1>An article</h1>{slots}<p>Publisher text.</p></body></html>')
    page = visitor.page
    page.goto(site.put(f"/article/prebid-{time.monotonic_ns()}", html))
    page.wait_for_function("window.__auction !== undefined", timeout=15_000)
    return page.evaluate("window.__auction")


def creative_frames(visitor: Visitor) -> list[Frame]:
    """The frames Prebid rendered adnet's markup in (Prebid's own renderer frame aside)."""
    return [frame for frame in visitor.page.frames
            if frame.url == "about:srcdoc" and frame.evaluate("!!document.getElementById('adnet-bid')")]


def reported(frame: Frame, name: str) -> bool:
    return frame.evaluate(f"(window.__adnetEvents || []).some((event) => event.name === {name!r})")


def test_the_adnet_bid_wins_renders_and_its_impression_is_billed_once(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite, prebid_bundle: str,
        bid_requests: list[dict[str, Any]]) -> None:
    sent = track_requests(visitor)
    auction = auction_page(visitor, server, publisher_site, prebid_bundle, consent=True, frames=2)

    assert auction["bidders"] == ["adnet", "stub"]
    winner = auction["winner"]
    assert winner["bidder"] == "adnet" and winner["cpm"] > STUB_CPM and winner["currency"] == "G$"
    assert winner["creativeId"].startswith("ad_") and winner["advertiserDomains"]
    [request] = bid_requests
    assert request["siteId"] == server.demo["pageSiteId"] and request["pageUrl"].startswith(publisher_site.origin)
    assert (request["gdpr"], request["gdprConsent"]) == (1, TC_STRING)
    assert request["bids"][0]["sizes"] == ["300x250"]
    viewer = request["viewer"]
    # With consent to store, the viewer id is kept where adnet's embed keeps it.
    assert visitor.page.evaluate("localStorage.getItem('adnet:fp')") == viewer

    # Both frames draw the banner and report it once in view for a second; one served bid is one billed impression.
    deadline = time.monotonic() + 15
    while not (len(creative_frames(visitor)) == 2 and all(reported(frame, "impression")
                                                          for frame in creative_frames(visitor))):
        assert time.monotonic() < deadline, "the creatives did not report their impressions"
        time.sleep(0.1)
    for frame in creative_frames(visitor):
        assert frame.locator("[id=adnet-bid]").get_attribute("data-adnet-ad") == winner["creativeId"]
    visitor.page.wait_for_timeout(300)  # the second report has arrived, and its request event been seen
    assert [event["type"] for event in sent] == ["IMPRESSION", "IMPRESSION"]
    assert len({event["trackingToken"] for event in sent}) == 1
    [stored] = wait_for_events(server, viewer, EventType.IMPRESSION, 1)
    assert (stored["billable"], stored["refusal_reason"]) == (True, None)
    assert stored["page_url"].startswith(publisher_site.origin)
    [billed] = server.call(lambda: TrackingEvent.filter(fingerprint=viewer, billable=True).values(
        "site_id", "cost", "publisher_amount"))
    assert billed["site_id"] == server.demo["pageSiteId"] and billed["cost"] > billed["publisher_amount"] > 0


def test_with_storage_refused_no_viewer_id_is_kept_on_the_device(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite, prebid_bundle: str,
        bid_requests: list[dict[str, Any]]) -> None:
    auction = auction_page(visitor, server, publisher_site, prebid_bundle, consent=False)

    assert auction["winner"]["bidder"] == "adnet"
    [request] = bid_requests
    assert (request["gdpr"], request["gdprConsent"]) == (1, TC_STRING)
    deadline = time.monotonic() + 15
    while not (creative_frames(visitor) and reported(creative_frames(visitor)[0], "impression")):
        assert time.monotonic() < deadline, "the creative did not report its impression"
        time.sleep(0.1)
    # The auction, the creative and its impression ran; nothing of adnet's is in the page's storage.
    assert visitor.page.evaluate("Object.keys(localStorage).filter((key) => key.startsWith('adnet'))") == []
    [impression] = wait_for_events(server, request["viewer"], EventType.IMPRESSION, 1)
    assert impression["billable"] is True


# The adapter's functions called as Prebid calls them, on a page of the publisher's (they need a browser's window).
SPEC_CALLS = """() => {
  const spec = window.__adnetSpec;
  const banner = { banner: { sizes: [[300, 250], [728, 90]] } };
  const bid = (params, extra) => Object.assign({ bidder: "adnet", params, mediaTypes: banner, bidId: "b-" +
    Object.keys(params).length, adUnitCode: "slot" }, extra || {});
  const site = { siteId: "site_bSz9x4mYOGme-ox5G8mmcw", endpoint: "https://ads.example/" };
  const valid = {
    good: spec.isBidRequestValid(bid(site)),
    noSite: spec.isBidRequestValid(bid({ endpoint: site.endpoint })),
    badSite: spec.isBidRequestValid(bid({ siteId: "pub_x", endpoint: site.endpoint })),
    noEndpoint: spec.isBidRequestValid(bid({ siteId: site.siteId })),
    scriptEndpoint: spec.isBidRequestValid(bid({ siteId: site.siteId, endpoint: "javascript:alert(1)" })),
    noSizes: spec.isBidRequestValid(bid(site, { mediaTypes: { banner: { sizes: [] } } })),
  };
  const floored = bid({ ...site, placement: "top" }, { bidId: "floored", getFloor: (asked) =>
    ({ floor: 0.5, currency: asked.currency, asked }) });
  const other = bid({ siteId: "site_another-site-id-000000", endpoint: "https://ads.example" }, { bidId: "other" });
  const requests = spec.buildRequests([floored, bid(site, { bidId: "plain" }), other], {
    refererInfo: { page: "https://publisher.example/article" },
    gdprConsent: { gdprApplies: true, consentString: "TCSTRING", vendorData: { purpose: { consents: { 1: false } } } },
    gppConsent: { gppString: "DBABMA~TCSTRING", applicableSections: [2, 6] },
  });
  const answered = spec.interpretResponse({ body: { bids: [
    { requestId: "plain", cpm: 1.54, currency: "G$", width: 300, height: 250, ad: "<div></div>", ttl: 300,
      creativeId: "ad_1", netRevenue: true, mediaType: "banner", meta: { advertiserDomains: ["advertiser.example"] } },
    { requestId: "free", cpm: 0, ad: "<div></div>" }, { cpm: 2, ad: "<div></div>" }, "junk"] } });
  return { valid, requests: requests.map((request) => ({ ...request, data: JSON.parse(request.data) })), answered,
    stored: Object.keys(localStorage).filter((key) => key.startsWith("adnet")),
    empty: spec.interpretResponse({ body: {} }), syncs: spec.getUserSyncs({}, []) };
}"""


def test_the_adapter_builds_requests_and_reads_bids_as_prebid_expects(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite, prebid_bundle: str) -> None:
    publisher_site.put("/prebid.js", prebid_bundle)
    visitor.page.goto(publisher_site.put(f"/spec-{time.monotonic_ns()}", '<!doctype html><title>Spec</title>'
                                         '<script src="/prebid.js"></script>'))
    found = visitor.page.evaluate(SPEC_CALLS)

    assert found["valid"] == {"good": True, "noSite": False, "badSite": False, "noEndpoint": False,
                              "scriptEndpoint": False, "noSizes": False}
    first, second = found["requests"]
    assert {key: first[key] for key in ("method", "url", "options")} == {
        "method": "POST", "url": "https://ads.example/api/bid",
        "options": {"contentType": "text/plain", "withCredentials": False}}
    data = first["data"]
    assert {key: data[key] for key in ("siteId", "pageUrl", "gdpr", "gdprConsent", "gpp", "gppSid")} == {
        "siteId": "site_bSz9x4mYOGme-ox5G8mmcw", "pageUrl": "https://publisher.example/article", "gdpr": 1,
        "gdprConsent": "TCSTRING", "gpp": "DBABMA~TCSTRING", "gppSid": "2,6"}
    # Floors are asked in the ad server currency (USD without the currency module) for the banner, any size.
    assert data["bids"] == [
        {"bidId": "floored", "adUnitCode": "slot", "sizes": ["300x250", "728x90"], "placement": "top",
         "floor": 0.5, "floorCurrency": "USD"},
        {"bidId": "plain", "adUnitCode": "slot", "sizes": ["300x250", "728x90"], "placement": ""}]
    assert second["data"]["siteId"] == "site_another-site-id-000000" and second["data"]["bids"][0]["bidId"] == "other"
    # Purpose 1 refused: the same viewer id of the page for both requests, and nothing stored.
    assert data["viewer"] == second["data"]["viewer"] and data["viewer"].startswith("fp_")
    assert found["stored"] == []
    assert found["answered"] == [{
        "requestId": "plain", "cpm": 1.54, "currency": "G$", "width": 300, "height": 250, "ad": "<div></div>",
        "ttl": 300, "creativeId": "ad_1", "netRevenue": True, "mediaType": "banner",
        "meta": {"advertiserDomains": ["advertiser.example"]}}]
    assert found["empty"] == [] and found["syncs"] == []
