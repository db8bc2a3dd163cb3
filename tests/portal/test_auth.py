"""Signing in to the portal: the server writes the SIWE message, a form post opens a cookie session, every page
needs it, and every POST needs the CSRF token of the browser that loaded the form."""

from __future__ import annotations

import pytest

from adnet.accounts.models import Session
from tests.auth_helpers import UNRECOVERABLE_SIGNATURES, sign
from tests.chain.helpers import user
from tests.portal.conftest import HTMX, csrf_of, portal_sign_in

PAGES = ["/portal", "/portal/sites/site_AAAAAAAAAAAAAAAAAAAAAA", "/portal/sites/site_AAAAAAAAAAAAAAAAAAAAAA/balance",
         "/portal/sites/site_AAAAAAAAAAAAAAAAAAAAAA/events.csv?from=2026-01-01&to=2026-01-01",
         "/portal/sites/site_AAAAAAAAAAAAAAAAAAAAAA/withdrawals/wd_AAAAAAAAAAAAAAAAAAAAAA"]
POSTS = ["/portal/sites", "/portal/sites/check", "/portal/signout",
         "/portal/sites/site_AAAAAAAAAAAAAAAAAAAAAA/topup/prepare", "/portal/sites/site_AAAAAAAAAAAAAAAAAAAAAA/topup",
         "/portal/sites/site_AAAAAAAAAAAAAAAAAAAAAA/withdraw",
         "/portal/sites/site_AAAAAAAAAAAAAAAAAAAAAA/exchange/preview",
         "/portal/sites/site_AAAAAAAAAAAAAAAAAAAAAA/exchange"]


async def test_a_wallet_signs_in_with_the_portals_message_and_lands_on_the_dashboard(client, chain):
    account = user(2)
    page = await client.get("/portal/signin?next=/portal/sites")
    html = await page.get_data(as_text=True)
    assert f'data-chain-id="{chain.chain_id}"' in html
    assert "<h1>adnet portal</h1>" in html  # one sign-in for publishers, advertisers and operators
    assert "adnet_presession" in page.headers["Set-Cookie"]
    answer = await client.post("/portal/signin/message", form={"address": account.address,
                                                               "csrf_token": csrf_of(html)})
    message = (await answer.get_json())["message"]
    assert message.startswith("http://adnet.test wants you to sign in with your Ethereum account:\n"
                              f"{account.address}\n")
    assert f"Chain ID: {chain.chain_id}" in message and "URI: http://adnet.test/portal" in message
    assert "\n\nSign in to the adnet portal.\n\n" in message

    signed = await client.post("/portal/signin", form={"message": message, "signature": sign(account, message),
                                                       "csrf_token": csrf_of(html), "next": "/portal/sites"})
    assert signed.status_code == 303 and signed.headers["Location"] == "/portal/sites"
    cookie = signed.headers["Set-Cookie"]
    assert cookie.startswith("adnet_session=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert "Secure" in cookie  # outside development
    assert await Session.filter(wallet=account.address.lower()).count() == 1
    dashboard = await client.get("/portal")
    assert dashboard.status_code == 200
    assert account.address in await dashboard.get_data(as_text=True)  # EIP-55, as every page writes addresses


@pytest.mark.parametrize("path", PAGES)
async def test_every_page_sends_a_visitor_without_a_session_to_sign_in(client, path):
    response = await client.get(path)
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/portal/signin?next=/portal")
    fragment = await client.get(path, headers=HTMX)
    assert fragment.status_code == 204 and fragment.headers["HX-Redirect"].startswith("/portal/signin")


@pytest.mark.parametrize("path", POSTS)
async def test_every_post_needs_a_session_first(client, path):
    response = await client.post(path, form={"amount": "1", "domain": "example.com"})
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/portal/signin")


@pytest.mark.parametrize("path", POSTS)
async def test_every_post_refuses_a_missing_or_foreign_csrf_token(publisher, other_publisher, path):
    for token in (None, "", other_publisher.csrf, "0" * 64):
        headers = {} if token is None else {"X-CSRF-Token": token}
        response = await publisher.client.post(path, form={"amount": "1", "domain": "example.com"},
                                                headers=headers)
        assert response.status_code == 403, (path, token)
        assert "csrf_failed" in await response.get_data(as_text=True)
    assert await Session.filter(wallet=publisher.wallet, ended_at=None).count() == 1  # not signed out


async def test_sign_in_posts_need_the_presession_token_of_this_browser(app, client):
    """Another site cannot sign a browser in to the attacker's wallet: it cannot know this browser's token."""
    account = user(3)
    attacker = app.test_client()
    attacker_page = await attacker.get("/portal/signin")
    attacker_token = csrf_of(await attacker_page.get_data(as_text=True))
    message_answer = await attacker.post("/portal/signin/message", form={"address": account.address,
                                                                         "csrf_token": attacker_token})
    message = (await message_answer.get_json())["message"]

    await client.get("/portal/signin")
    for token in ("", attacker_token):
        forged = await client.post("/portal/signin", form={"message": message, "signature": sign(account, message),
                                                           "csrf_token": token})
        assert forged.status_code == 403
    no_page = await app.test_client().post("/portal/signin/message", form={"address": account.address})
    assert no_page.status_code == 403
    assert await Session.all().count() == 0


async def test_a_refused_signature_shows_the_sign_in_page_again_with_the_reason(client):
    account, impostor = user(2), user(3)
    html = await (await client.get("/portal/signin")).get_data(as_text=True)
    answer = await client.post("/portal/signin/message", form={"address": account.address,
                                                               "csrf_token": csrf_of(html)})
    message = (await answer.get_json())["message"]
    refused = await client.post("/portal/signin", form={"message": message, "signature": sign(impostor, message),
                                                        "csrf_token": csrf_of(html)})
    assert refused.status_code == 401
    assert "The signature is not the wallet&#39;s signature of the message." in await refused.get_data(as_text=True)
    assert await Session.all().count() == 0
    bad_address = await client.post("/portal/signin/message", form={"address": "0x123",
                                                                    "csrf_token": csrf_of(html)})
    assert bad_address.status_code == 400


@pytest.mark.parametrize("signature", UNRECOVERABLE_SIGNATURES.values(), ids=UNRECOVERABLE_SIGNATURES.keys())
async def test_a_signature_ecrecover_cannot_read_shows_the_sign_in_page_with_401(client, signature):
    html = await (await client.get("/portal/signin")).get_data(as_text=True)
    answer = await client.post("/portal/signin/message", form={"address": user(2).address,
                                                               "csrf_token": csrf_of(html)})
    message = (await answer.get_json())["message"]
    refused = await client.post("/portal/signin", form={"message": message, "signature": signature,
                                                        "csrf_token": csrf_of(html)})
    assert refused.status_code == 401
    assert "The signature is not the wallet&#39;s signature of the message." in await refused.get_data(as_text=True)
    assert await Session.all().count() == 0


async def test_after_sign_in_the_browser_goes_only_to_a_portal_path(client):
    account = user(2)
    for target, expected in (("https://evil.example/", "/portal"), ("//evil.example/portal", "/portal"),
                             ("/portal/sites/x", "/portal/sites/x")):
        html = await (await client.get("/portal/signin")).get_data(as_text=True)
        answer = await client.post("/portal/signin/message", form={"address": account.address,
                                                                   "csrf_token": csrf_of(html)})
        message = (await answer.get_json())["message"]
        signed = await client.post("/portal/signin", form={"message": message, "signature": sign(account, message),
                                                           "csrf_token": csrf_of(html), "next": target})
        assert signed.headers["Location"] == expected


async def test_signing_out_ends_the_session_on_the_server(publisher):
    response = await publisher.post("/portal/signout")
    assert response.status_code == 303 and response.headers["Location"] == "/portal/signin"
    assert await Session.filter(wallet=publisher.wallet, ended_at=None).count() == 0
    assert (await publisher.get("/portal")).status_code == 303


async def test_the_token_of_a_session_is_not_the_token_of_the_next_one(client):
    first = await portal_sign_in(client, user(2))
    await first.post("/portal/signout")
    second = await portal_sign_in(client, user(2))
    assert first.csrf != second.csrf
    stale = await second.client.post("/portal/sites", form={"domain": "stale.example", "csrf_token": first.csrf})
    assert stale.status_code == 403
