"""The SDK through HTTP as a page of another origin loads it: the versioned URL is open to every origin (a script
tag with Subresource Integrity fetches it in CORS mode), immutable and cached for a year, with exactly the bytes
its integrity value names; an older version's redirect is open too; and a site's page in the portal offers the
pinned snippet beside the plain one."""

from __future__ import annotations

import base64
import hashlib

from markupsafe import escape

from adnet.delivery.sdk import sdk_integrity, sdk_path, sdk_version
from tests.factories import make_publisher, make_site

PAGE = {"Origin": "https://publisher.example", "Sec-Fetch-Mode": "cors"}


async def test_the_versioned_sdk_is_open_to_every_origin_immutable_and_has_its_integrity(client):
    response = await client.get(f"/sdk/{sdk_version()}/sdk.js", headers=PAGE)
    body = await response.get_data()

    assert response.status_code == 200 and response.mimetype == "text/javascript"
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert response.headers["Cross-Origin-Resource-Policy"] == "cross-origin"
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert "Access-Control-Allow-Credentials" not in response.headers
    assert body == sdk_path().read_bytes()
    assert sdk_integrity() == "sha384-" + base64.b64encode(hashlib.sha384(body).digest()).decode()


async def test_an_older_versions_redirect_is_open_to_every_origin(client):
    moved = await client.get("/sdk/0.0.1/sdk.js", headers=PAGE)
    assert moved.status_code == 302
    assert moved.headers["Location"].endswith(f"/sdk/{sdk_version()}/sdk.js")
    assert moved.headers["Access-Control-Allow-Origin"] == "*"
    assert moved.headers["Cache-Control"] == "public, max-age=300"


async def test_a_sites_page_offers_the_snippet_pinned_with_subresource_integrity(publisher):
    site = await make_site(await make_publisher(publisher.wallet), domain="pinned.example")
    page = await (await publisher.get(f"/portal/sites/{site.id}/embed")).get_data(as_text=True)
    pinned = (f'<script async src="http://adnet.test/sdk/{sdk_version()}/sdk.js" integrity="{sdk_integrity()}" '
              f'crossorigin="anonymous" data-site-id="{site.id}"></script>')
    assert f'<code id="snippet-script-sri">{escape(pinned)}</code>' in page
    assert 'data-copy="snippet-script-sri"' in page
