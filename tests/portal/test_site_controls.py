"""A site's controls in the portal: the section on the site page shows what is stored, a form of checkboxes and id
lists replaces it (htmx swaps the section, without JavaScript a 303), a refused id is marked beside its field and
changes nothing; the campaign form proposes a category."""

from __future__ import annotations

import secrets

from adnet.accounts.models import Publisher, Site
from tests.factories import make_advertiser, make_publisher, make_site


async def own_site(publisher) -> Site:
    owner = await Publisher.get_or_none(wallet=publisher.wallet) or await make_publisher(publisher.wallet)
    return await make_site(owner, domain=f"{secrets.token_hex(4)}.example")


async def test_the_section_shows_the_stored_controls(publisher):
    site = await own_site(publisher)
    html = await (await publisher.get(f"/portal/sites/{site.id}/controls")).get_data(as_text=True)
    assert 'id="site-controls"' in html and f'action="/portal/sites/{site.id}/controls"' in html
    assert 'name="attachedTasks" value="1" checked' in html and 'name="units" value="1" checked' in html
    assert 'value="gambling" checked' not in html


async def test_saving_with_htmx_and_without_javascript(publisher):
    site = await own_site(publisher)
    advertiser = await make_advertiser()
    form = [("units", "1"), ("units", "0"), ("attachedTasks", "0"), ("refusedTaskKinds", "QUIZ"),
            ("refusedTaskKinds", "SURVEY"), ("blockedCategories", "gambling"),
            ("blockedAdvertisers", f"{advertiser.id}, {advertiser.id}"), ("blockedCampaigns", "")]
    fragment = await publisher.post(f"/portal/sites/{site.id}/controls", form, htmx=True)
    html = await fragment.get_data(as_text=True)
    assert fragment.status_code == 200 and html.lstrip().startswith('<section id="site-controls"')
    assert 'id="controls-done"' in html and 'value="gambling" checked' in html
    assert (await Site.get(id=site.id)).controls == {
        "blocked_advertisers": [advertiser.id], "blocked_campaigns": [], "blocked_categories": ["gambling"],
        "attached_tasks": False, "units": True, "refused_task_kinds": ["QUIZ", "SURVEY"]}

    response = await publisher.post(f"/portal/sites/{site.id}/controls", [("attachedTasks", "1"), ("units", "0")])
    assert response.status_code == 303 and response.headers["Location"] == f"/portal/sites/{site.id}/controls"
    stored = (await Site.get(id=site.id)).controls
    assert (stored["attached_tasks"], stored["units"], stored["blocked_categories"]) == (True, False, [])


async def test_a_refused_id_is_marked_and_changes_nothing(publisher):
    site = await own_site(publisher)
    refused = await publisher.post(f"/portal/sites/{site.id}/controls",
                                   [("blockedCampaigns", "cmp_abcdefghijkl not-a-campaign")], htmx=True)
    html = await refused.get_data(as_text=True)
    assert refused.status_code == 400 and refused.headers["HX-Retarget"] == "#site-controls"
    assert 'id="controls-campaigns" name="blockedCampaigns" rows="2" aria-invalid="true"' in html
    assert "Blocked campaigns, item 2: an id such as cmp_" in html and "cmp_abcdefghijkl not-a-campaign" in html
    page = await publisher.post(f"/portal/sites/{site.id}/controls", [("blockedCategories", "weapons")])
    assert page.status_code == 400 and 'role="alert"' in await page.get_data(as_text=True)
    assert (await Site.get(id=site.id)).controls == {}


async def test_another_wallets_site_is_refused(publisher, other_publisher):
    site = await own_site(other_publisher)
    response = await publisher.post(f"/portal/sites/{site.id}/controls", [("units", "0")])
    assert response.status_code == 403 and (await Site.get(id=site.id)).controls == {}

