"""The advertiser's portal pages through the Quart test client: the account and its money (a real deposit on the
embedded chain, a withdrawal with its claim), campaigns created and edited from forms, creatives, tasks, funding,
the lifecycle buttons, the report and its CSV; every form refuses a missing CSRF token and another wallet, shows its
refusal beside itself and changes nothing then; concurrent allocations never take more than the balance."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from eth_account import Account

from adnet.accounts import advertisers
from adnet.accounts.models import Advertiser
from adnet.campaigns import review as operators
from adnet.campaigns.commands import Rejection
from adnet.campaigns.models import Campaign, CampaignStatus, Category, Creative, CreativeStatus
from adnet.chain.transact import send_transaction
from adnet.money import ledger
from adnet.money.models import Deposit, Withdrawal
from adnet.tasks.models import Task
from tests.api.test_track import billed, page, page_url
from tests.chain.helpers import user
from tests.conftest import make_settings, rebuild_index
from tests.factories import G, fund, make_site
from tests.portal.conftest import Publisher, portal_sign_in

# Creatives are checked against their banner file: cdn.example serves the banners these tests name.
pytestmark = pytest.mark.usefixtures("banner_cdn")

OPERATOR = Account.from_key("0x" + "42" * 32)
CREATIVE = {"bannerUrl": "https://cdn.example/banner.png", "targetUrl": "https://shop.example/landing",
            "description": "Sponsored", "mediaType": "image", "size": "300x250"}
QUIZ = {"kind": "QUIZ", "title": "Quiz", "description": "", "rewardPoints": "5", "rewardGs": "0.5",
        "maxPerWallet": "1", "question": "2+2?", "answers": "four", "choices": "", "maxAttempts": ""}


@pytest.fixture
def settings(database_url, data_dir):
    """Test settings with one operator wallet."""
    return make_settings(database_url, data_dir, ADNET_OPERATORS=OPERATOR.address)




async def registered(client, account) -> Publisher:
    """A wallet signed in to the portal with its advertiser account opened from the page."""
    signed_in = await portal_sign_in(client, account)
    opened = await signed_in.post("/portal/advertise/register", {"name": "Shop"})
    assert opened.status_code == 303 and opened.headers["Location"] == "/portal/advertise"
    return signed_in


@pytest.fixture
async def advertiser(client) -> Publisher:
    """Development account 2 (it holds G$ and gas on the test chain) as an advertiser in the portal."""
    return await registered(client, user(2))


@pytest.fixture
async def stranger(app) -> Publisher:
    """Development account 3 as another advertiser, on its own client."""
    return await registered(app.test_client(), user(3))


def campaign_form(clock, **changes) -> dict[str, str]:
    start = clock.now().astimezone(UTC)
    return {"name": "Spring sale", "startsAt": start.strftime("%Y-%m-%dT%H:%M"),
            "endsAt": (start + timedelta(days=10)).strftime("%Y-%m-%dT%H:%M"), "cpm": "2", "cpc": "0.1",
            "budget": "50", "dailyCap": "", "sizes": "300x250", "placements": "", "siteAllow": "", "siteDeny": "",
            **changes}


async def create(advertiser: Publisher, clock, **changes) -> Campaign:
    response = await advertiser.post("/portal/advertise/campaigns", campaign_form(clock, **changes))
    assert response.status_code == 303, await response.get_data(as_text=True)
    campaign_id = response.headers["Location"].rsplit("/", 1)[1]
    return await Campaign.get(id=campaign_id)


async def _advertiser_of(advertiser: Publisher) -> Advertiser:
    return await advertisers.advertiser_of(advertiser.wallet)


async def balance_of(advertiser: Publisher) -> int:
    return await ledger.balance(ledger.advertiser((await _advertiser_of(advertiser)).id))


async def text(response) -> str:
    return await response.get_data(as_text=True)


async def test_pages_need_a_session_and_an_advertiser_account_is_opened_once(client, clock):
    anonymous = await client.get("/portal/advertise")
    assert anonymous.status_code == 303 and anonymous.headers["Location"] == "/portal/signin?next=/portal/advertise"
    signed_in = await portal_sign_in(client, user(2))
    page = await text(await signed_in.get("/portal/advertise"))
    assert "Open an advertiser account" in page and 'href="/portal/advertise">Advertise</a>' in page
    assert 'href="/portal/operator"' not in page  # not an operator
    assert (await signed_in.post("/portal/advertise/register", {"name": "Shop"}, csrf=False)).status_code == 403
    for _ in range(2):
        assert (await signed_in.post("/portal/advertise/register", {"name": "Shop"})).status_code == 303
    page = await text(await signed_in.get("/portal/advertise"))
    assert 'id="balance-available">0 G$' in page and "No campaign yet." in page
    assert (await signed_in.get("/portal/advertise/campaigns/new")).status_code == 200


async def test_a_campaign_is_created_from_the_form_exactly_as_typed(advertiser, clock):
    site = await make_site(domain="launch-news.example.com")
    fields = campaign_form(clock, name="Launch", startsAt="2026-03-01T08:30", endsAt="2026-03-31T00:00",
                           cpm="2.5", cpc="0", budget="40.000000000000000001", dailyCap="3",
                           sizes="300x250, 728x90", placements="sidebar article-end",
                           siteAllow=f"https://www.{site.domain}/", category="nft")
    response = await advertiser.post("/portal/advertise/campaigns", fields, htmx=True)
    assert response.status_code == 204 and response.headers["HX-Redirect"].startswith("/portal/advertise/campaigns/")
    campaign = await Campaign.get(id=response.headers["HX-Redirect"].rsplit("/", 1)[1])
    assert (campaign.name, campaign.status) == ("Launch", CampaignStatus.DRAFT)
    assert campaign.starts_at == datetime(2026, 3, 1, 8, 30, tzinfo=UTC)
    assert campaign.ends_at == datetime(2026, 3, 31, tzinfo=UTC)
    assert (int(campaign.cpm), int(campaign.cpc), int(campaign.budget), int(campaign.daily_cap)) == (
        5 * G // 2, 0, 40 * G + 1, 3 * G)
    assert (campaign.sizes, campaign.placements, campaign.site_allow) == (
        ["300x250", "728x90"], ["sidebar", "article-end"], [site.id])
    assert campaign.category == Category.NFT
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign.id}/targeting"))
    assert '<option value="nft" selected>' in page
    assert 'value="2026-03-01T08:30"' in page and 'value="40.000000000000000001"' in page
    assert 'value="300x250, 728x90"' in page and f'name="siteAllow" type="text" value="{site.domain}"' in page
    listing = await text(await advertiser.get("/portal/advertise"))
    assert f'href="/portal/advertise/campaigns/{campaign.id}">Launch</a>' in listing


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"name": ""}, "name", "Name is required: fill it in."),
    ({"cpm": "abc"}, "cpm", "A G$ amount of 0 or more, such as 2.5: digits, at most 18 decimals, no sign."),
    ({"cpm": "-1"}, "cpm", "A G$ amount of 0 or more, such as 2.5: digits, at most 18 decimals, no sign."),
    ({"budget": "0"}, "budget", "A G$ amount more than 0, such as 2.5: digits, at most 18 decimals, no sign."),
    ({"cpm": "0", "cpc": "0"}, "cpm", "Price per 1000 impressions: a campaign prices impressions, clicks or both."),
    ({"endsAt": "2020-01-01T00:00"}, "endsAt", "End must be after start."),
    ({"startsAt": "tomorrow"}, "startsAt", "Start: an ISO 8601 time"),
    ({"sizes": "big"}, "sizes", "Sizes, item 1: a size WIDTHxHEIGHT, such as 300x250."),
    ({"siteAllow": "nowhere.example.org"}, "siteAllow",
     "Only on these sites: no site is registered under nowhere.example.org; pick a domain from the list."),
])
async def test_a_refused_campaign_form_says_why_beside_the_field_and_creates_nothing(advertiser, clock, changes,
                                                                                     field, message):
    fragment = await advertiser.post("/portal/advertise/campaigns", campaign_form(clock, **changes), htmx=True)
    assert fragment.headers["HX-Retarget"] == "#campaign-form"
    html = await text(fragment)
    # The refusal is said right after its field, which points to it.
    said = re.search(rf'name="{field}"[^>]*aria-invalid="true" aria-describedby="settings-{field}-error">\s*'
                     rf'<p id="settings-{field}-error" class="error field-error" role="alert">([^<]*)</p>', html)
    assert said and message in said.group(1).replace("&#39;", "'"), html
    assert 'id="settings-error"' not in html  # not said a second time at the form's end
    full = await advertiser.post("/portal/advertise/campaigns", campaign_form(clock, **changes))
    assert full.status_code == 400 and message in await text(full) and "<h1>New campaign</h1>" in await text(full)
    assert await Campaign.all().count() == 0


async def test_creatives_tasks_and_funding_from_the_campaign_page(advertiser, clock):
    await fund(ledger.advertiser((await _advertiser_of(advertiser)).id), 30 * G)
    campaign = await create(advertiser, clock)
    base = f"/portal/advertise/campaigns/{campaign.id}"

    bad = await advertiser.post(f"{base}/creatives", {**CREATIVE, "targetUrl": "javascript:alert(1)"}, htmx=True)
    assert bad.headers["HX-Retarget"] == "#campaign"
    assert ('<p id="creative-targetUrl-error" class="error field-error" role="alert">An http:// or https:// address '
            "such as https://example.com/landing.</p>") in await text(bad)
    assert await Creative.all().count() == 0
    added = await advertiser.post(f"{base}/creatives", CREATIVE, htmx=True)
    html = await text(added)
    creative = await Creative.get(campaign_id=campaign.id)
    assert creative.status == CreativeStatus.REVIEW and "Creative added; it waits for review." in html
    assert '<img src="https://cdn.example/banner.png" width="300" height="250"' in html

    no_answer = await advertiser.post(f"{base}/tasks", {**QUIZ, "answers": "\r\n  \r\n"}, htmx=True)
    assert ('<p id="new-QUIZ-answers-error" class="error field-error" role="alert">1 to 20 answers, one per line, '
            "each at most 200 characters.</p>") in await text(no_answer)
    assert '<details id="new-QUIZ" open>' in await text(no_answer)
    assert await Task.all().count() == 0
    assert (await advertiser.post(f"{base}/tasks", QUIZ)).status_code == 303
    task = await Task.get(campaign_id=campaign.id)
    assert (task.kind.value, task.reward_points, int(task.reward_gs), task.config["answers"]) == (
        "QUIZ", 5, G // 2, ["four"])

    over_balance = await advertiser.post(f"{base}/allocate", {"amount": "31"}, htmx=True)
    assert "more than the advertiser&#39;s unallocated balance" in await text(over_balance)
    over_budget = await advertiser.post(f"{base}/allocate", {"amount": "30"})
    assert over_budget.status_code == 303
    beyond = await advertiser.post(f"{base}/allocate", {"amount": "20.5"})
    assert beyond.status_code == 409 and "beyond its budget" in await text(beyond)
    pooled = await advertiser.post(f"/portal/advertise/tasks/{task.id}/allocate", {"amount": "0"}, htmx=True)
    assert (f'<p id="task-{task.id}-amount-error" class="error field-error" role="alert">A G$ amount more than 0, '
            "such as 2.5: digits, at most 18 decimals, no sign.</p>") in await text(pooled)
    assert await ledger.balance(ledger.task_pool(task.id)) == 0
    await fund(ledger.advertiser(campaign.advertiser_id), 2 * G)  # type: ignore[attr-defined]
    pooled = await advertiser.post(f"/portal/advertise/tasks/{task.id}/allocate", {"amount": "1.5"}, htmx=True)
    assert pooled.headers["HX-Trigger"] == "balance-changed" and "Allocated 1.5 G$ to the pool of Quiz." in (
        await text(pooled))
    assert await ledger.balance(ledger.campaign(campaign.id)) == 30 * G
    assert await ledger.balance(ledger.task_pool(task.id)) == 3 * G // 2
    assert await balance_of(advertiser) == G // 2

    submitted = await advertiser.post(f"{base}/submit", htmx=True)
    html = await text(submitted)
    assert 'data-status="review"' in html and "In review: nothing can change" in html
    assert 'id="campaign-form"' not in html and "Add a creative" not in html
    locked = await advertiser.post(f"{base}/creatives", CREATIVE)
    assert locked.status_code == 409 and "cannot change" in await text(locked)
    assert await Creative.all().count() == 1


async def test_the_lifecycle_buttons_move_the_campaign_once_and_refuse_wrong_steps(advertiser, clock):
    campaign = await create(advertiser, clock)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    incomplete = await advertiser.post(f"{base}/submit", htmx=True)
    assert "Add a creative or a task before submitting" in await text(incomplete)
    assert (await advertiser.post(f"{base}/pause")).status_code == 409
    await advertiser.post(f"{base}/creatives", CREATIVE)
    await fund(ledger.advertiser(campaign.advertiser_id), 10 * G)  # type: ignore[attr-defined]
    await advertiser.post(f"{base}/allocate", {"amount": "10"})
    assert (await advertiser.post(f"{base}/submit")).status_code == 303
    assert (await Campaign.get(id=campaign.id)).status == CampaignStatus.REVIEW
    await operators.reject_campaign(OPERATOR.address.lower(), campaign.id, Rejection(reason="Landing page <b>404</b>"),
                                    clock.now())
    page = await text(await advertiser.get(base))
    assert "Landing page &lt;b&gt;404&lt;/b&gt;" in page and 'data-status="rejected"' in page
    assert (await advertiser.post(base, campaign_form(clock, name="Fixed"))).status_code == 303
    assert (await advertiser.post(f"{base}/submit")).status_code == 303
    await operators.approve_campaign(OPERATOR.address.lower(), campaign.id, clock.now())

    for action, status in (("pause", "paused"), ("resume", "approved")):
        moved = await advertiser.post(f"{base}/{action}", htmx=True)
        assert f'data-status="{status}"' in await text(moved)
    wrong = await advertiser.post(f"{base}/resume", htmx=True)
    assert "A campaign in approved cannot become approved." in await text(wrong)
    ended = await advertiser.post(f"{base}/end", htmx=True)
    html = await text(ended)
    assert 'data-status="ended"' in html and ended.headers["HX-Trigger"] == "balance-changed"
    assert "End campaign" not in html and 'id="allocate-form"' not in html
    assert await ledger.balance(ledger.campaign(campaign.id)) == 0 and await balance_of(advertiser) == 10 * G


async def test_an_edited_creative_of_an_approved_campaign_goes_back_to_review(advertiser, clock):
    campaign = await create(advertiser, clock)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    await advertiser.post(f"{base}/creatives", CREATIVE)
    await advertiser.post(f"{base}/submit")
    await operators.approve_campaign(OPERATOR.address.lower(), campaign.id, clock.now())
    creative = await Creative.get(campaign_id=campaign.id)
    assert creative.status == CreativeStatus.APPROVED
    refused = await advertiser.post(f"/portal/advertise/creatives/{creative.id}", {**CREATIVE, "size": "0x1"},
                                    htmx=True)
    html = await text(refused)
    assert (f'<p id="creative-{creative.id}-size-error" class="error field-error" role="alert">Size: a size '
            "WIDTHxHEIGHT, such as 300x250.</p>") in html
    assert (await Creative.get(id=creative.id)).status == CreativeStatus.APPROVED
    changed = await advertiser.post(f"/portal/advertise/creatives/{creative.id}",
                                    {**CREATIVE, "targetUrl": "https://shop.example/new"}, htmx=True)
    assert "Creative changed; it waits for review again." in await text(changed)
    creative = await Creative.get(id=creative.id)
    assert (creative.status, creative.target_url) == (CreativeStatus.REVIEW, "https://shop.example/new")
    assert (await Campaign.get(id=campaign.id)).status == CampaignStatus.APPROVED


async def test_another_wallet_sees_and_changes_nothing(advertiser, stranger, clock):
    campaign = await create(advertiser, clock)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    await advertiser.post(f"{base}/creatives", CREATIVE)
    await advertiser.post(f"{base}/tasks", QUIZ)
    creative, task = await Creative.get(campaign_id=campaign.id), await Task.get(campaign_id=campaign.id)
    await fund(ledger.advertiser((await _advertiser_of(stranger)).id), 5 * G)
    assert (await stranger.get(base)).status_code == 403
    assert (await stranger.get(f"{base}/report")).status_code == 403
    assert (await stranger.get(f"{base}/report.csv")).status_code == 403
    posts = [(base, campaign_form(clock, name="Mine now")), (f"{base}/submit", {}), (f"{base}/end", {}),
             (f"{base}/allocate", {"amount": "1"}), (f"{base}/creatives", CREATIVE), (f"{base}/tasks", QUIZ),
             (f"/portal/advertise/creatives/{creative.id}", CREATIVE),
             (f"/portal/advertise/tasks/{task.id}/allocate", {"amount": "1"}),
             (f"/portal/advertise/tasks/{task.id}/end", {})]
    for path, form in posts:
        for htmx in (False, True):
            response = await stranger.post(path, form, htmx=htmx)
            assert response.status_code == 403 and "not_owner" in await text(response), (path, htmx)
    stored = await Campaign.get(id=campaign.id)
    assert (stored.name, stored.status) == ("Spring sale", CampaignStatus.DRAFT)
    assert await Creative.all().count() == 1 and await Task.filter(active=True).count() == 1
    assert await balance_of(stranger) == 5 * G and await ledger.balance(ledger.campaign(campaign.id)) == 0


async def test_every_advertiser_form_needs_the_csrf_token(advertiser, clock):
    campaign = await create(advertiser, clock)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    await advertiser.post(f"{base}/creatives", CREATIVE)
    await advertiser.post(f"{base}/tasks", QUIZ)
    creative, task = await Creative.get(campaign_id=campaign.id), await Task.get(campaign_id=campaign.id)
    await fund(ledger.advertiser(campaign.advertiser_id), 5 * G)  # type: ignore[attr-defined]
    posts = [("/portal/advertise/register", {}), ("/portal/advertise/campaigns", campaign_form(clock)),
             ("/portal/advertise/deposit/prepare", {"amount": "1"}), ("/portal/advertise/deposit",
                                                                     {"txHash": "0x" + "ab" * 32}),
             ("/portal/advertise/withdraw", {"amount": "1"}), (base, campaign_form(clock, name="Forged")),
             (f"{base}/submit", {}), (f"{base}/end", {}), (f"{base}/allocate", {"amount": "1"}),
             (f"{base}/creatives", CREATIVE), (f"{base}/tasks", QUIZ),
             (f"/portal/advertise/creatives/{creative.id}", CREATIVE),
             (f"/portal/advertise/tasks/{task.id}/allocate", {"amount": "1"}),
             (f"/portal/advertise/tasks/{task.id}/end", {})]
    for path, form in posts:
        for htmx in (False, True):
            response = await advertiser.post(path, form, htmx=htmx, csrf=False)
            assert response.status_code == 403 and "csrf_failed" in await text(response), (path, htmx)
    stored = await Campaign.get(id=campaign.id)
    assert (stored.name, stored.status) == ("Spring sale", CampaignStatus.DRAFT)
    assert await Campaign.all().count() == 1 and await Creative.all().count() == 1 and await Task.all().count() == 1
    assert await balance_of(advertiser) == 5 * G and await Withdrawal.all().count() == 0


async def test_a_deposit_is_sent_by_the_wallet_and_credited_once(advertiser, chain):
    prepared = await advertiser.post("/portal/advertise/deposit/prepare", {"amount": "12.5"}, htmx=True)
    html = await text(prepared)
    approve, deposit = json.loads(re.search(r"data-transactions='([^']*)'", html).group(1))
    assert 'data-status-url="/portal/advertise/deposit"' in html and "12.5 G$" in html
    assert deposit["to"].lower() == chain.vault_address and approve["from"] == advertiser.account.address
    await send_transaction(chain.w3, advertiser.account, approve)
    receipt = await send_transaction(chain.w3, advertiser.account, deposit)
    tx_hash = receipt["transactionHash"].to_0x_hex()
    without_javascript = await advertiser.post("/portal/advertise/deposit", {"txHash": tx_hash})
    assert without_javascript.status_code == 303 and without_javascript.headers["Location"] == "/portal/advertise"
    assert f"Deposit {tx_hash}: credited." in await text(await advertiser.get("/portal/advertise"))
    for _ in range(2):
        status = await advertiser.post("/portal/advertise/deposit", {"txHash": tx_hash}, htmx=True)
        body = await text(status)
        assert 'data-state="credited"' in body and "Credited: 12.5 G$ added to your balance." in body
    assert await balance_of(advertiser) == 12 * G + G // 2 and await Deposit.filter(tx_hash=tx_hash).count() == 1
    page = await text(await advertiser.get("/portal/advertise"))
    assert 'id="balance-available">12.5 G$' in page and "<caption>Deposits</caption>" in page and tx_hash in page
    assert 'hx-post="/portal/advertise/deposit" hx-target="#deposit-progress"' in page and 'id="deposit-tx"' in page
    refused = await advertiser.post("/portal/advertise/deposit/prepare", {"amount": "-1"}, htmx=True)
    assert refused.headers["HX-Retarget"] == "#deposit-form"
    assert "Amount: enter an amount such as 2.5" in await text(refused)


async def test_the_withdrawal_form_posted_twice_makes_one_withdrawal(advertiser):
    await fund(ledger.advertiser((await _advertiser_of(advertiser)).id), 5 * G)
    key = re.search(r'name="idempotency_key" value="([^"]+)"', await text(await advertiser.get("/portal/advertise")))
    assert key
    form = {"amount": "2", "idempotency_key": key.group(1)}
    answers = [await advertiser.post("/portal/advertise/withdraw", form) for _ in range(2)]
    assert [answer.status_code for answer in answers] == [303, 303]
    assert await Withdrawal.all().count() == 1 and await balance_of(advertiser) == 3 * G


async def test_a_withdrawal_debits_the_available_balance_and_shows_its_claim(advertiser, chain, app):
    await fund(ledger.advertiser((await _advertiser_of(advertiser)).id), 5 * G)
    too_much = await advertiser.post("/portal/advertise/withdraw", {"amount": "6"}, htmx=True)
    assert too_much.headers["HX-Retarget"] == "#withdraw-form"
    assert "more than the advertiser&#39;s unallocated balance" in await text(too_much)
    assert await Withdrawal.all().count() == 0
    issued = await advertiser.post("/portal/advertise/withdraw", {"amount": "2"}, htmx=True)
    html = await text(issued)
    withdrawal = await Withdrawal.get().select_related("claim")
    redeem = json.loads(re.search(r"data-transaction='([^']*)'", html).group(1))
    assert redeem == chain.build_claim_tx(advertiser.wallet, withdrawal.claim) and "data-autorun" in html
    assert f'data-status-url="/portal/advertise/withdrawals/{withdrawal.id}"' in html
    assert await balance_of(advertiser) == 3 * G
    home = await text(await advertiser.get("/portal/advertise"))
    assert "<caption>Withdrawals</caption>" in home and "No money has moved yet." not in home
    assert f'hx-get="/portal/advertise/withdrawals/{withdrawal.id}" hx-target="#withdraw-progress">Redeem</a>' in home
    receipt = await send_transaction(chain.w3, advertiser.account, redeem)
    await app.extensions["adnet"].watcher.run_once()
    status = await advertiser.get(f"/portal/advertise/withdrawals/{withdrawal.id}?tx="
                                  f"{receipt['transactionHash'].to_0x_hex()}", htmx=True)
    assert 'data-state="redeemed"' in await text(status) and status.headers["HX-Trigger"] == "balance-changed"


async def test_concurrent_allocations_never_take_more_than_the_balance(advertiser, clock):
    await fund(ledger.advertiser((await _advertiser_of(advertiser)).id), 10 * G)
    campaign = await create(advertiser, clock)
    responses = await asyncio.gather(*(
        advertiser.post(f"/portal/advertise/campaigns/{campaign.id}/allocate", {"amount": "3"}, htmx=True)
        for _ in range(15)))
    funded = [response for response in responses if "Allocated 3 G$" in await text(response)]
    assert len(funded) == 3
    assert await ledger.balance(ledger.campaign(campaign.id)) == 9 * G and await balance_of(advertiser) == G


async def test_the_report_shows_a_tracked_impression_and_exports_csv(advertiser, client, clock):
    site = await make_site()
    await fund(ledger.advertiser((await _advertiser_of(advertiser)).id), 50 * G)
    campaign = await create(advertiser, clock)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    await advertiser.post(f"{base}/creatives", CREATIVE)
    await advertiser.post(f"{base}/tasks", QUIZ)
    await advertiser.post(f"{base}/allocate", {"amount": "50"})
    await advertiser.post(f"{base}/submit")
    await operators.approve_campaign(OPERATOR.address.lower(), campaign.id, clock.now())
    await rebuild_index(client.app)
    served = await (await client.get("/api/serve", query_string={"siteId": site.id}, headers=page(site))).get_json()
    clock.advance(seconds=2)
    event = {"type": "IMPRESSION", "campaignId": campaign.id, "adId": served["ad"]["id"], "siteId": site.id,
             "fingerprint": "fp-1", "rendered": True, "viewportVisible": True, "renderTime": 20,
             "timestamp": 1767225600000, "pageUrl": page_url(site),
             "trackingToken": served["ad"]["trackingToken"]}
    tracked = await client.post("/api/track", json=event, headers=page(site))
    assert await billed(await tracked.get_json())
    bot = await client.post("/api/track", json={**event, "fingerprint": "fp-2"},
                            headers={**page(site), "User-Agent": "curl/8.0"})
    assert not await billed(await bot.get_json())

    report = await text(await advertiser.get(f"{base}/report"))
    today = clock.now().date().isoformat()
    assert 'id="total-impressions">2<' in report and 'id="total-billable">1<' in report
    assert 'id="total-spend">0.002 G$' in report and "<code>bot_user_agent</code></td><td>1</td>" in report
    row = re.search(rf'<th scope="row">{today}</th>(.*?)</tr>', report, re.S).group(1)
    assert re.findall(r"<td>([^<]*)</td>", row) == ["2", "1", "0", "0", "0.00 %", "0.002", "2", "0", "0"]
    filtered = re.search(r'<table id="filtered-days">(.*?)</table>', report, re.S).group(1)
    assert "<code>bot_user_agent</code>" in filtered
    assert re.search(rf'<th scope="row">{today}</th><td>1</td></tr>', filtered)
    assert f'href="{base}/report.csv?from=' in report
    csv_response = await advertiser.get(f"{base}/report.csv")
    lines = (await text(csv_response)).splitlines()
    assert csv_response.mimetype == "text/csv" and lines[-1].startswith("total,2,1,0,0,0.000000,0.002,2,0,0")
    refused = await advertiser.get(f"{base}/report?from=2026-13-01")
    assert refused.status_code == 400 and "From: a day written YYYY-MM-DD" in await text(refused)
    yesterday = (clock.now().date() - timedelta(days=1)).isoformat()
    backwards = await advertiser.get(f"{base}/report?from={today}&to={yesterday}")
    said = await text(backwards)
    assert backwards.status_code == 400 and "To: the last day is before the first." in said
    assert re.search(rf'id="report-to" name="to" value="{yesterday}"\s+aria-invalid="true"', said)
    assert not re.search(r'id="report-from" name="from" value="[^"]*"\s+aria-invalid', said)


async def test_operators_get_a_link_to_their_page(client):
    operator = await portal_sign_in(client, OPERATOR)
    page = await text(await operator.get("/portal/advertise"))
    assert 'href="/portal/operator">Operator</a>' in page


async def test_a_draft_its_creatives_and_tasks_are_deleted_from_their_buttons(advertiser, clock):
    campaign = await create(advertiser, clock)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    await fund(ledger.advertiser((await _advertiser_of(advertiser)).id), 10 * G)
    await advertiser.post(f"{base}/creatives", CREATIVE)
    await advertiser.post(f"{base}/tasks", QUIZ)
    creative, task = await Creative.get(campaign_id=campaign.id), await Task.get(campaign_id=campaign.id)
    await advertiser.post(f"/portal/advertise/tasks/{task.id}/allocate", {"amount": "2"})
    page = await text(await advertiser.get(base)) + await text(await advertiser.get(f"{base}/creatives"))
    assert "Delete this draft" in page and "Delete this 300x250 creative" in page and "Delete Quiz" in page
    deleted = await advertiser.post(f"/portal/advertise/creatives/{creative.id}/delete", htmx=True)
    assert "Deleted the 300x250 creative." in await text(deleted) and not await Creative.exists(id=creative.id)
    deleted = await advertiser.post(f"/portal/advertise/tasks/{task.id}/delete", htmx=True)
    assert "Deleted Quiz; 2 G$ returned to your balance." in await text(deleted)
    assert deleted.headers["HX-Trigger"] == "balance-changed" and await balance_of(advertiser) == 10 * G
    assert (await advertiser.post(f"{base}/delete", {"confirmName": "Spring sale"}, csrf=False)).status_code == 403
    # The danger zone's confirmation is the server's: without the name typed, nothing is deleted.
    for typed in ({}, {"confirmName": "Spring"}):
        unconfirmed = await advertiser.post(f"{base}/delete", typed, htmx=True)
        said = await text(unconfirmed)
        assert unconfirmed.status_code == 400 and "Type Spring sale to confirm that the draft is deleted." in said
        assert re.search(r'id="delete-confirm" name="confirmName"[^>]*aria-invalid="true"', said)
        assert await Campaign.exists(id=campaign.id)
    gone = await advertiser.post(f"{base}/delete", {"confirmName": " spring SALE "}, htmx=True)
    assert (gone.status_code, gone.headers["HX-Redirect"]) == (204, "/portal/advertise")
    assert "Deleted the draft Spring sale." in await text(await advertiser.get("/portal/advertise"))
    assert not await Campaign.exists(id=campaign.id)


async def test_a_submitted_campaign_offers_no_deletion_and_refuses_one(advertiser, clock):
    campaign = await create(advertiser, clock)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    await advertiser.post(f"{base}/creatives", CREATIVE)
    assert (await advertiser.post(f"{base}/submit")).status_code == 303
    page = await text(await advertiser.get(base))
    assert "Delete this draft" not in page and "Delete this 300x250 creative" not in page
    assert 'id="danger-zone"' not in page
    refused = await advertiser.post(f"{base}/delete", {"confirmName": "Spring sale"}, htmx=True)
    assert "cannot be deleted: it may have served" in await text(refused)
    assert await Campaign.exists(id=campaign.id)


async def test_duplicate_opens_the_copy_as_a_draft(advertiser, clock):
    campaign = await create(advertiser, clock)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    await advertiser.post(f"{base}/creatives", CREATIVE)
    copied = await advertiser.post(f"{base}/duplicate")
    assert copied.status_code == 303
    page = await text(await advertiser.get(copied.headers["Location"]))
    assert "Spring sale (copy)" in page and "This is a new draft copied from Spring sale" in page
    copy = await Campaign.get(id=copied.headers["Location"].rsplit("/", 1)[1])
    assert copy.status == CampaignStatus.DRAFT and await Creative.filter(campaign_id=copy.id).count() == 1
