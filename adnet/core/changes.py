"""Announcements that what can be served has changed, from the code that changes it to whoever serves.

Approving a campaign, funding it, editing a creative or a task: the domain code that does it calls ``announce()``.
A serving process (``adnet.services``) has its serving index listen in the context of every request and job it
runs (``listen``), so the index is rebuilt at once there; other processes catch up at their next periodic
refresh, and code that runs with no one listening (a CLI command, a unit test) announces to no one. The listener
lives in a context variable, not in a process-wide list, so each running app hears its own changes only. A
listener must be quick and must not fail: it only notes that work is due.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

Listener = Callable[[], None]

_listener: ContextVar[Listener | None] = ContextVar("adnet_changes_listener", default=None)


def listen(listener: Listener) -> None:
    """Have ``listener`` hear the announcements of the current context and of the tasks it starts from now on."""
    _listener.set(listener)


def announce() -> None:
    """Tell the current context's listener, if any, that servable data changed."""
    listener = _listener.get()
    if listener is not None:
        listener()
