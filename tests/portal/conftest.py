"""Portal tests through the Quart test client: sign in as a wallet does (the portal's own message, signed with
``personal_sign``, posted as a form), and find the CSRF token a page carries, as a browser would."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from eth_account.signers.local import LocalAccount

from tests.auth_helpers import sign
from tests.chain.helpers import user

_CSRF = re.compile(r'name="csrf_token" value="([0-9a-f]{64})"')
HTMX = {"HX-Request": "true"}


def csrf_of(html: str) -> str:
    """The CSRF token a page's forms carry."""
    found = _CSRF.search(html)
    if found is None:
        raise AssertionError("the page carries no CSRF token")
    return found.group(1)


@dataclass
class Publisher:
    """A client signed in to the portal as ``account``, with the CSRF token of its session."""

    client: Any
    account: LocalAccount
    csrf: str

    @property
    def wallet(self) -> str:
        return self.account.address.lower()

    async def post(self, path: str, form: dict[str, str] | list[tuple[str, str]] | None = None, *,
                   htmx: bool = False, csrf: bool = True, **kwargs: Any):
        """POST a form (a dict, or pairs where a name repeats, as checkboxes send it) with this session's CSRF token
        (as htmx sends it, in the header, when ``htmx``)."""
        pairs = list(form.items() if isinstance(form, dict) else form or [])
        headers = dict(kwargs.pop("headers", {}))
        if htmx:
            headers.update(HTMX)
            if csrf:
                headers["X-CSRF-Token"] = self.csrf
        elif csrf:
            pairs.append(("csrf_token", self.csrf))
        return await self.client.post(path, form=pairs, headers=headers, **kwargs)

    async def get(self, path: str, *, htmx: bool = False, **kwargs: Any):
        return await self.client.get(path, headers=HTMX if htmx else {}, **kwargs)


async def portal_sign_in(client: Any, account: LocalAccount) -> Publisher:
    """Sign in through the portal's pages and return the signed-in client with its CSRF token."""
    page = await client.get("/portal/signin")
    assert page.status_code == 200
    presession_csrf = csrf_of(await page.get_data(as_text=True))
    answer = await client.post("/portal/signin/message", form={"address": account.address,
                                                               "csrf_token": presession_csrf})
    assert answer.status_code == 200, await answer.get_data(as_text=True)
    message = (await answer.get_json())["message"]
    signed = await client.post("/portal/signin", form={"message": message, "signature": sign(account, message),
                                                       "csrf_token": presession_csrf, "next": "/portal"})
    assert signed.status_code == 303, await signed.get_data(as_text=True)
    dashboard = await client.get("/portal")
    assert dashboard.status_code == 200
    return Publisher(client, account, csrf_of(await dashboard.get_data(as_text=True)))


@pytest.fixture
async def publisher(client) -> Publisher:
    """Development account 2 (it holds G$ and gas on the test chain), signed in to the portal."""
    return await portal_sign_in(client, user(2))


@pytest.fixture
async def other_publisher(app) -> Publisher:
    """Development account 3 signed in on its own client (its own cookies)."""
    return await portal_sign_in(app.test_client(), user(3))
