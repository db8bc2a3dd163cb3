"""Delivering the outbox: the jobs scheduler's ``webhooks`` job POSTs each due delivery, signed, through the
guarded fetcher (``adnet.accounts.fetching``: no private, loopback or link-local address in production, no
redirect), and logs every attempt.

One account cannot delay another. A round (``Deliverer.deliver_due``) finds the endpoints that have due
deliveries and are neither paused nor held, and starts a sender for each: a task that holds its endpoint, takes
the endpoint's oldest due delivery, POSTs it, and goes on to the next while they are answered 2xx. So an endpoint
has at most one attempt in flight and receives its deliveries in the order they fell due, while the senders of
different endpoints run at once: at most ``MAX_IN_FLIGHT`` in a process, of which at most ``MAX_PER_ACCOUNT`` for
one account (wallet). A round waits for its senders at most ``ROUND_SECONDS``; a sender starts no attempt after
that (the one in progress ends within the fetcher's time limit), and later rounds pass over an endpoint whose
sender still runs. A silent endpoint thus costs its own account's slots and nothing more: every other account's
due deliveries start in the same round, and no round waits on it longer than ``ROUND_SECONDS``.

Leases, in the database so that they hold across processes and hosts: a sender holds its endpoint by a conditional
update of ``held_until`` (``LEASE`` ahead), and takes a delivery by a conditional update that counts the attempt
and moves ``next_attempt_at`` a lease ahead. Two workers never send the same attempt nor to the same endpoint at
once, and a worker that dies mid-attempt leaves both to be taken again once the lease has passed. Each attempt's
outcome is one ``WebhookAttempt`` row, unique per attempt number.

A 2xx answer delivers it; anything else (another status, no answer) is a failure. The delivery is retried after
an exponential backoff, ``BASE_DELAY`` doubled each time up to ``MAX_DELAY``, until ``MAX_ATTEMPTS`` attempts have
failed; the endpoint is held back by the same backoff of its failures in a row, so an endpoint that is down is
tried ever less often however many deliveries wait for it. After ``BREAKER_FAILURES`` failures in a row its
circuit breaker opens: the endpoint is paused, none of its deliveries is attempted, new events still queue for it,
and its owner resumes it (``adnet.webhooks.endpoints.resume_endpoint``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from tortoise.expressions import Q
from tortoise.functions import Min

from adnet.core.ids import new_id
from adnet.webhooks import signing
from adnet.webhooks.models import DeliveryStatus, WebhookAttempt, WebhookDelivery, WebhookEndpoint

log = logging.getLogger(__name__)

BASE_DELAY = timedelta(seconds=30)
MAX_DELAY = timedelta(hours=6)
MAX_ATTEMPTS = 10
BREAKER_FAILURES = 10
LEASE = timedelta(seconds=60)
BATCH = 200
MAX_IN_FLIGHT = 32
MAX_PER_ACCOUNT = 4
ROUND_SECONDS = 1.0
MAX_ERROR_TEXT = 300

# POST (url, body, headers) → the answer's status code; raises the failure type when there was no answer.
Post = Callable[[str, bytes, dict[str, str]], Awaitable[int]]


def backoff(attempt: int) -> timedelta:
    """How long after failed attempt number ``attempt`` (1 for the first) the next one is made."""
    return min(BASE_DELAY * 2 ** (attempt - 1), MAX_DELAY)


def body_of(delivery: WebhookDelivery) -> bytes:
    """The JSON a delivery sends: the event's id, type, time and data (its event loaded)."""
    event = delivery.event
    return json.dumps({"id": event.id, "type": event.type.value,
                       "createdAt": event.created_at.isoformat().replace("+00:00", "Z"), "data": event.payload},
                      separators=(",", ":")).encode()


def headers_of(delivery: WebhookDelivery, secret: str, number: int, now: datetime, body: bytes) -> dict[str, str]:
    """The headers of attempt ``number`` of a delivery: its signature, the event's id and type, the attempt, and the
    body's length (a fixed-length body: a receiver need not support chunked requests)."""
    return {signing.HEADER: signing.sign(secret, int(now.timestamp()), body), "Content-Length": str(len(body)),
            "Adnet-Event-Id": delivery.event.id, "Adnet-Event-Type": delivery.event.type.value,
            "Adnet-Delivery-Attempt": str(number)}


@dataclass
class _Round:
    """One round's budget (a monotonic deadline) and the attempts its senders began."""

    ends: float
    attempts: int = 0

    def open(self) -> bool:
        return time.monotonic() < self.ends


@dataclass
class Deliverer:
    """Sends due deliveries with ``post``; ``failure`` is the exception ``post`` raises when nothing answered. Its
    senders run as tasks of this process; ``stop`` ends them."""

    post: Post
    failure: type[Exception]
    _senders: dict[str, asyncio.Task[None]] = field(default_factory=dict, init=False, repr=False)
    _accounts: Counter[str] = field(default_factory=Counter, init=False, repr=False)

    async def deliver_due(self, now: datetime, limit: int = BATCH) -> int:
        """One round: start a sender for each endpoint with due deliveries, oldest due first, within the bounds of
        the process and of each account, and wait for them at most ``ROUND_SECONDS``. Returns how many attempts
        they began meanwhile."""
        round_ = _Round(ends=time.monotonic() + ROUND_SECONDS)
        started: list[asyncio.Task[None]] = []
        for endpoint_id, wallet in await _due_endpoints(now, limit):
            if len(self._senders) >= MAX_IN_FLIGHT:
                break
            if endpoint_id in self._senders or self._accounts[wallet] >= MAX_PER_ACCOUNT:
                continue
            sender = asyncio.create_task(self._send(endpoint_id, now, round_), name=f"webhook-{endpoint_id}")
            self._senders[endpoint_id] = sender
            self._accounts[wallet] += 1
            sender.add_done_callback(partial(self._finished, endpoint_id, wallet))
            started.append(sender)
        if started:
            await asyncio.wait(started, timeout=max(0.0, round_.ends - time.monotonic()))
        return round_.attempts

    async def stop(self) -> None:
        """End every sender still running: an attempt cut short is taken again, as the next, once its lease has
        passed."""
        senders = list(self._senders.values())
        for sender in senders:
            sender.cancel()
        await asyncio.gather(*senders, return_exceptions=True)

    def _finished(self, endpoint_id: str, wallet: str, sender: asyncio.Task[None]) -> None:
        self._senders.pop(endpoint_id, None)
        self._accounts[wallet] -= 1
        if self._accounts[wallet] <= 0:
            del self._accounts[wallet]
        if not sender.cancelled() and sender.exception() is not None:
            log.error("webhook sender failed endpoint=%s", endpoint_id, exc_info=sender.exception())

    async def _send(self, endpoint_id: str, now: datetime, round_: _Round) -> None:
        """Hold the endpoint, then send its due deliveries one by one, oldest first, until none is due, one
        fails, or the round's budget is spent."""
        lease = now + LEASE
        endpoint = await _hold(endpoint_id, now, lease)
        if endpoint is None:
            return  # another worker holds it, or it was paused or removed meanwhile
        while round_.open():
            delivery = await _take_next(endpoint, now)
            if delivery is None:
                break
            round_.attempts += 1
            if not await self._attempt(endpoint, delivery, now):
                return  # the failure holds the endpoint back for its backoff
        await WebhookEndpoint.filter(id=endpoint.id, held_until=lease).update(held_until=None)

    async def _attempt(self, endpoint: WebhookEndpoint, delivery: WebhookDelivery, now: datetime) -> bool:
        """Make the taken attempt of ``delivery``, log it, and record its outcome on the delivery and the endpoint;
        whether it was delivered."""
        number = delivery.attempts
        body = body_of(delivery)
        status: int | None = None
        error = ""
        try:
            status = await self.post(endpoint.url, body, headers_of(delivery, endpoint.secret, number, now, body))
        except self.failure as failure:
            error = str(failure)[:MAX_ERROR_TEXT]
        if status is not None and not 200 <= status < 300:
            error = f"answered {status}"
        await WebhookAttempt.create(id=new_id("wha"), delivery_id=delivery.id, number=number, attempted_at=now,
                                    status_code=status, error=error)
        if not error:
            outcome = {"status": DeliveryStatus.DELIVERED, "delivered_at": now}
        elif number >= MAX_ATTEMPTS:
            outcome = {"status": DeliveryStatus.FAILED}
        else:
            outcome = {"next_attempt_at": now + backoff(number)}
        await WebhookDelivery.filter(id=delivery.id, attempts=number).update(**outcome)
        log.info("webhook attempt delivery=%s event=%s endpoint=%s attempt=%d status=%s error=%s", delivery.id,
                 delivery.event.id, endpoint.id, number, status, error)
        if error:
            await _failed(endpoint, now)
        elif endpoint.consecutive_failures:
            await WebhookEndpoint.filter(id=endpoint.id).update(consecutive_failures=0)
            endpoint.consecutive_failures = 0
        return not error


async def _due_endpoints(now: datetime, limit: int) -> list[tuple[str, str]]:
    """(endpoint id, wallet) of the endpoints with deliveries due at ``now`` that are neither paused, removed nor
    held, the one whose delivery fell due first first."""
    rows = await WebhookDelivery.filter(
        Q(endpoint__held_until=None) | Q(endpoint__held_until__lte=now), status=DeliveryStatus.PENDING,
        next_attempt_at__lte=now, endpoint__paused_at=None, endpoint__deleted_at=None,
    ).annotate(due=Min("next_attempt_at")).group_by("endpoint_id", "endpoint__wallet").order_by("due").limit(
        limit).values_list("endpoint_id", "endpoint__wallet")
    return [(str(endpoint_id), str(wallet)) for endpoint_id, wallet in rows]


async def _hold(endpoint_id: str, now: datetime, lease: datetime) -> WebhookEndpoint | None:
    """Hold the endpoint until ``lease`` by a conditional update (None when it is held, paused or removed), and
    read it as held."""
    held = await WebhookEndpoint.filter(Q(held_until=None) | Q(held_until__lte=now), id=endpoint_id,
                                        paused_at=None, deleted_at=None).update(held_until=lease)
    return await WebhookEndpoint.get_or_none(id=endpoint_id) if held else None


async def _take_next(endpoint: WebhookEndpoint, now: datetime) -> WebhookDelivery | None:
    """Take the endpoint's oldest due delivery (its event loaded) by a conditional update that counts the attempt
    and moves its next attempt a lease ahead; None when none is due or another worker took it first."""
    delivery = await WebhookDelivery.filter(endpoint_id=endpoint.id, status=DeliveryStatus.PENDING,
                                            next_attempt_at__lte=now).order_by("next_attempt_at", "id").select_related(
                                            "event").first()
    if delivery is None:
        return None
    number = delivery.attempts + 1
    taken = await WebhookDelivery.filter(id=delivery.id, status=DeliveryStatus.PENDING,
                                         attempts=delivery.attempts).update(attempts=number,
                                                                            next_attempt_at=now + LEASE)
    if not taken:
        return None
    delivery.attempts = number
    return delivery


async def _failed(endpoint: WebhookEndpoint, now: datetime) -> None:
    """Count a failed attempt of the held endpoint: hold it back for the backoff of its failures in a row, and
    pause it when they reach ``BREAKER_FAILURES``."""
    failures = endpoint.consecutive_failures + 1
    paused = {"paused_at": now} if failures >= BREAKER_FAILURES else {}
    await WebhookEndpoint.filter(id=endpoint.id).update(consecutive_failures=failures,
                                                        held_until=now + backoff(failures), **paused)
    endpoint.consecutive_failures = failures
    if paused:
        log.warning("webhook endpoint paused endpoint=%s wallet=%s failures=%d", endpoint.id, endpoint.wallet,
                    failures)
