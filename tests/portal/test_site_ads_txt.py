"""ads.txt and sellers.json on a site's page: the exact ads.txt line to copy, what the last re-check found, and how
sellers.json lists the publisher, which its owner switches to confidential (htmx, and a 303 without JavaScript)
and another wallet cannot."""

from __future__ import annotations

from adnet.accounts.models import Publisher, Site
from tests.factories import EPOCH, make_publisher, make_site


async def test_the_site_page_shows_the_line_what_the_check_found_and_the_listing(publisher):
    owner = await make_publisher(publisher.wallet)
    site = await make_site(owner, domain="news.example")
    html = await (await publisher.get(f"/portal/sites/{site.id}")).get_data(as_text=True)
    assert '<section id="site-ads-txt"' in html
    assert f'<code id="ads-txt-line">adnet.test, {owner.id}, DIRECT</code>' in html
    assert "Not read yet" in html
    assert f"lists your account as seller\n    <code>{owner.id}</code>, by the name and domain" in html
    assert 'href="/sellers.json"' in html

    await Site.filter(id=site.id).update(ads_txt_listed=False, ads_txt_checked_at=EPOCH)
    html = await (await publisher.get(f"/portal/sites/{site.id}")).get_data(as_text=True)
    assert 'class="error" id="ads-txt-state">Missing from ads.txt' in html


async def test_the_owner_lists_the_account_as_confidential(publisher, other_publisher):
    owner = await make_publisher(publisher.wallet)
    site = await make_site(owner, domain="news.example")
    answer = await publisher.post(f"/portal/sites/{site.id}/seller", {"confidential": "true"}, htmx=True)
    html = await answer.get_data(as_text=True)
    assert answer.status_code == 200 and html.lstrip().startswith('<section id="site-ads-txt"')
    assert "confidential: without name or domain" in html and 'id="seller-done"' in html
    assert (await Publisher.get(id=owner.id)).confidential

    stranger = await other_publisher.post(f"/portal/sites/{site.id}/seller", {"confidential": "false"}, htmx=True)
    assert stranger.status_code == 403
    assert (await Publisher.get(id=owner.id)).confidential

    plain = await publisher.post(f"/portal/sites/{site.id}/seller", {"confidential": "false"})
    assert plain.status_code == 303 and plain.headers["Location"].endswith(f"/portal/sites/{site.id}")
    assert not (await Publisher.get(id=owner.id)).confidential
    document = await (await publisher.get("/sellers.json")).get_json()
    assert document["sellers"] == [{"seller_id": owner.id, "seller_type": "PUBLISHER", "name": "news.example",
                                    "domain": "news.example"}]
