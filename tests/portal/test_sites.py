"""Sites in the portal: registration with inline validation (htmx fragment or whole page), the site page with its
embed snippets and its traffic by reason, and other wallets' sites refused."""

from __future__ import annotations

import re

from adnet.accounts.models import Publisher, Site
from tests.api.test_track import event_body, post, serve_ad
from tests.conftest import rebuild_index
from tests.factories import make_campaign, make_creative, make_publisher, make_site
from tests.portal.conftest import csrf_of


async def test_registering_without_javascript_goes_to_the_new_sites_page(publisher):
    response = await publisher.post("/portal/sites", {"domain": "https://WWW.News.Example/path", "name": "News"})
    assert response.status_code == 303
    site = await Site.get(domain="news.example").select_related("publisher")
    assert site.publisher.wallet == publisher.wallet and site.name == "News"
    assert response.headers["Location"] == f"/portal/sites/{site.id}"
    page = await publisher.get(response.headers["Location"])
    html = await page.get_data(as_text=True)
    assert page.status_code == 200 and "<h1>news.example</h1>" in html and 'id="site-verification"' in html
    html = await (await publisher.get(f"/portal/sites/{site.id}/embed")).get_data(as_text=True)
    # The snippets are shown as text to copy, never as markup that runs in the portal.
    assert f'data-site-id=&#34;{site.id}&#34;&gt;&lt;/script&gt;' in html
    assert 'data-copy="snippet-banner"' in html and "data-adnet-slot data-kind=&#34;BANNER&#34;" in html
    assert "<code>docs/sdk.md</code>" in html
    assert 'data-kind=&#34;POLL,FEEDBACK,SURVEY&#34;' in html


async def test_registering_with_htmx_returns_the_new_row_and_a_fresh_form(publisher):
    response = await publisher.post("/portal/sites", {"domain": "blog.example", "name": "Blog"}, htmx=True)
    assert response.status_code == 200
    html = await response.get_data(as_text=True)
    site = await Site.get(domain="blog.example")
    assert html.lstrip().startswith(f'<tr id="row-{site.id}">')
    assert f'<a href="/portal/sites/{site.id}">blog.example</a>' in html
    assert 'id="register-site"' in html and 'hx-swap-oob="true"' in html
    dashboard = await (await publisher.get("/portal")).get_data(as_text=True)
    assert f'id="row-{site.id}"' in dashboard


async def test_a_refused_domain_is_shown_beside_the_field_and_nothing_is_created(publisher):
    cases = [("not a domain", "Domain: a site&#39;s DNS name"), ("intranet", "Domain: a site&#39;s DNS name")]
    for domain, message in cases:
        fragment = await publisher.post("/portal/sites", {"domain": domain}, htmx=True)
        assert fragment.status_code == 400
        assert fragment.headers["HX-Retarget"] == "#register-site" and fragment.headers["HX-Reswap"] == "outerHTML"
        html = await fragment.get_data(as_text=True)
        assert message in html and 'aria-invalid="true"' in html and 'role="alert"' in html
        page = await publisher.post("/portal/sites", {"domain": domain})
        assert page.status_code == 400
        html = await page.get_data(as_text=True)
        assert message in html and "<h1>Dashboard</h1>" in html and f'value="{domain}"' in html
    too_long = await publisher.post("/portal/sites", {"domain": "fine.example", "name": "n" * 121}, htmx=True)
    assert "Name: a site&#39;s name is at most 120 characters" in await too_long.get_data(as_text=True)
    assert await Site.filter(publisher__wallet=publisher.wallet).count() == 0
    assert await Publisher.filter(wallet=publisher.wallet).count() == 0


async def test_registering_the_same_domain_twice_says_so(publisher):
    await publisher.post("/portal/sites", {"domain": "twice.example"})
    again = await publisher.post("/portal/sites", {"domain": "https://twice.example/"}, htmx=True)
    assert "You have registered this domain already." in await again.get_data(as_text=True)
    assert await Site.filter(domain="twice.example").count() == 1


async def test_the_domain_is_checked_while_it_is_typed(publisher):
    hint = await publisher.post("/portal/sites/check", {"domain": "https://www.Shop.EXAMPLE:8443/x"}, htmx=True)
    assert "Will be registered as <strong>shop.example</strong>." in await hint.get_data(as_text=True)
    wrong = await publisher.post("/portal/sites/check", {"domain": "shop"}, htmx=True)
    assert 'class="error"' in await wrong.get_data(as_text=True)
    empty = await publisher.post("/portal/sites/check", {"domain": ""}, htmx=True)
    assert 'class="error"' not in await empty.get_data(as_text=True)


async def test_another_wallets_site_is_403_and_an_unknown_one_404(publisher, other_publisher):
    theirs = await make_site(await make_publisher(other_publisher.wallet), domain="theirs.example")
    for path in (f"/portal/sites/{theirs.id}", f"/portal/sites/{theirs.id}/balance",
                 f"/portal/sites/{theirs.id}/events.csv?from=2026-01-01&to=2026-01-01"):
        response = await publisher.get(path)
        assert response.status_code == 403, path
        html = await response.get_data(as_text=True)
        assert "This site belongs to another wallet." in html and "theirs.example" not in html
    for site_id in ("site_doesNotExist00000000", "nothing", "pub_xyz"):
        response = await publisher.get(f"/portal/sites/{site_id}")
        assert response.status_code == 404 and "No such site." in await response.get_data(as_text=True)


async def test_user_content_is_escaped_everywhere_it_is_shown(publisher):
    await publisher.post("/portal/sites", {"domain": "xss.example", "name": '<script>alert("x")</script>'})
    dashboard = await (await publisher.get("/portal")).get_data(as_text=True)
    assert "<script>alert" not in dashboard
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in dashboard


async def test_pages_carry_the_token_htmx_sends(publisher):
    html = await (await publisher.get("/portal")).get_data(as_text=True)
    assert f'hx-headers=\'{{"X-CSRF-Token": "{publisher.csrf}"}}\'' in html
    assert 'hx-boost="true"' in html and csrf_of(html) == publisher.csrf
    assert "<script src=\"/static/portal.js\" defer></script>" in html


async def test_the_site_page_shows_its_traffic_by_reason_with_a_csv(publisher, client, clock):
    owner = await make_publisher(publisher.account.address.lower())
    site = await make_site(owner)
    unverified = await make_site(owner, verified=False)
    await make_creative(await make_campaign())
    await rebuild_index(client.app)
    for target in (site, unverified):
        ad = await serve_ad(client, target)
        clock.advance(seconds=2)
        await post(client, event_body(ad, target, fingerprint=f"fp-{target.id}"))

    page = await (await client.get(f"/portal/sites/{unverified.id}/traffic")).get_data(as_text=True)
    assert 'id="traffic-totals">0 of 1 impressions' in page
    filtered = re.search(r'<table id="filtered-days">(.*?)</table>', page, re.S).group(1)
    assert "<code>site_unverified</code>" in filtered
    assert re.search(rf'<th scope="row">{clock.today().isoformat()}</th><td>1</td></tr>', filtered)
    proven = await (await client.get(f"/portal/sites/{site.id}/traffic")).get_data(as_text=True)
    assert 'id="traffic-totals">1 of 1 impressions' in proven and 'id="no-filtered"' in proven

    exported = await client.get(f"/portal/sites/{unverified.id}/traffic.csv")
    rows = (await exported.get_data(as_text=True)).splitlines()
    assert exported.mimetype == "text/csv" and exported.headers["Cache-Control"] == "no-store"
    header = rows[0].split(",")
    total = dict(zip(header, rows[-1].split(","), strict=True))
    assert (total["day"], total["impressions"], total["filtered:site_unverified"]) == ("total", "1", "1")
