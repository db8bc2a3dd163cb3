"""The client network limit of conversions through HTTP: a goal takes at most ``ADNET_CONVERSION_NETWORK_LIMIT``
attributed conversions per UTC day whose clicks came from one client network; beyond, a conversion is recorded as
``client_network_limit`` and not paid, exactly also when the reports arrive at once, and another network's click or
the next day is counted on its own."""

import asyncio

import pytest

from adnet.conversions.models import Conversion
from adnet.money import ledger
from adnet.money.audit import audit
from tests.api.test_conversions import CPA, account, click_id_of, clicked, report
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import event_body, post, served_and_seen
from tests.conftest import make_settings

LIMIT = 2


@pytest.fixture
def settings(database_url, data_dir):
    return make_settings(database_url, data_dir, ADNET_CONVERSION_NETWORK_LIMIT=str(LIMIT))


async def click_from(client, clock, site, address: str, viewer: str) -> str:
    """A viewer at ``address`` is served the site's ad, sees it and clicks it: the click's id. Clicks of one network
    are six minutes apart, past its per-campaign click cap."""
    clock.advance(minutes=6)
    ad = await served_and_seen(client, clock, site, address=address)
    await post(client, event_body(ad, site, fingerprint=viewer))
    response, body = await post(client, event_body(ad, site, type="CLICK", fingerprint=viewer))
    assert response.status_code == 201, body
    return click_id_of(body)


async def test_a_networks_conversions_beyond_the_daily_limit_are_recorded_unpaid(client, clock):
    advertiser, _, key = await account(client)
    site, campaign, goal, _ = await clicked(client, clock, advertiser)  # its click: another network's
    clicks = [await click_from(client, clock, site, f"10.77.7.{number}", f"fp-net-{number}") for number in range(4)]
    other = await click_from(client, clock, site, "10.88.8.1", "fp-other")
    before = await ledger.balance(ledger.campaign(campaign.id))

    answers = await asyncio.gather(*(report(client, key, click, goal, order=f"order-{number}")
                                     for number, click in enumerate(clicks[:3])))
    assert {status for status, _ in answers} == {201}
    outcomes = sorted((body["attributed"], body["paid"], body["reason"]) for _, body in answers)
    assert outcomes == [(False, False, "client_network_limit"), (True, True, None), (True, True, None)]
    status, body = await report(client, key, other, goal, order="order-other")
    assert (status, body["paid"], body["reason"]) == (201, True, None)
    assert await ledger.balance(ledger.campaign(campaign.id)) == before - 3 * CPA

    clock.advance(days=1)  # the next UTC day counts again
    status, body = await report(client, key, clicks[3], goal, order="order-next-day")
    assert (status, body["paid"], body["reason"]) == (201, True, None)
    assert await Conversion.filter(reason="client_network_limit").count() == 1
    assert (await audit(None)).problems == []
