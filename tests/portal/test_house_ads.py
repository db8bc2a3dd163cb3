"""A site's house ads and floors in the portal: the section on the site's page, adding and deleting house ads and
setting floors with htmx (the section swapped) and without JavaScript (a 303), refusals beside their field, other
wallets' sites refused."""

from __future__ import annotations

import secrets
from decimal import Decimal

from eth_account import Account

from adnet.accounts.models import Publisher, Site
from adnet.delivery.models import HouseAd
from tests.factories import G, make_house_ad, make_publisher, make_site

FORM = {"bannerUrl": "https://publisher.example/house.png", "targetUrl": "https://publisher.example/join",
        "description": "Our newsletter", "size": "300x250"}


async def own_site(publisher) -> Site:
    owner = await Publisher.get_or_none(wallet=publisher.wallet) or await make_publisher(publisher.wallet)
    return await make_site(owner, domain=f"{secrets.token_hex(4)}.example")


async def test_the_site_page_has_the_section(publisher):
    site = await own_site(publisher)
    await make_house_ad(site)
    html = await (await publisher.get(f"/portal/sites/{site.id}/controls")).get_data(as_text=True)
    assert 'id="house-ads"' in html and f'action="/portal/sites/{site.id}/floors"' in html
    assert 'id="add-house-ad"' in html and "Our newsletter" in html and ">300x250<" in html


async def test_adding_and_deleting_a_house_ad_with_and_without_javascript(publisher):
    site = await own_site(publisher)
    response = await publisher.post(f"/portal/sites/{site.id}/house-ads", FORM)
    assert response.status_code == 303 and response.headers["Location"] == f"/portal/sites/{site.id}/controls"
    first = await HouseAd.get(site_id=site.id)
    assert (first.banner_url, first.width, first.height) == (FORM["bannerUrl"], 300, 250)

    fragment = await publisher.post(f"/portal/sites/{site.id}/house-ads", {**FORM, "size": "728x90"}, htmx=True)
    html = await fragment.get_data(as_text=True)
    assert fragment.status_code == 200 and html.lstrip().startswith('<section id="house-ads"')
    assert ">728x90<" in html and ">300x250<" in html

    deleted = await publisher.post(f"/portal/sites/{site.id}/house-ads/{first.id}/delete", htmx=True)
    html = await deleted.get_data(as_text=True)
    assert first.id not in html and ">728x90<" in html
    assert await HouseAd.filter(site_id=site.id).count() == 1


async def test_a_refused_house_ad_is_shown_beside_its_field_and_changes_nothing(publisher):
    site = await own_site(publisher)
    refused = await publisher.post(f"/portal/sites/{site.id}/house-ads",
                                   {**FORM, "targetUrl": "javascript:alert(1)"}, htmx=True)
    html = await refused.get_data(as_text=True)
    assert refused.status_code == 400 and refused.headers["HX-Retarget"] == "#house-ads"
    assert 'id="house-ad-error"' in html and 'role="alert"' in html
    assert 'name="targetUrl" type="url"' in html and 'aria-invalid="true" aria-describedby="house-ad-error"' in html
    assert 'value="Our newsletter"' in html  # what was typed is kept
    page = await publisher.post(f"/portal/sites/{site.id}/house-ads", {**FORM, "size": "big"})
    assert page.status_code == 400 and 'id="house-ad-error"' in await page.get_data(as_text=True)
    assert await HouseAd.filter(site_id=site.id).count() == 0


async def test_setting_floors(publisher):
    site = await own_site(publisher)
    fragment = await publisher.post(f"/portal/sites/{site.id}/floors",
                                    {"floorCpm": "2.5", "placementFloors": "sidebar 0.5\r\ntop = 4\r\n"}, htmx=True)
    html = await fragment.get_data(as_text=True)
    assert fragment.status_code == 200 and 'value="2.5"' in html and "sidebar 0.5\ntop 4\n" in html
    assert 'role="status">Floors saved.' in html
    stored = await Site.get(id=site.id)
    assert stored.floor_cpm == Decimal(5 * G // 2)
    assert stored.placement_floors == {"sidebar": str(G // 2), "top": str(4 * G)}

    response = await publisher.post(f"/portal/sites/{site.id}/floors", {"floorCpm": "", "placementFloors": ""})
    assert response.status_code == 303
    stored = await Site.get(id=site.id)
    assert (stored.floor_cpm, stored.placement_floors) == (0, {})


async def test_a_refused_floor_names_its_field_and_changes_nothing(publisher):
    site = await own_site(publisher)
    refused = await publisher.post(f"/portal/sites/{site.id}/floors",
                                   {"floorCpm": "1", "placementFloors": "sidebar\ntop 2"}, htmx=True)
    html = await refused.get_data(as_text=True)
    assert refused.status_code == 400 and 'id="floors-error"' in html and "(sidebar)" in html
    assert 'name="placementFloors" rows="3"' in html and "sidebar\ntop 2" in html
    refused = await publisher.post(f"/portal/sites/{site.id}/floors", {"floorCpm": "-1"}, htmx=True)
    html = await refused.get_data(as_text=True)
    assert refused.status_code == 400 and 'name="floorCpm"' in html and 'aria-invalid="true"' in html
    stored = await Site.get(id=site.id)
    assert (stored.floor_cpm, stored.placement_floors) == (0, {})


async def test_another_wallets_site_is_refused(publisher):
    stranger = await make_site(await make_publisher(Account.create().address.lower()))
    await make_house_ad(stranger)
    house_ad = await HouseAd.get(site_id=stranger.id)
    for path, form in (("house-ads", FORM), ("floors", {"floorCpm": "9"}), (f"house-ads/{house_ad.id}/delete", {})):
        response = await publisher.post(f"/portal/sites/{stranger.id}/{path}", form)
        assert response.status_code == 403
    assert await HouseAd.filter(site_id=stranger.id).count() == 1
    assert (await Site.get(id=stranger.id)).floor_cpm == 0
