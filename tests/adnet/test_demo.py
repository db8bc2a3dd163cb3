"""Demo data: everything the demo page needs, valid, funded, and created once however often it is loaded; its
banners named under the public URL wherever adnet is served."""

from __future__ import annotations

import asyncio
import re

import pytest

from adnet.accounts.models import ProofMethod, Site, SiteState, VerifiedDomain
from adnet.campaigns.models import Campaign, CampaignStatus, Creative
from adnet.config import load_settings
from adnet.core.wallets import dev_accounts
from adnet.demo import DemoRefused, create_demo, load_demo
from adnet.money import ledger
from adnet.tasks.config import parse_config
from adnet.tasks.models import Task, TaskKind, TaskSurface
from tests.adnet.test_config import production_env
from tests.portal.conftest import portal_sign_in


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
    page = await (await advertiser.get(f"/portal/advertise/campaigns/{campaign_id}")).get_data(as_text=True)
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

