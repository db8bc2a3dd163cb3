"""A site's settings in the portal: rename, deactivate and reactivate, delete (refused while the site is owed
money), each with htmx (the section swapped) and without JavaScript (a 303); deactivating and deleting in a danger
zone, each refused by the server without its confirmation; other wallets' sites refused."""

from __future__ import annotations

import secrets

from adnet.accounts.models import Publisher, Site
from adnet.money import ledger
from tests.factories import G, fund, make_publisher, make_site


async def own_site(publisher) -> Site:
    owner = await Publisher.get_or_none(wallet=publisher.wallet) or await make_publisher(publisher.wallet)
    return await make_site(owner, domain=f"{secrets.token_hex(4)}.example", name="Old")


async def test_the_site_page_has_its_settings(publisher):
    site = await own_site(publisher)
    html = await (await publisher.get(f"/portal/sites/{site.id}/settings")).get_data(as_text=True)
    assert 'id="site-settings"' in html and f'action="/portal/sites/{site.id}/deactivate"' in html
    assert f'action="/portal/sites/{site.id}/delete"' in html and 'value="Old"' in html


async def test_renaming_with_and_without_javascript(publisher):
    site = await own_site(publisher)
    response = await publisher.post(f"/portal/sites/{site.id}/rename", {"name": "News"})
    assert response.status_code == 303 and response.headers["Location"] == f"/portal/sites/{site.id}/settings"
    assert (await Site.get(id=site.id)).name == "News"

    fragment = await publisher.post(f"/portal/sites/{site.id}/rename", {"name": "Daily"}, htmx=True)
    html = await fragment.get_data(as_text=True)
    assert html.lstrip().startswith('<section id="site-settings"') and 'value="Daily"' in html
    assert 'role="status"' in html and "Renamed to “Daily”." in html
    refused = await publisher.post(f"/portal/sites/{site.id}/rename", {"name": "n" * 121}, htmx=True)
    html = await refused.get_data(as_text=True)
    assert refused.headers["HX-Retarget"] == "#site-settings" and 'role="alert"' in html
    assert "at most 120 characters" in html
    assert (await Site.get(id=site.id)).name == "Daily"


async def test_the_danger_zone_holds_the_destructive_actions_apart(publisher):
    site = await own_site(publisher)
    html = await (await publisher.get(f"/portal/sites/{site.id}/settings")).get_data(as_text=True)
    zone = html[html.index('<section id="danger-zone"'):]
    zone = zone[:zone.index("</section>")]
    assert 'id="site-deactivate" class="danger"' in zone and 'id="site-delete" class="danger"' in zone
    assert 'name="confirm" value="yes"' in zone and 'name="confirmDomain"' in zone and site.domain in zone
    assert 'id="rename-site"' not in zone and 'id="rename-site"' in html


async def test_deactivating_needs_the_box_ticked(publisher):
    site = await own_site(publisher)
    fragment = await publisher.post(f"/portal/sites/{site.id}/deactivate", htmx=True)
    html = await fragment.get_data(as_text=True)
    assert fragment.status_code == 400 and fragment.headers["HX-Retarget"] == "#site-settings"
    assert 'id="deactivate-error" class="error" role="alert">Tick the box' in html
    assert 'aria-describedby="deactivate-error"' in html
    page = await publisher.post(f"/portal/sites/{site.id}/deactivate", {"confirm": "no"})
    assert page.status_code == 400 and "Tick the box" in await page.get_data(as_text=True)
    assert (await Site.get(id=site.id)).active is True


async def test_deleting_needs_the_domain_typed(publisher):
    site = await own_site(publisher)
    for typed in ("", "other.example", site.domain[:-1]):
        refused = await publisher.post(f"/portal/sites/{site.id}/delete", {"confirmDomain": typed}, htmx=True)
        html = await refused.get_data(as_text=True)
        assert refused.status_code == 400 and f"Type {site.domain} to confirm" in html, typed
        assert 'id="delete-error"' in html and 'aria-invalid="true"' in html
    page = await publisher.post(f"/portal/sites/{site.id}/delete", {"confirmDomain": "nope"})
    html = await page.get_data(as_text=True)
    assert page.status_code == 400 and "<html lang=" in html and 'aria-current="page">Settings' in html
    assert (await Site.get(id=site.id)).deleted_at is None
    done = await publisher.post(f"/portal/sites/{site.id}/delete", {"confirmDomain": f" {site.domain.upper()} "})
    assert done.status_code == 303 and (await Site.get(id=site.id)).deleted_at is not None


async def test_deactivating_and_reactivating(publisher):
    site = await own_site(publisher)
    fragment = await publisher.post(f"/portal/sites/{site.id}/deactivate", {"confirm": "yes"}, htmx=True)
    html = await fragment.get_data(as_text=True)
    assert "Deactivated" in html and 'id="site-reactivate"' in html
    assert (await Site.get(id=site.id)).active is False
    response = await publisher.post(f"/portal/sites/{site.id}/reactivate")
    assert response.status_code == 303 and (await Site.get(id=site.id)).active is True


async def test_deleting_is_refused_while_owed_then_done(publisher):
    site = await own_site(publisher)
    await fund(ledger.site(site.id), G)
    confirmed = {"confirmDomain": site.domain}
    refused = await publisher.post(f"/portal/sites/{site.id}/delete", confirmed, htmx=True)
    html = await refused.get_data(as_text=True)
    assert refused.headers["HX-Retarget"] == "#site-settings" and "still owed money" in html
    page = await publisher.post(f"/portal/sites/{site.id}/delete", confirmed)
    assert page.status_code == 409 and "still owed money" in await page.get_data(as_text=True)
    assert (await Site.get(id=site.id)).deleted_at is None

    empty = await own_site(publisher)
    done = await publisher.post(f"/portal/sites/{empty.id}/delete", {"confirmDomain": empty.domain}, htmx=True)
    assert done.headers["HX-Redirect"] == "/portal"
    assert (await Site.get(id=empty.id)).deleted_at is not None
    dashboard = await (await publisher.get("/portal")).get_data(as_text=True)
    assert empty.domain not in dashboard and site.domain in dashboard
    page = await (await publisher.get(f"/portal/sites/{empty.id}/settings")).get_data(as_text=True)
    assert "Deleted" in page and f'action="/portal/sites/{empty.id}/delete"' not in page


async def test_another_wallets_site_is_refused(publisher, other_publisher):
    site = await own_site(other_publisher)
    for action in ("rename", "deactivate", "delete"):
        response = await publisher.post(f"/portal/sites/{site.id}/{action}",
                                        {"name": "Mine", "confirm": "yes", "confirmDomain": site.domain})
        assert response.status_code == 403, action
    unchanged = await Site.get(id=site.id)
    assert (unchanged.name, unchanged.active, unchanged.deleted_at) == ("Old", True, None)


async def test_content_categories_are_chosen_from_the_iab_content_taxonomy(publisher):
    site = await own_site(publisher)
    html = await (await publisher.get(f"/portal/sites/{site.id}/settings")).get_data(as_text=True)
    assert "IAB Content Taxonomy 3.1" in html and '<option value="596">Technology &amp; Computing</option>' in html
    response = await publisher.post(f"/portal/sites/{site.id}/content", {"contentCategories": "596"})
    assert response.status_code == 303
    assert (await Site.get(id=site.id)).content_categories == ["596"]
    fragment = await publisher.post(f"/portal/sites/{site.id}/content", {"contentCategories": "599"}, htmx=True)
    html = await fragment.get_data(as_text=True)
    assert '<option value="599" selected>Technology &amp; Computing / Computing</option>' in html
    assert "Content categories saved." in html
    refused = await publisher.post(f"/portal/sites/{site.id}/content", {"contentCategories": "defi"}, htmx=True)
    assert refused.headers["HX-Retarget"] == "#site-settings"
    assert "is not an IAB Content Taxonomy 3.1 id" in await refused.get_data(as_text=True)
    assert (await Site.get(id=site.id)).content_categories == ["599"]
    await publisher.post(f"/portal/sites/{site.id}/content", {"contentCategories": ""})
    assert (await Site.get(id=site.id)).content_categories == []
