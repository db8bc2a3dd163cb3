"""Sign-in rules without HTTP: what a SIWE message must say, single use of nonces under concurrency, sessions
that expire and end, and the wallet-match rule."""

from __future__ import annotations

import asyncio
import itertools
import random
from datetime import timedelta

import pytest
from eth_account import Account

from adnet.accounts import sessions, signin
from adnet.accounts.commands import SignIn
from adnet.accounts.models import AuthNonce, Session
from adnet.core.errors import DomainError, Forbidden
from tests.auth_helpers import sign, siwe_message

SEEDS = itertools.count(1)  # a distinct, reproducible random source per nonce and token


def fresh_rng() -> random.Random:
    return random.Random(next(SEEDS))


@pytest.fixture
def chain(app):
    return app.extensions["adnet"].chain


async def grant_and_message(settings, chain, clock, account, **changes):
    grant = await signin.issue_nonce(settings=settings, chain_id=chain.chain_id, now=clock.now(),
                                   rng=fresh_rng())
    fields = {"nonce": grant.nonce, "domain": grant.domain, "uri": grant.uri + "/", "chain_id": grant.chain_id,
              "issued_at": clock.now(), **changes}
    message = siwe_message(account.address, **fields)
    return message, sign(account, message)


def open_session(message, signature, settings, chain, clock):
    """``sign_in`` with the message and signature, as the API calls it."""
    return signin.sign_in(SignIn(message=message, signature=signature), settings=settings, chain=chain,
                          now=clock.now(), rng=fresh_rng())


async def refused(call) -> DomainError:
    with pytest.raises(DomainError) as raised:
        await call
    return raised.value


async def test_a_signed_message_opens_a_session_until_it_ends(settings, chain, clock):
    account = Account.create()
    message, signature = await grant_and_message(settings, chain, clock, account)
    signed_in = await open_session(message, signature, settings, chain, clock)
    assert signed_in.wallet == account.address.lower()
    session = await sessions.find_session(signed_in.token, clock.now())
    assert session is not None and session.wallet == signed_in.wallet
    assert await sessions.find_session(signed_in.token.upper(), clock.now()) is None
    assert await sessions.end_session(session, clock.now()) is True
    assert await sessions.end_session(session, clock.now()) is False
    assert await sessions.find_session(signed_in.token, clock.now()) is None


async def test_the_nonce_is_consumed_by_exactly_one_of_many_concurrent_sign_ins(settings, chain, clock):
    account = Account.create()
    message, signature = await grant_and_message(settings, chain, clock, account)
    outcomes = await asyncio.gather(*(
        open_session(message, signature, settings, chain, clock)
        for _ in range(25)
    ), return_exceptions=True)
    opened = [outcome for outcome in outcomes if isinstance(outcome, signin.SignedIn)]
    refusals = {outcome.code for outcome in outcomes if isinstance(outcome, DomainError)}
    assert len(opened) == 1 and refusals == {"invalid_nonce"}
    assert await Session.all().count() == 1
    assert await AuthNonce.exclude(used_at=None).count() == 1


async def test_the_origin_is_compared_whole(settings, chain, clock):
    account = Account.create()
    for changes, code in (({"domain": "adnet.test.evil.example"}, "wrong_domain"),
                          ({"domain": "ADNET.TEST"}, None),
                          ({"uri": "http://adnet.test.evil.example/"}, "wrong_uri"),
                          ({"uri": "https://adnet.test/"}, "wrong_uri")):
        message, signature = await grant_and_message(settings, chain, clock, account, **changes)
        call = open_session(message, signature, settings, chain, clock)
        if code is None:
            assert (await call).wallet == account.address.lower()
        else:
            assert (await refused(call)).code == code


async def test_issued_at_may_be_five_minutes_off_and_no_more(settings, chain, clock):
    account = Account.create()
    for offset, accepted in ((timedelta(minutes=5), True), (timedelta(minutes=-5), True),
                             (timedelta(minutes=5, seconds=1), False), (timedelta(minutes=-5, seconds=-1), False)):
        message, signature = await grant_and_message(settings, chain, clock, account, issued_at=clock.now() + offset,
                                                     expires_in=timedelta(minutes=30))
        call = open_session(message, signature, settings, chain, clock)
        if accepted:
            await call
        else:
            assert (await refused(call)).code == "expired"


async def test_the_wallet_a_request_names_must_be_the_sessions():
    wallet = Account.create().address.lower()
    assert sessions.check_owner(wallet, wallet) == wallet
    with pytest.raises(DomainError) as other:
        sessions.check_owner(wallet, Account.create().address.lower())
    assert (type(other.value), other.value.code) == (Forbidden, "not_owner")


async def test_nonces_come_from_the_injected_random_source(settings, chain, clock):
    first = await signin.issue_nonce(settings=settings, chain_id=1, now=clock.now(), rng=random.Random(5))
    await AuthNonce.filter(nonce=first.nonce).delete()
    again = await signin.issue_nonce(settings=settings, chain_id=1, now=clock.now(), rng=random.Random(5))
    assert first.nonce == again.nonce
    assert (first.domain, first.uri, first.chain_id) == ("adnet.test", "http://adnet.test", 1)
