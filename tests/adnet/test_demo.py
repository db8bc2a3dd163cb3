"""Demo data: everything the demo page needs, valid, funded, and created once however often it is loaded; its
banners named under the public URL wherever adnet is served; and its month of history, which fills the
publisher's, the advertiser's and the operator's reports with figures that agree with the ledger."""

from __future__ import annotations

import asyncio
import csv
import io
import logging
import re
from collections import Counter
from datetime import timedelta
from decimal import Decimal

import pytest
from eth_account import Account

from adnet.accounts.models import ProofMethod, Site, SiteState, VerifiedDomain
from adnet.campaigns.models import Campaign, CampaignStatus, Creative
from adnet.config import load_settings
from adnet.core.amounts import UNIT
from adnet.core.wallets import dev_accounts
from adnet.delivery.models import ReportDaily, TrackingEvent, TrafficDaily
from adnet.delivery.tracking import REASONS
from adnet.demo import DemoRefused, create_demo, load_demo, prepare_demo
from adnet.demo.history import HISTORY_DAYS, NEWS_DOMAIN, TOP_UP
from adnet.interactions.models import Interaction
from adnet.money import ledger
from adnet.money.audit import audit
from adnet.money.models import Deposit, DepositStatus, LedgerTransaction, Withdrawal
from adnet.tasks.config import parse_config
from adnet.tasks.models import Completion, Task, TaskKind, TaskSurface
from tests.adnet.test_config import production_env
from tests.conftest import make_settings
from tests.portal.conftest import portal_sign_in

OPERATOR = Account.from_key("0x" + "43" * 32)


@pytest.fixture
def settings(database_url, tmp_path):
    """Test settings with one operator wallet, who reads the platform's revenue."""
    return make_settings(database_url, tmp_path, ADNET_OPERATORS=OPERATOR.address)


@pytest.fixture
def deployment(app):
    return app.extensions["adnet"].chain.deployment


async def test_the_demo_holds_every_kind_of_ad_and_unit(app, settings, deployment, clock):
    summary = await create_demo(settings, deployment, now=clock.now())

    campaigns = await Campaign.filter(id__in=summary["campaignIds"])
    assert len(campaigns) == 3
    assert {campaign.status for campaign in campaigns} == {CampaignStatus.APPROVED}
    for campaign in campaigns:
        sizes = {(c.width, c.height) for c in await Creative.filter(campaign=campaign)}
        assert sizes == {(300, 250), (728, 90), (320, 50)}
        # adnet's own files, stored without an origin, so they show wherever adnet is served
        assert all(re.fullmatch(r"/static/demo/banner-\d-\d+x\d+\.svg", banner)
                   for banner in await Creative.filter(campaign=campaign).values_list("banner_url", flat=True))
        assert await ledger.balance(ledger.campaign(campaign.id)) == int(campaign.budget)
    # The demo shows targeting rules that still let a desktop browser anywhere see every campaign.
    rules = {campaign.name: campaign.targeting for campaign in campaigns}
    assert rules["Celo Climate Collective"]["keywords_exclude"] == ["gambling", "casino"]
    assert rules["Celo Climate Collective"]["devices_exclude"] == ["tablet"]
    assert rules["GoodDollar Savings"]["devices_include"] == ["desktop", "mobile"]
    assert rules["GoodDollar Savings"]["os_exclude"] == ["chromeos"]
    assert all(not rule["geo_include"] and not rule["geo_exclude"] for rule in rules.values())

    assert sorted(summary["taskIds"]) == sorted(kind.value for kind in TaskKind)
    for kind_name, (task_id,) in summary["taskIds"].items():
        task = await Task.get(id=task_id)
        parse_config(task.kind, task.config)
        standalone = task.kind in (TaskKind.POLL, TaskKind.FEEDBACK, TaskKind.SURVEY)
        assert task.surface is (TaskSurface.STANDALONE if standalone else TaskSurface.ATTACHED), kind_name
        assert (task.campaign_id is None) is standalone
        assert await ledger.balance(ledger.task_pool(task.id)) == 100 * int(task.reward_gs)
    survey = await Task.get(id=summary["taskIds"]["SURVEY"][0])
    assert len(survey.config["questions"]) == 3
    onchain = await Task.get(id=summary["taskIds"]["ONCHAIN_EVENT"][0])
    assert onchain.config["contract"] == deployment.gs_token.lower()

    site = await Site.get(id=summary["siteId"])
    assert site.domain == "adnet.test"
    assert (await site.publisher).wallet == summary["publisherWallet"]
    # Verified directly (adnet's own host cannot be fetched as a publisher's site), so the demo earns.
    assert (site.verified, site.state, site.proof_method) == (True, SiteState.VERIFIED, ProofMethod.DEMO)
    assert (await VerifiedDomain.get(domain="adnet.test")).site_id == site.id


async def test_loading_again_gives_the_demo_site_its_domain_back(app, settings, deployment, clock, services):
    summary = await create_demo(settings, deployment, now=clock.now())
    await VerifiedDomain.filter(site_id=summary["siteId"]).delete()
    await Site.filter(id=summary["siteId"]).update(verified=False, state=SiteState.LAPSED)
    await create_demo(settings, deployment, now=clock.now())
    assert (await Site.get(id=summary["siteId"])).verified
    clock.advance(days=30)
    assert (await services.jobs.run("site-checks")).checked == 0  # outside production, never re-checked


async def test_loading_again_or_concurrently_creates_nothing_more(app, settings, deployment, clock):
    first = await create_demo(settings, deployment, now=clock.now())
    again = await asyncio.gather(*(create_demo(settings, deployment, now=clock.now()) for _ in range(3)))

    assert all(summary == first for summary in again)
    assert await Campaign.all().count() == 3
    assert await Task.all().count() == len(TaskKind)
    assert await Site.all().count() == 1


async def test_production_refuses_demo_data(tmp_path):
    settings = load_settings(production_env(tmp_path, ADNET_DATABASE_URL=f"sqlite://{tmp_path / 'prod.sqlite3'}"))
    with pytest.raises(DemoRefused):
        await load_demo(settings)
    assert not (tmp_path / "prod.sqlite3").exists()


async def test_the_demo_banners_are_named_under_the_public_url(app, client, settings, deployment, clock):
    summary = await create_demo(settings, deployment, now=clock.now())
    await app.extensions["adnet"].serving.rebuild()
    answer = await client.get("/api/serve", query_string={"siteId": summary["siteId"], "size": "300x250"},
                              headers={"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"})
    banner = (await answer.get_json())["ad"]["bannerUrl"]
    assert re.fullmatch(r"http://adnet\.test/static/demo/banner-\d-300x250\.svg", banner)
    image = await client.get(banner.removeprefix(settings.public_url))
    assert image.status_code == 200 and image.mimetype == "image/svg+xml"

    advertiser = await portal_sign_in(app.test_client(), dev_accounts()[1])
    campaign_id = summary["campaignIds"][0]
    page = await (await advertiser.get(f"/portal/advertise/campaigns/{campaign_id}/creatives")).get_data(as_text=True)
    creative = await Creative.filter(campaign_id=campaign_id, width=300).first()
    assert creative is not None
    assert f'<img src="{creative.banner_url}"' in page  # a page names the path: it shows on any origin
    assert f'value="{settings.public_url}{creative.banner_url}"' in page  # the form's URL field, absolute
    # Given back unchanged by the form, the banner keeps its path: only the weight changed, so no new review.
    changed = await advertiser.post(f"/portal/advertise/creatives/{creative.id}", {
        "bannerUrl": settings.public_url + creative.banner_url, "targetUrl": creative.target_url,
        "description": creative.description, "mediaType": "image", "size": "300x250", "weight": "3"})
    assert changed.status_code == 303, await changed.get_data(as_text=True)
    await creative.refresh_from_db()
    assert (creative.banner_url.startswith("/static/demo/"), creative.weight, creative.status.value) == (
        True, 3, "approved")


async def load_full_demo(app, settings, clock) -> dict:
    """The demo with its history, as ``adnet demo`` loads it, on the app's database and chain."""
    chain = app.extensions["adnet"].chain
    return await prepare_demo(settings, chain, now=clock.now(), minter=dev_accounts()[0])


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


async def csv_of(account, path: str) -> list[dict[str, str]]:
    response = await account.get(path)
    assert response.status_code == 200 and response.mimetype == "text/csv", path
    return rows_of(await response.get_data(as_text=True))


def figure(html: str, ident: str) -> Decimal:
    found = re.search(rf'id="{ident}">([0-9.]+) G\$', html)
    assert found is not None, ident
    return Decimal(found.group(1))


async def test_the_history_fills_every_report_with_figures_the_ledger_agrees_with(app, settings, clock, caplog):
    clock.advance(hours=15)  # the afternoon: today has traffic too
    with caplog.at_level(logging.INFO, logger="adnet"):
        summary = await load_full_demo(app, settings, clock)
    # The month's hundreds of completions, claims and answers do not flood the terminal: one line says it played.
    assert not [record for record in caplog.records if record.levelno < logging.WARNING
                and record.name in ("adnet.money.claims", "adnet.tasks.completion")]
    assert any("demo history loaded" in record.getMessage() for record in caplog.records)
    today = clock.today()
    days = [today - timedelta(days=offset) for offset in range(HISTORY_DAYS - 1, -1, -1)]
    site_ids = summary["siteIds"]
    assert len(site_ids) == 2 and (await Site.get(id=site_ids[1])).domain == NEWS_DOMAIN

    # The publisher: a chart of earnings on each of the 30 days, a fill rate beside impressions, every site's
    # traffic with several reasons for what was not billed, and breakdowns by placement, country and device.
    publisher = await portal_sign_in(app.test_client(), dev_accounts()[2])
    html = await (await publisher.get("/portal")).get_data(as_text=True)
    charted = dict(re.findall(r'<g class="chart-day"[^>]*><title>(\d{4}-\d\d-\d\d): ([0-9.]+) G\$</title>', html))
    assert list(charted) == [day.isoformat() for day in days] and all(Decimal(v) > 0 for v in charted.values())
    filled, requests = (int(number) for number in re.search(r"(\d+) of (\d+) requests", html).groups())
    assert 0 < filled <= requests
    earned = Decimal(0)
    reasons: Counter[str] = Counter()
    for site_id in site_ids:
        traffic = await csv_of(publisher, f"/portal/sites/{site_id}/traffic.csv")
        total = traffic[-1]
        assert total["day"] == "total" and int(total["billed_impressions"]) > 0
        assert int(total["billed_impressions"]) < int(total["impressions"]) <= filled
        earned += Decimal(total["earned"])
        reasons.update({reason: int(total[f"filtered:{reason}"]) for reason in REASONS})
        for by, least in (("placement", 3), ("country", 6), ("device", 2)):
            rows = await csv_of(publisher, f"/portal/sites/{site_id}/breakdown.csv?by={by}&from={days[0]}&to={today}")
            assert len([row for row in rows[:-1] if int(row["impressions"]) > 0]) >= least, (site_id, by)
    assert {reason for reason, count in reasons.items() if count} >= {
        "bot_user_agent", "domain_mismatch", "view_too_short", "token_reused", "client_rate_exceeded"}
    # What the traffic says the sites earned is what the ledger credited them (less nothing: a withdrawal is
    # not revenue), and the dashboard reads the ledger.
    assert figure(html, "earned-lifetime") == earned
    withdrawal = await Withdrawal.get(site_id=summary["siteId"])
    assert withdrawal.amount > 0 and withdrawal.created_at > clock.now() - timedelta(days=4)
    assert await ledger.balance(ledger.site(site_ids[0])) + await ledger.balance(ledger.site(site_ids[1])) == \
        int(earned * UNIT) - int(withdrawal.amount)

    # The advertiser: each campaign's report with spend, clicks and refusals, the tasks completed and the units
    # answered, and its balance topped up by a deposit on the chain.
    advertiser = await portal_sign_in(app.test_client(), dev_accounts()[1])
    spent = Decimal(0)
    completions = 0
    for campaign_id in summary["campaignIds"]:
        report = await csv_of(advertiser, f"/portal/advertise/campaigns/{campaign_id}/report.csv"
                                          f"?from={days[0]}&to={today}")
        total = report[-1]
        assert int(total["billable_impressions"]) > 0 and int(total["billable_clicks"]) > 0
        assert sum(int(total[f"filtered:{reason}"]) for reason in REASONS) > 0
        spent += Decimal(total["spend"])
        completions += sum(int(value) for key, value in total.items() if key.startswith("completions:"))
    assert completions > 0
    assert await Completion.filter(task__kind__in=[TaskKind.VISIT_URL, TaskKind.QUIZ,
                                                   TaskKind.SIGN_MESSAGE]).count() == completions
    assert {kind for kind in await Interaction.all().values_list("unit__kind", flat=True)} == {
        TaskKind.POLL, TaskKind.FEEDBACK, TaskKind.SURVEY}
    breakdown = await csv_of(advertiser, f"/portal/advertise/breakdown.csv?by=country&from={days[0]}&to={today}")
    assert len(breakdown) > 6
    deposit = await Deposit.get(advertiser_id=summary["advertiserId"])
    assert (deposit.status, int(deposit.amount)) == (DepositStatus.CREDITED, TOP_UP)

    # The operator: the platform's revenue is what advertisers spent less what the sites earned.
    operator = await portal_sign_in(app.test_client(), OPERATOR)
    page = await (await operator.get("/portal/operator")).get_data(as_text=True)
    assert figure(page, "revenue-earned") == spent - earned > 0

    # The billed figures of the breakdowns are the ledger's, and the books balance against the vault.
    billed = sum(int(cost) for cost in await ReportDaily.all().values_list("cost", flat=True))
    assert Decimal(billed) / UNIT == spent
    assert (await audit(app.extensions["adnet"].chain)).ok


async def test_the_history_is_played_once_however_often_and_concurrently_the_demo_loads(app, settings, clock):
    first, second = await asyncio.gather(load_full_demo(app, settings, clock), load_full_demo(app, settings, clock))
    assert first == second
    counts = [await model.all().count() for model in (TrackingEvent, TrafficDaily, Completion, Interaction,
                                                      Withdrawal, Deposit, LedgerTransaction)]
    assert counts[0] > 1000 and counts[4:6] == [1, 1]

    clock.advance(hours=2)
    again = await load_full_demo(app, settings, clock)
    assert again == first and await Site.all().count() == 2
    assert [await model.all().count() for model in (TrackingEvent, TrafficDaily, Completion, Interaction,
                                                     Withdrawal, Deposit, LedgerTransaction)] == counts
