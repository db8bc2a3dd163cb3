"""The site page's ad units: the builder previews what a slot would show now through serving's own choice (without
counting a request), writes the snippet, creates and saves units (htmx swaps the section, without JavaScript a
303), marks a refused field, and edits and deletes units; other wallets' sites are refused."""

from __future__ import annotations

import secrets

from adnet.accounts.models import Publisher, Site
from adnet.delivery.models import AdUnit, SiteDailyStat
from adnet.tasks.models import TaskKind
from tests.conftest import rebuild_index
from tests.factories import make_campaign, make_creative, make_house_ad, make_publisher, make_site, make_task

POLL = {"question": "Which chain?", "options": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]}
SIDEBAR = [("name", "Sidebar"), ("kinds", "BANNER"), ("size", "300x250"), ("attachedTasks", "1"),
           ("placement", "sidebar")]


async def own_site(publisher) -> Site:
    owner = await Publisher.get_or_none(wallet=publisher.wallet) or await make_publisher(publisher.wallet)
    return await make_site(owner, domain=f"{secrets.token_hex(4)}.example")


async def text(response) -> str:
    return await response.get_data(as_text=True)


async def test_the_builder_previews_what_would_serve_now_without_counting_it(publisher):
    site = await own_site(publisher)
    campaign = await make_campaign()
    creative = await make_creative(campaign, description="Earn 5%")
    quiz = await make_task(kind=TaskKind.QUIZ, campaign=campaign,
                           config={"question": "2+2?", "answers": ["four"], "choices": ["3", "four"]})
    poll = await make_task(kind=TaskKind.POLL, config=POLL)
    await rebuild_index(publisher.client.app)
    page = await text(await publisher.get(f"/portal/sites/{site.id}/embed"))
    assert 'id="unit-builder"' in page and f'data-creative="{creative.id}"' in page
    assert "&lt;div data-adnet-slot data-kind=&#34;BANNER&#34; data-size=&#34;300x250&#34;&gt;&lt;/div&gt;" in page

    pane = await publisher.post(f"/portal/sites/{site.id}/ad-units/preview", SIDEBAR, htmx=True)
    html = await text(pane)
    assert pane.status_code == 200 and html.lstrip().startswith('<div id="unit-preview"')
    assert f'data-creative="{creative.id}"' in html and quiz.title in html
    assert "data-placement=&#34;sidebar&#34; data-tasks&gt;" in html
    polls = await text(await publisher.post(f"/portal/sites/{site.id}/ad-units/preview",
                                            [("kinds", "POLL"), ("size", "")], htmx=True))
    assert f'data-unit="{poll.id}"' in polls and "Which chain?" in polls
    refused = await publisher.post(f"/portal/sites/{site.id}/ad-units/preview", [("kinds", "POLL"),
                                                                                 ("size", "300x250")], htmx=True)
    assert refused.status_code == 400 and "only a unit that shows banners has a size" in await text(refused)
    nothing = await text(await publisher.post(f"/portal/sites/{site.id}/ad-units/preview",
                                              [("kinds", "SURVEY")], htmx=True))
    assert 'id="preview-none"' in nothing
    services = publisher.client.app.extensions["adnet"]
    await services.serving.flush_counts()
    assert await SiteDailyStat.filter(site_id=site.id).count() == 0  # previews are not serve requests


async def test_the_preview_shows_the_house_ad_that_fills_a_slot_no_campaign_does(publisher):
    site = await own_site(publisher)
    await make_creative(await make_campaign())  # 300x250 only
    house = await make_house_ad(site, width=728, height=90)
    await rebuild_index(publisher.client.app)
    leaderboard = await text(await publisher.post(f"/portal/sites/{site.id}/ad-units/preview",
                                                  [("kinds", "BANNER"), ("size", "728x90")], htmx=True))
    assert f'data-house-ad="{house.id}"' in leaderboard and 'alt="Our newsletter"' in leaderboard
    assert "data-creative" not in leaderboard
    medium = await text(await publisher.post(f"/portal/sites/{site.id}/ad-units/preview",
                                             [("kinds", "BANNER"), ("size", "300x250")], htmx=True))
    assert "data-creative" in medium and "data-house-ad" not in medium
    switched_off = await text(await publisher.post(f"/portal/sites/{site.id}/ad-units/preview",
                                                   [("kinds", "BANNER"), ("size", "728x90"), ("houseAds", "off")],
                                                   htmx=True))
    assert 'id="preview-none"' in switched_off and 'data-house=&#34;off&#34;' in switched_off
    nothing = await text(await publisher.post(f"/portal/sites/{site.id}/ad-units/preview",
                                              [("kinds", "BANNER"), ("size", "160x600")], htmx=True))
    assert 'id="preview-none"' in nothing


async def test_creating_editing_and_deleting_units(publisher):
    site = await own_site(publisher)
    created = await publisher.post(f"/portal/sites/{site.id}/ad-units", SIDEBAR, htmx=True)
    html = await text(created)
    unit = await AdUnit.get(site_id=site.id)
    assert created.status_code == 200 and html.lstrip().startswith('<section id="ad-units"')
    assert "Created Sidebar" in html and f'id="ad-unit-{unit.id}"' in html
    assert (unit.kinds, unit.size, unit.attached_tasks, unit.placement) == (["BANNER"], "300x250", True, "sidebar")

    taken = await publisher.post(f"/portal/sites/{site.id}/ad-units", SIDEBAR, htmx=True)
    html = await text(taken)
    assert taken.status_code == 409 and taken.headers["HX-Retarget"] == "#unit-builder"
    assert 'value="Sidebar" aria-invalid="true" aria-describedby="unit-builder-error"' in html
    bad = await publisher.post(f"/portal/sites/{site.id}/ad-units", [("name", "Polls"), ("kinds", "POLL"),
                                                                    ("attachedTasks", "1")])
    assert bad.status_code == 400 and "only a unit that shows banners shows attached tasks" in await text(bad)
    assert await AdUnit.filter(site_id=site.id).count() == 1

    editing = await text(await publisher.get(f"/portal/sites/{site.id}/ad-units/{unit.id}/edit", htmx=True))
    assert f'action="/portal/sites/{site.id}/ad-units/{unit.id}"' in editing and "Edit Sidebar" in editing
    saved = await publisher.post(f"/portal/sites/{site.id}/ad-units/{unit.id}",
                                 [("name", "Side"), ("kinds", "BANNER"), ("kinds", "POLL"), ("size", ""),
                                  ("houseAds", "off")])
    assert saved.status_code == 303 and saved.headers["Location"] == f"/portal/sites/{site.id}/embed#ad-units"
    await unit.refresh_from_db()
    assert (unit.name, unit.kinds, unit.size, unit.attached_tasks, unit.house_ads) == (
        "Side", ["BANNER", "POLL"], None, False, False)
    page = await text(await publisher.get(f"/portal/sites/{site.id}/embed"))
    assert "&lt;div data-adnet-slot data-kind=&#34;BANNER,POLL&#34; data-house=&#34;off&#34;&gt;&lt;/div&gt;" in page
    editing = await text(await publisher.get(f"/portal/sites/{site.id}/ad-units/{unit.id}/edit", htmx=True))
    assert 'name="houseAds" value="off" checked' in editing

    deleted = await text(await publisher.post(f"/portal/sites/{site.id}/ad-units/{unit.id}/delete", htmx=True))
    assert "Deleted Side." in deleted and 'id="no-ad-units"' in deleted
    assert await AdUnit.filter(site_id=site.id).count() == 0


async def test_another_wallets_site_is_refused(publisher, other_publisher):
    site = await own_site(other_publisher)
    assert (await publisher.post(f"/portal/sites/{site.id}/ad-units", SIDEBAR)).status_code == 403
    assert (await publisher.post(f"/portal/sites/{site.id}/ad-units/preview", SIDEBAR)).status_code == 403
    assert await AdUnit.all().count() == 0
