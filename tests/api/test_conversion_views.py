"""Proving a wallet for an impression through HTTP (view-through): ``POST /api/conversions/views`` binds the wallet
of the rewards session the viewer's page holds to an impression recorded from the client it was served to, once per
impression; no session, another client, a token never recorded or one of a click binds nothing. A conversion the
advertiser's server reports with that wallet and no click id attributes to the impression within the goal's view
window (``via: view``), and only then: without a view window, or past it, it is not attributed."""

from eth_account import Account

from adnet.campaigns.models import ConversionGoal
from adnet.conversions.models import ViewBinding
from adnet.delivery.models import TrackingEvent
from tests.api.test_conversions import CPA, account, clicked, report
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import event_body, from_address, page, post, served_and_seen
from tests.auth_helpers import bearer, rewards_sign_in, tampered

VIEWER = "10.66.6.1"


async def seen(client, clock, site, address: str = VIEWER) -> dict:
    """An ad of the site served to ``address`` and its impression recorded (billed): the ad as served."""
    ad = await served_and_seen(client, clock, site, address=address)
    response, body = await post(client, event_body(ad, site, fingerprint=f"fp-{address}"))
    assert response.status_code == 201, body
    return ad


async def prove_view(client, site, token: str | None, tracking_token: str, address: str = VIEWER):
    headers = {**page(site), **(bearer(token) if token else {})}
    response = await client.post("/api/conversions/views", json={"trackingToken": tracking_token}, headers=headers,
                                 **from_address(address))
    return response, await response.get_json()


async def test_a_rewards_session_proves_its_wallet_for_a_recorded_impression_once(client, clock):
    advertiser, _, _ = await account(client)
    site, campaign, _, _ = await clicked(client, clock, advertiser)
    ad = await seen(client, clock, site)
    viewer, other = Account.create(), Account.create()
    session = await rewards_sign_in(client, viewer)

    response, body = await prove_view(client, site, session, ad["trackingToken"])
    assert (response.status_code, body) == (201, {"status": "bound", "wallet": viewer.address.lower(),
                                                  "campaignId": campaign.id})
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    binding = await ViewBinding.get()
    impression = await TrackingEvent.get(type="IMPRESSION", fingerprint=f"fp-{VIEWER}")
    assert (binding.impression_event_id, binding.wallet, binding.site_id, binding.seen_at) == (
        impression.id, viewer.address.lower(), site.id, impression.received_at)
    again, _ = await prove_view(client, site, session, ad["trackingToken"])
    assert again.status_code == 200
    taken, taken_body = await prove_view(client, site, await rewards_sign_in(client, other), ad["trackingToken"])
    assert (taken.status_code, taken_body["error"]) == (409, "view_already_bound")
    assert await ViewBinding.all().count() == 1


async def test_nothing_but_a_session_and_a_token_recorded_for_this_client_binds(client, clock):
    advertiser, _, _ = await account(client)
    site, _, _, _ = await clicked(client, clock, advertiser)
    ad = await seen(client, clock, site)
    unrecorded = await served_and_seen(client, clock, site, address="10.66.7.1")
    session = await rewards_sign_in(client, Account.create())

    anonymous, body = await prove_view(client, site, None, ad["trackingToken"])
    assert (anonymous.status_code, body["error"]) == (401, "auth_required")
    elsewhere, body = await prove_view(client, site, session, ad["trackingToken"], address="10.99.9.1")
    assert (elsewhere.status_code, body["error"], body["field"]) == (400, "view_invalid", "trackingToken")
    never, body = await prove_view(client, site, session, unrecorded["trackingToken"], address="10.66.7.1")
    assert (never.status_code, body["error"]) == (400, "view_invalid")
    forged, body = await prove_view(client, site, session, tampered(ad["trackingToken"]))
    assert (forged.status_code, body["error"]) == (400, "view_invalid")
    clock.advance(minutes=16)  # the token has expired
    late, body = await prove_view(client, site, session, ad["trackingToken"])
    assert (late.status_code, body["error"]) == (400, "view_invalid")
    assert not await ViewBinding.exists()


async def test_a_reported_conversion_of_a_viewed_wallet_attributes_to_its_view_within_the_window(client, clock):
    advertiser, session, key = await account(client)
    site, _, goal, _ = await clicked(client, clock, advertiser)
    ad = await seen(client, clock, site)
    viewer = Account.create()
    wallet = viewer.address.lower()
    response, _ = await prove_view(client, site, await rewards_sign_in(client, viewer), ad["trackingToken"])
    assert response.status_code == 201

    status, body = await report(client, key, None, goal, order="no-window", wallet=wallet)
    assert (status, body["attributed"], body["via"], body["reason"]) == (201, False, None, "wallet_unbound")

    edited = await client.patch(f"/api/advertisers/goals/{goal.id}", json={"viewWindowHours": 24},
                                headers=bearer(session))
    assert (await edited.get_json())["viewWindowHours"] == 24
    clock.advance(hours=1)
    status, body = await report(client, key, None, goal, order="in-window", wallet=wallet, value="40")
    assert (status, body["attributed"], body["paid"], body["via"], body["siteId"], body["cost"]) == (
        201, True, True, "view", site.id, str(CPA // 10**18))
    status, body = await report(client, key, None, goal, order="second", wallet=wallet)
    assert body["reason"] == "wallet_cap_reached"  # the wallet cap holds for views as for clicks

    await ConversionGoal.filter(id=goal.id).update(wallet_cap=5)
    clock.advance(hours=24)
    status, body = await report(client, key, None, goal, order="too-late", wallet=wallet)
    assert (body["attributed"], body["via"], body["reason"]) == (False, "view", "outside_window")
    unseen = Account.create().address.lower()
    status, body = await report(client, key, None, goal, order="unseen", wallet=unseen)
    assert (body["attributed"], body["reason"]) == (False, "wallet_unbound")
    status, body = await report(client, key, None, goal, order="nothing")
    assert (status, body["error"], body["field"]) == (400, "missing_field", "clickId")


async def test_the_view_window_is_at_most_a_day(client, clock):
    advertiser, session, _ = await account(client)
    _, _, goal, _ = await clicked(client, clock, advertiser)
    for hours in (25, -1):
        refused = await client.patch(f"/api/advertisers/goals/{goal.id}", json={"viewWindowHours": hours},
                                     headers=bearer(session))
        assert (refused.status_code, (await refused.get_json())["field"]) == (400, "viewWindowHours")
    assert (await ConversionGoal.get(id=goal.id)).view_window_hours == 0
