"""A site's ownership in the portal: the site page says where the site stands and shows each proof's exact text
to copy; "Check now" looks for the proof on a real site (a server on 127.0.0.1) and answers the ownership section
for htmx, or a 303 / the page with the refusal without JavaScript."""

from __future__ import annotations

import pytest

from adnet.accounts.models import Site, SiteState
from tests.conftest import make_settings
from tests.factories import make_publisher, make_site
from tests.site_server import DOMAIN, Answer


@pytest.fixture
def settings(database_url, data_dir, site_server):
    return make_settings(database_url, data_dir, ADNET_SITE_CHECK_PORT=str(site_server.port))


@pytest.fixture
async def site(publisher) -> Site:
    owner = await make_publisher(publisher.wallet)
    return await make_site(owner, domain=DOMAIN, verified=False)


async def test_the_site_page_shows_the_state_and_each_proof_to_copy(publisher, site):
    html = await (await publisher.get(f"/portal/sites/{site.id}")).get_data(as_text=True)
    assert '<section id="site-verification"' in html and 'data-state="unverified"' in html
    assert "Not verified: ads are shown, but this site earns nothing" in html
    token = site.verification_token
    # Each proof is text to copy, never markup of the portal's own page.
    assert (f'<code id="proof-meta_tag">&lt;meta name=&#34;adnet-site-verification&#34; content=&#34;{token}&#34;'
            f'&gt;</code>') in html
    assert f'<code id="proof-well_known">{token}</code>' in html
    publisher_id = (await site.publisher).id
    assert f'<code id="proof-ads_txt">adnet.test, {publisher_id}, DIRECT</code>' in html
    for method in ("meta_tag", "well_known", "ads_txt"):
        assert f'data-copy="proof-{method}"' in html
    assert "https://127.0.0.1/.well-known/adnet.txt" in html
    assert f'action="/portal/sites/{site.id}/verify"' in html and f'hx-post="/portal/sites/{site.id}/verify"' in html
    assert 'hx-target="#site-verification"' in html and "Check now" in html


async def test_check_now_with_htmx_answers_the_section_with_the_refusal_then_the_success(publisher, site,
                                                                                          site_server):
    missing = await publisher.post(f"/portal/sites/{site.id}/verify", htmx=True)
    assert missing.status_code == 400  # a refusal, which htmx swaps like a success
    assert missing.headers["HX-Retarget"] == "#site-verification" and missing.headers["HX-Reswap"] == "outerHTML"
    html = await missing.get_data(as_text=True)
    assert html.lstrip().startswith('<section id="site-verification"') and "<h1>" not in html
    assert 'id="verify-error" class="error" role="alert">No proof of this site was found on 127.0.0.1' in html
    assert "Last checked" in html and "no proof found: /: HTTP 404" in html

    site_server.home_page_with(site)
    found = await publisher.post(f"/portal/sites/{site.id}/verify", htmx=True)
    html = await found.get_data(as_text=True)
    assert found.status_code == 200 and "HX-Retarget" not in found.headers
    assert 'data-state="verified"' in html and "Proof found: 127.0.0.1 is verified." in html
    assert "Verified since" in html and "this site earns" in html
    assert (await Site.get(id=site.id)).state == SiteState.VERIFIED


async def test_check_now_without_javascript(publisher, site, site_server):
    refused = await publisher.post(f"/portal/sites/{site.id}/verify")
    html = await refused.get_data(as_text=True)
    assert refused.status_code == 400
    assert "<h1>127.0.0.1</h1>" in html and 'id="verify-error"' in html and "No proof of this site" in html

    site_server.pages["/.well-known/adnet.txt"] = Answer(body=site.verification_token)
    done = await publisher.post(f"/portal/sites/{site.id}/verify")
    assert done.status_code == 303 and done.headers["Location"] == f"/portal/sites/{site.id}"
    page = await (await publisher.get(done.headers["Location"])).get_data(as_text=True)
    assert 'data-state="verified"' in page and "(Well-known file)" in page


async def test_check_now_needs_the_csrf_token_and_the_owner(publisher, other_publisher, site, site_server):
    site_server.home_page_with(site)
    forged = await publisher.post(f"/portal/sites/{site.id}/verify", csrf=False)
    assert forged.status_code == 403
    stranger = await other_publisher.post(f"/portal/sites/{site.id}/verify")
    assert stranger.status_code == 403
    assert site_server.requested == [] and not (await Site.get(id=site.id)).verified


async def test_a_lapsed_site_says_so(publisher, site, clock):
    await Site.filter(id=site.id).update(state=SiteState.LAPSED, last_checked_at=clock.now(),
                                         check_failure="no proof found: /: HTTP 404")
    html = await (await publisher.get(f"/portal/sites/{site.id}")).get_data(as_text=True)
    assert "Lapsed: adnet no longer finds your proof on 127.0.0.1" in html
    assert "no proof found: /: HTTP 404" in html
