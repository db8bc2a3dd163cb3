"""Reports by audience through HTTP: ads served to a proven wallet of the first group and to viewers with a wallet
extension (the second group), impressions and clicks tracked through ``/api/track`` and a conversion attributed to
one click; the report counts each group's billed figures from its tracking token's group, a conversion in its click's
group, and shows nothing of a group of fewer than 100 viewers; the CSV says what the JSON says; only the campaign's
account reads it."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

from eth_account import Account

from adnet.audiences.models import AudienceWallet
from adnet.audiences.passes import issue_pass
from adnet.campaigns.models import ConversionGoal
from adnet.campaigns.targeting import Targeting
from adnet.conversions.models import Conversion
from adnet.core.amounts import to_decimal_string
from adnet.core.ids import new_id
from adnet.delivery.models import TrackingEvent
from adnet.delivery.tokens import verify_token
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import event_body, post, serve_ad
from tests.auth_helpers import bearer, sign_in
from tests.conftest import rebuild_index
from tests.factories import make_advertiser, make_campaign, make_creative, make_site, wallet_address

OLD = {"kind": "txCount", "min": 3}
INJECTED = {"kind": "injectedWallet"}
HOLDERS = 100  # viewers served through the first group: exactly the threshold
EXTENSIONS = 3  # viewers served through the second group: under it


async def served_and_tracked(client, clock, site, fingerprint: str, clicked: bool, **params) -> dict:
    ad = await serve_ad(client, site, **params)
    clock.advance(seconds=2)
    for kind in ["IMPRESSION", "CLICK"] if clicked else ["IMPRESSION"]:
        response, body = await post(client, event_body(ad, site, type=kind, fingerprint=fingerprint))
        assert response.status_code == 201, body
    return ad


async def test_figures_per_audience_group_and_none_for_a_small_group(client, clock, services):
    account = Account.create()
    campaign = await make_campaign(await make_advertiser(account.address.lower()), targeting=Targeting.model_validate(
        {"audienceGroups": [[OLD], [INJECTED]]}).stored())
    await make_creative(campaign)
    site = await make_site()
    key = Targeting.model_validate({"audienceGroups": [[OLD]]}).audience_groups[0][0].key
    wallet, now = wallet_address(), clock.now()
    await AudienceWallet.create(wallet=wallet, proven_at=now, evaluated_at=now, expires_at=now + timedelta(days=1),
                                evaluated=[key], matched=[key])
    await rebuild_index(client.app)
    audience_pass = issue_pass(services.settings.tracking_secret, wallet, now + timedelta(days=1))

    holder_ads = [await served_and_tracked(client, clock, site, f"fp-holder-{number:03d}", number < 10,
                                           audience=audience_pass, injectedWallet="1") for number in range(HOLDERS)]
    for number in range(EXTENSIONS):
        await served_and_tracked(client, clock, site, f"fp-extension-{number}", True, injectedWallet="1")
    claims = verify_token(holder_ads[-1]["trackingToken"], secrets=(services.settings.tracking_secret,),
                          now=clock.now())
    assert claims.audience_group == 1  # the first group that holds, though the second holds too

    # A conversion attributed to a holder's click counts in the holder group.
    click = await TrackingEvent.filter(type="CLICK", audience_group=1).first()
    assert click is not None
    goal = await ConversionGoal.create(id=new_id("goal"), campaign=campaign, name="Sign-up", event="signup", cpa=5,
                                       created_at=now, updated_at=now)
    await Conversion.create(id=new_id("cv"), campaign_id=campaign.id, goal=goal, order_id="o-1",
                            click_event_id=click.id, attributed_via="click", occurred_at=clock.now(),
                            received_at=clock.now(), attributed=True, paid=True, cost=5)

    token = await sign_in(client, account)
    response = await client.get(f"/api/advertisers/campaigns/{campaign.id}/report/audiences", headers=bearer(token))
    assert response.status_code == 200
    body = await response.get_json()
    groups = await TrackingEvent.filter(billable=True, campaign_id=campaign.id).values_list("audience_group", "cost")
    holder_spend = sum(int(cost) for group, cost in groups if group == 1) + 5
    assert body["threshold"] == 100
    assert body["groups"] == [{"group": 1, "rules": ["sent at least 3 transactions"], "viewers": 100,
                               "impressions": HOLDERS, "clicks": 10, "conversions": 1,
                               "spend": to_decimal_string(holder_spend)}]
    # The wallet-extension group (3 viewers) is withheld whole: pooled alone, nothing of it is shown.
    assert body["small"] == {"groups": [2], "viewers": None, "impressions": None, "clicks": None,
                             "conversions": None, "spend": None}
    assert sorted(group for group, _ in groups) == [1] * (HOLDERS + 10) + [2] * (EXTENSIONS * 2)

    csv_answer = await client.get(f"/api/advertisers/campaigns/{campaign.id}/report/audiences.csv",
                                  headers=bearer(token))
    assert csv_answer.status_code == 200 and csv_answer.mimetype == "text/csv"
    lines = list(csv.reader(io.StringIO(await csv_answer.get_data(as_text=True))))
    assert lines == [["group", "rules", "viewers", "impressions", "clicks", "conversions", "spend"],
                     ["1", "sent at least 3 transactions", "100", str(HOLDERS), "10", "1",
                      to_decimal_string(holder_spend)],
                     ["small:2", "", "<100", "", "", "", ""]]

    other = await sign_in(client, Account.create())
    refused = await client.get(f"/api/advertisers/campaigns/{campaign.id}/report/audiences", headers=bearer(other))
    assert refused.status_code in (403, 404)
    assert (await client.get(f"/api/advertisers/campaigns/{campaign.id}/report/audiences")).status_code == 401
    bad = await client.get(f"/api/advertisers/campaigns/{campaign.id}/report/audiences",
                           query_string={"from": "yesterday"}, headers=bearer(token))
    assert bad.status_code == 400 and (await bad.get_json())["error"]
