"""The portal's form view: what every form handler does around its one domain call, written once.

A handler decorated with ``form_view`` receives the form as ``sent`` (its fields, the running services, the instant
the request is handled, the signed-in wallet), parses it into the command the domain takes (``sent.command``),
calls the domain and renders what worked. A refusal of the kinds the form shows beside its fields (``shows``: every
domain refusal unless it says fewer) is answered by the form's ``refused`` view, usually ``portal.pages.form_error``
with the form's fragment and page, said in the words of the form's labels (``portal.words.in_words``); any other
refusal, or any with no ``refused`` view, is the portal's error page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from functools import wraps
from typing import Any, TypeVar, cast

from quart import request
from werkzeug.datastructures import MultiDict

from adnet.core.errors import DomainError
from adnet.core.inputs import Command
from adnet.services import Services
from portal.forms import command_of
from portal.words import in_words
from web.context import services
from web.sessions import current_wallet

C = TypeVar("C", bound=Command)
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
# A form's answer to a refusal: called with the refusal, what was sent, and the route's arguments.
Refused = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class Sent:
    """A form as its handler receives it: its fields (a GET form's are its query string), the running services
    (``run``) and the instant the request is handled (``now``)."""

    form: MultiDict[str, str]
    run: Services
    now: datetime

    @classmethod
    async def read(cls) -> Sent:
        run = services()
        form = request.args if request.method == "GET" else await request.form
        return cls(form=form, run=run, now=run.clock.now())

    @property
    def wallet(self) -> str:
        """The signed-in wallet (on a page behind the portal's session)."""
        return current_wallet()

    def command(self, kind: type[C], **written: Any) -> C:
        """The form as the command ``kind`` (``portal.forms.command_of``); Invalid, naming the field, otherwise."""
        return command_of(kind, self.form, **written)

    def values(self, *names: str) -> dict[str, str]:
        """The fields ``names`` as they were sent ("" for one not sent), for the form shown again."""
        return {name: self.form.get(name, "") for name in names}


def form_view(refused: Refused | None = None, *,
              shows: tuple[type[DomainError], ...] = (DomainError,)) -> Callable[[F], F]:
    """Route decorator for a portal form: the handler is called with ``sent`` (``Sent``) and the route's arguments;
    a refusal of a kind in ``shows`` it raises is answered by ``await refused(error, sent, **route_arguments)``.
    Put it below the decorators that check the session and the CSRF token."""

    def decorate(handler: F) -> F:
        @wraps(handler)
        async def view(**arguments: Any) -> Any:
            sent = await Sent.read()
            if refused is None:
                return await handler(sent, **arguments)
            try:
                return await handler(sent, **arguments)
            except shows as error:
                return await refused(in_words(error), sent, **arguments)

        return cast(F, view)

    return decorate
