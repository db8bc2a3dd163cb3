"""Consent signals through HTTP: serve and track with a TC or GPP string record consent-limited events as the
strings say (``adnet.delivery.consent``), keep no viewer id or frequency state for them, still count them; a string
that cannot be decoded is a 400 that changes nothing; ``GET /api/consent`` answers the same rule."""

from __future__ import annotations

import pytest
from quart import current_app

from adnet.delivery.models import DedupKey, TrackingEvent, TrafficDaily
from adnet.delivery.tokens import verify_token
from tests.adnet.delivery.test_consent import (
    PURPOSE_1_GIVEN,
    PURPOSE_1_REFUSED,
    USNAT_DEFAULT,
    USNAT_OPTED_OUT,
)
from tests.api.test_track import billed, event_body, fresh_address, from_address, page, post, serve_ad, setup_ad
from tests.conftest import rebuild_index
from tests.factories import make_campaign, make_creative, make_site

REFUSED = {"gdpr": "1", "gdprConsent": PURPOSE_1_REFUSED}
GIVEN = {"gdpr": "1", "gdprConsent": PURPOSE_1_GIVEN}


@pytest.fixture(autouse=True)
async def app_context(app):
    async with app.app_context():
        yield


async def track(client, clock, site, consent: dict, *, fingerprint: str = "fp-viewer-1", **serve_params):
    """A banner served with ``consent`` (and a viewer id), seen for two seconds, its impression tracked with the
    same signals as JSON (``gdpr`` as a number, the way a page's script writes it)."""
    ad = await serve_ad(client, site, viewer="viewer-1", **consent, **serve_params)
    clock.advance(seconds=2)
    signals = {**consent, **({"gdpr": int(consent["gdpr"])} if "gdpr" in consent else {})}
    response, body = await post(client, event_body(ad, site, fingerprint=fingerprint, **signals))
    return ad, response, body


async def test_refused_consent_records_the_event_consent_limited_without_the_viewer(client, clock):
    site, campaign, _creative = await setup_ad()
    _ad, response, body = await track(client, clock, site, REFUSED)
    assert response.status_code == 201
    assert await billed(body)  # still counted and paid: the impression was seen
    event = await TrackingEvent.get(id=body["eventId"])
    assert (event.consent_limited, event.fingerprint) == (True, "")
    assert not await DedupKey.filter(fingerprint="fp-viewer-1").exists()
    counted = await TrafficDaily.get(site_id=site.id, campaign_id=campaign.id, type="IMPRESSION", reason="")
    assert counted.events == 1  # the network-level counts take it as any other


@pytest.mark.parametrize("consent", [GIVEN, {}, {"gdpr": "0", "gdprConsent": PURPOSE_1_REFUSED},
                                     {"gpp": USNAT_DEFAULT, "gppSid": "7"}])
async def test_given_or_absent_consent_records_the_event_as_today(client, clock, consent):
    site, _campaign, _creative = await setup_ad()
    _ad, response, body = await track(client, clock, site, consent)
    assert response.status_code == 201 and await billed(body)
    event = await TrackingEvent.get(id=body["eventId"])
    assert (event.consent_limited, event.fingerprint) == (False, "fp-viewer-1")
    assert await DedupKey.filter(fingerprint="fp-viewer-1").exists()


async def test_a_gpp_opt_out_is_consent_limited(client, clock):
    site, _campaign, _creative = await setup_ad()
    _ad, _response, body = await track(client, clock, site, {"gpp": USNAT_OPTED_OUT, "gppSid": "7"})
    assert (await TrackingEvent.get(id=body["eventId"])).consent_limited


async def test_a_consent_limited_event_is_deduplicated_by_its_served_ad_not_its_viewer(client, clock):
    site, _campaign, _creative = await setup_ad()
    ad, _response, first = await track(client, clock, site, REFUSED)
    again, second = await post(client, event_body(ad, site, fingerprint="fp-viewer-2", **{**REFUSED, "gdpr": 1}))
    assert (again.status_code, second) == (200, {"status": "duplicate"})
    # Another ad served to the same viewer, whose id the page sends again: recorded (no viewer key joins them).
    _ad, response, third = await track(client, clock, site, REFUSED)
    assert response.status_code == 201 and third["eventId"] != first["eventId"]
    assert await TrackingEvent.filter(consent_limited=True).count() == 2


async def test_consent_limited_impressions_keep_no_frequency_state(client, clock):
    clock.advance(minutes=5)
    site = await make_site()
    capped = await make_campaign(frequency_cap=1, frequency_hours=1, site_allow=[site.id])
    await make_creative(capped)
    await rebuild_index(current_app)
    for number in range(2):  # a token naming the viewer (served without signals), tracked with consent refused
        ad = await serve_ad(client, site, viewer="viewer-1")
        clock.advance(seconds=2)
        _response, body = await post(client, event_body(ad, site, fingerprint=f"fp-{number}",
                                                        **{**REFUSED, "gdpr": 1}))
        assert await billed(body)  # the cap counts no viewer here: nothing is frequency_capped
    # Nothing was counted for the viewer: with consent given it is still offered the capped campaign.
    response = await client.get("/api/serve", query_string={"siteId": site.id, "viewer": "viewer-1", **GIVEN},
                                headers=page(site), **from_address(fresh_address()))
    assert (await response.get_json())["ad"]["campaignId"] == capped.id


async def test_serving_with_consent_refused_signs_no_viewer_into_the_token(client, clock, services):
    site, _campaign, _creative = await setup_ad()
    secrets = (services.settings.tracking_secret,)
    refused = await serve_ad(client, site, viewer="viewer-1", **REFUSED)
    given = await serve_ad(client, site, viewer="viewer-1", **GIVEN)
    assert verify_token(refused["trackingToken"], secrets=secrets, now=clock.now()).viewer is None
    assert verify_token(given["trackingToken"], secrets=secrets, now=clock.now()).viewer == "viewer-1"


async def test_the_operators_vendor_id_needs_the_vendors_consent(client, clock, services):
    site, _campaign, _creative = await setup_ad()
    services.tracker.settings = services.tracker.settings.model_copy(update={"iab_vendor_id": 3})
    _ad, _response, body = await track(client, clock, site, GIVEN)  # vendor 3 has no consent in it
    assert (await TrackingEvent.get(id=body["eventId"])).consent_limited
    services.tracker.settings = services.tracker.settings.model_copy(update={"iab_vendor_id": 2})
    _ad, _response, body = await track(client, clock, site, GIVEN, fingerprint="fp-viewer-2")
    assert not (await TrackingEvent.get(id=body["eventId"])).consent_limited


@pytest.mark.parametrize(("signals", "code", "field"), [
    ({"gdpr": 1, "gdprConsent": "BOEFEAyOEFEAyAHABDENAI4AAAB9vABAASA"}, "invalid_consent", "gdprConsent"),
    ({"gdpr": 1, "gdprConsent": "CPSG_8APSG_8AAAAAA"}, "invalid_consent", "gdprConsent"),
    ({"gpp": "DBABLA"}, "invalid_consent", "gpp"),
    ({"gdprConsent": "not base64!"}, "invalid_field", "gdprConsent"),
    ({"gdpr": 2}, "invalid_field", "gdpr"),
    ({"gppSid": "7,x"}, "invalid_field", "gppSid"),
])
async def test_a_string_that_cannot_be_decoded_is_400_and_changes_nothing(client, clock, signals, code, field):
    site, _campaign, _creative = await setup_ad()
    ad = await serve_ad(client, site)
    clock.advance(seconds=2)
    response, body = await post(client, event_body(ad, site, **signals))
    assert (response.status_code, body["error"], body["field"]) == (400, code, field)
    served = await client.get("/api/serve", query_string={"siteId": site.id, **{k: str(v) for k, v in signals.items()}})
    assert (served.status_code, (await served.get_json())["field"]) == (400, field)
    assert await TrackingEvent.all().count() == 0


@pytest.mark.parametrize(("query", "limited", "reason"), [
    ({}, False, None),
    (GIVEN, False, None),
    (REFUSED, True, "tcf_purpose_1_refused"),
    ({"gdpr": "1"}, True, "tcf_no_consent_string"),
    ({"gpp": USNAT_OPTED_OUT, "gppSid": "7"}, True, "gpp_opt_out"),
])
async def test_the_consent_endpoint_answers_the_same_rule(client, query, limited, reason):
    response = await client.get("/api/consent", query_string=query, headers={"Origin": "https://news.example"})
    assert response.status_code == 200
    assert await response.get_json() == {"limited": limited, "reason": reason}
    assert response.headers["Access-Control-Allow-Origin"] == "*"
