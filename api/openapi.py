"""The OpenAPI document (``/openapi.json``, rendered on ``/docs``): quart-schema's, from the routes' own
declarations (``with_body``, ``with_query``, ``document_response``, ``refusals``, ``require_session``), completed
with what those cannot say:

- every path in full (``_PATH_ARGUMENT``);
- what the app enforces on every route: a JSON body on every POST, PUT and PATCH under /api/, also where the route
  reads nothing from it (the JSON-only rule keeps other sites' forms out, docs/auth.md), answered 413 (over 64 KiB)
  or 415 (not JSON); and a rate limit on every route, answered 429 with ``Retry-After``;
- answers that are not JSON (a CSV file, a redirect, metrics text), declared with ``other_answer``; a query
  parameter a handler reads itself, declared with ``query_parameter``;
- what each error status means, the error body once as a component, an operation's summary as its docstring's
  first sentence, and a tag per part of the API.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, TypeVar

from quart_schema import APIKeySecurityScheme, HttpSecurityScheme
from quart_schema.openapi import OpenAPIProvider

from api.schemas import ErrorOut

F = TypeVar("F", bound=Callable[..., Any])

_OTHER_ANSWERS = "_adnet_other_answers"
_PARAMETERS = "_adnet_parameters"


def other_answer(status: int, description: str, media_type: str | None = None,
                 headers: dict[str, str] | None = None) -> Callable[[F], F]:
    """Route decorator: document an answer whose body is not JSON: ``media_type`` text (a CSV file, metrics), or
    none (a redirect); ``headers`` names the headers it carries, each with what it says."""
    def document(handler: F) -> F:
        answer: dict[str, Any] = {"description": description}
        if media_type is not None:
            answer["content"] = {media_type: {"schema": {"type": "string"}}}
        if headers:
            answer["headers"] = {name: {"description": text, "schema": {"type": "string"}}
                                 for name, text in headers.items()}
        setattr(handler, _OTHER_ANSWERS, {**getattr(handler, _OTHER_ANSWERS, {}), status: answer})
        return handler

    return document


def query_parameter(name: str, description: str) -> Callable[[F], F]:
    """Route decorator: document an optional query-string parameter that the handler reads itself, besides any
    ``with_query`` declares."""
    def document(handler: F) -> F:
        parameter = {"name": name, "in": "query", "required": False, "description": description,
                     "schema": {"type": "string"}}
        setattr(handler, _PARAMETERS, [*getattr(handler, _PARAMETERS, []), parameter])
        return handler

    return document


@dataclass
class BearerScheme(HttpSecurityScheme):
    """A bearer token, with what it is (quart-schema's scheme classes drop a description)."""

    description: str | None = None


@dataclass
class CookieScheme(APIKeySecurityScheme):
    """A cookie, with what it is."""

    description: str | None = None


# The headers of a CSV answer.
CSV_FILE = {"Content-Disposition": "attachment, with the file's name"}
# The tags of the document, in the order /docs shows them, each for the paths under its prefixes (the first
# tag with a matching prefix wins).
TAGS: list[tuple[str, tuple[str, ...], str]] = [
    ("auth", ("/api/auth/",), "Sign-In with Ethereum (EIP-4361): a nonce, a signed message, a session."),
    ("publishers", ("/api/publishers/",), "Sites, their verification, traffic and balances: top-up, withdrawal, "
                                          "exchange. Signed in as the site's wallet."),
    ("advertisers", ("/api/advertisers/", "/api/interactions/{unit_id}/results"),
     "The advertiser's account, campaigns, creatives, tasks and units, funding, reports and the answers to units. "
     "Signed in as the advertiser's wallet."),
    ("operators", ("/api/operators/",), "Review, the vault's rate and the platform's revenue. Signed in as an "
                                        "operator's wallet (ADNET_OPERATORS)."),
    ("embed", ("/api/",), "What publishers' pages call, from any origin and without a session: serving, tracking, "
                          "task completion and answers to units."),
    ("operations", ("/",), "Health and metrics, for load balancers, monitoring and operators."),
]
_ERROR = {"$ref": "#/components/schemas/ErrorOut"}
_RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before trying again.",
                                "schema": {"type": "integer"}}}
# What each error status means; ``error`` names the case (every code is in docs/errors.md).
ERROR_STATUSES = {
    400: "The input is malformed or breaks a rule: ``error`` names the rule (``invalid_field``, ``missing_field``, "
         "``invalid_amount`` ...), ``field`` the offending input.",
    401: "No valid session (``auth_required``), or a sign-in refused (``invalid_signature``, ``expired`` ...).",
    403: "The signed-in wallet may not do this (``not_owner``, ``not_operator`` ...).",
    404: "No such record, or none this wallet may learn of (``not_found``).",
    409: "The record's state refuses this now (``already_completed``, ``invalid_transition``, ``over_budget`` ...).",
    413: "The body is over 64 KiB (``payload_too_large``).",
    415: "The body is not ``application/json`` (``unsupported_media_type``).",
    429: "Too many requests from this client (``rate_limited``); ``retryAfter`` and ``Retry-After`` say when to "
         "try again.",
    503: "The chain (``chain_unavailable``) or the database (``database_unavailable``) cannot be reached; nothing "
         "was changed, retry after ``Retry-After``.",
}
_ANY_JSON_BODY = {"required": True, "content": {"application/json": {"schema": {
    "description": "The route reads nothing from its body; send {} (every POST under /api/ is JSON)."}}}}
# A rule's path in OpenAPI's form. quart-schema's own pattern lets a converter's prefix run across an earlier
# argument: ``<campaign_id>/<any(submit, end):action>`` became ``{action}`` alone.
_PATH_ARGUMENT = re.compile(r"<(?:[^:<>]*:)?([^<>]+)>")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(`])")


class AdnetOpenAPI(OpenAPIProvider):
    """quart-schema's OpenAPI provider, completing each operation as the module says."""

    def schema(self) -> dict[str, Any]:
        document = super().schema()
        document["components"]["schemas"]["ErrorOut"] = ErrorOut.model_json_schema()
        document["tags"] = [{"name": name, "description": description} for name, _, description in TAGS]
        return document

    def build_paths(self, rule: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        built, components = super().build_paths(rule)
        handler = self._app.view_functions[rule.endpoint]
        path = _PATH_ARGUMENT.sub(r"{\1}", rule.rule)
        operations = next(iter(built.values()))
        for method, operation in operations.items():
            operations[method] = self._complete(path, method, operation, handler)
        return {path: operations}, components

    def _complete(self, path: str, method: str, operation: dict[str, Any], handler: Any) -> dict[str, Any]:
        completed = {key: value for key, value in operation.items() if key not in ("summary", "description")}
        completed.update(_summary_and_description(handler),
                         tags=[next(name for name, prefixes, _ in TAGS if path.startswith(prefixes))])
        parameters = [*operation.get("parameters", []), *getattr(handler, _PARAMETERS, [])]
        if parameters:
            completed["parameters"] = parameters
        responses = {**operation["responses"], **getattr(handler, _OTHER_ANSWERS, {}), 429: {}}
        if method in ("post", "put", "patch") and path.startswith("/api/"):
            completed["requestBody"] = {**operation.get("requestBody", _ANY_JSON_BODY), "required": True}
            responses.update({413: {}, 415: {}})
        for status, answer in responses.items():
            if int(status) in ERROR_STATUSES and (answer == {} or _is_error(answer)):
                responses[status] = _error_answer(int(status))
            elif not answer.get("description"):
                responses[status] = {**answer, "description": HTTPStatus(int(status)).phrase}
        completed["responses"] = dict(sorted(responses.items(), key=lambda item: int(item[0])))
        return completed


def _is_error(answer: dict[str, Any]) -> bool:
    """Whether a response object is the error body, as ``refusals`` declares it."""
    title = answer.get("content", {}).get("application/json", {}).get("schema", {}).get("title")
    return bool(title == ErrorOut.__name__)


def _error_answer(status: int) -> dict[str, Any]:
    answer: dict[str, Any] = {"description": _markdown(ERROR_STATUSES[status]),
                              "content": {"application/json": {"schema": _ERROR}}}
    if status in (429, 503):
        answer["headers"] = _RETRY_AFTER
    return answer


def _summary_and_description(handler: Any) -> dict[str, str]:
    """The docstring's first sentence as the operation's summary, the rest as its description, in Markdown (the
    docstrings' ``code`` is written `code`), each paragraph on one line."""
    text = inspect.getdoc(handler) or ""
    paragraphs = [" ".join(paragraph.split()) for paragraph in text.split("\n\n") if paragraph.strip()]
    if not paragraphs:
        return {}
    summary, *rest = _SENTENCE_END.split(paragraphs[0], maxsplit=1)
    described = {"summary": _markdown(summary)}
    description = "\n\n".join([*rest, *paragraphs[1:]])
    if description:
        described["description"] = _markdown(description)
    return described


def _markdown(text: str) -> str:
    return text.replace("``", "`")
