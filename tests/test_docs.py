"""The docs say what the code does: every test they name as proof exists (docs/security.md maps each known hole to
its tests), and docs/errors.md names every error code the code can answer with."""

import ast
import base64
import hashlib
import re
from pathlib import Path

from adnet.accounts.sites import SPECIAL_USE_REFUSALS
from adnet.app import create_app
from adnet.campaigns.commands import NewCampaign
from adnet.delivery.sdk import sdk_version
from api.errors import HTTP_CODES
from tests.conftest import make_settings

ROOT = Path(__file__).resolve().parent.parent
NAMED = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def test_every_test_the_docs_name_exists():
    named = {(document.name, path, name) for document in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
             for path, name in NAMED.findall(document.read_text())}
    assert len(named) > 50
    missing = [f"{document}: {path}::{name}" for document, path, name in sorted(named)
               if not (ROOT / path).is_file()
               or not re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text(), re.M)]
    assert missing == []


# Where the code makes a refusal: the error kinds of adnet.core.errors and api.errors, and adnet.core.inputs.rule.
REFUSALS = {"DomainError", "Invalid", "Unauthorized", "Forbidden", "NotFound", "Conflict", "Unavailable",
            "RequestRefused", "rule"}
# Refusals whose code is not written at the call, and where their codes are written instead.
CODES_MADE_ELSEWHERE = {
    ("adnet/accounts/sites.py", "code"): {code for code, _ in SPECIAL_USE_REFUSALS.values()},
    ("adnet/accounts/ownership.py", "failure.code"): set(),  # CheckFailure(code=...), found as a keyword below
    ("adnet/core/inputs.py", "first['type']"): set(),  # the code of a rule(...), found at its call
    ("adnet/interactions/answers.py", "first['type']"): {"invalid_field", "missing_field"},  # an answer's refusal
    ("portal/pages.py", "code"): set(),  # an error of api/errors.py's handlers shown as a page, found there
    ("portal/task_forms.py", "error.code"): set(),  # a task config's refusal said about its form field, found there
    ("portal/advertisers.py", "error.code"): set(),  # a goal's refusal said in its field's words, found at its raise
    ("portal/words.py", "error.code"): set(),  # a refusal said in the words of its field, found where it was made
}
DOCUMENTED_CODE = re.compile(r"^\| \d(?:\d\d|xx) \| `([a-z][a-z0-9_]*)` \|", re.M)


def codes_in(expression: ast.expr) -> set[str]:
    """The codes an expression can be: its string constants (``"a" if ... else "b"``, ``CODES.get(s, "a")``)."""
    return {node.value for node in ast.walk(expression)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"[a-z][a-z0-9_]*",
                                                                                             node.value)}


def raised_codes() -> tuple[dict[str, str], list[str]]:
    """Every error code the code can answer with, by where it is written; and the refusals whose code this scan
    cannot find (neither at the call nor in ``CODES_MADE_ELSEWHERE``)."""
    found = {code: "api/errors.py HTTP_CODES" for code in HTTP_CODES.values()}
    unresolved = []
    for path in sorted(path for package in ("adnet", "api", "portal") for path in (ROOT / package).rglob("*.py")):
        where = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                literal = [argument for argument in node.args if isinstance(argument, ast.Constant)
                           and isinstance(argument.value, str)]
                if name in REFUSALS and literal:
                    found.setdefault(literal[0].value, f"{where}:{node.lineno}")
                elif name in REFUSALS and node.args:
                    code = ast.unparse(node.args[0])
                    if (where, code) in CODES_MADE_ELSEWHERE:
                        found.update(dict.fromkeys(CODES_MADE_ELSEWHERE[where, code], where))
                    else:
                        unresolved.append(f"{where}:{node.lineno} {ast.unparse(node)}")
                for keyword in node.keywords:
                    if keyword.arg == "code":
                        found.update(dict.fromkeys(codes_in(keyword.value), f"{where}:{node.lineno}"))
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    # {"error": {...}} is a JSON-RPC error object (api/dev_rpc.py), not one of adnet's codes.
                    if isinstance(key, ast.Constant) and key.value == "error" and not isinstance(value, ast.Dict):
                        found.update(dict.fromkeys(codes_in(value), f"{where}:{node.lineno}"))
    return found, unresolved


def test_docs_errors_names_every_error_code_the_code_can_answer_with():
    found, unresolved = raised_codes()
    assert unresolved == [], "say in CODES_MADE_ELSEWHERE where these refusals' codes are written"
    assert {"csrf_failed", "already_registered", "invalid_date", "invalid_date_range", "invalid_name", "not_found",
            "method_not_allowed", "token_absent", "fetch_failed", "reserved_domain", "internal_error"} <= set(found)
    documented = set(DOCUMENTED_CODE.findall((ROOT / "docs" / "errors.md").read_text()))
    assert {code: where for code, where in found.items() if code not in documented} == {}


def sdk_attributes_read() -> set[str]:
    """The ``data-`` attributes static/sdk.js reads from the page: through ``getAttribute``/``hasAttribute`` and
    selectors, and through the ``dataset`` of the script tag and of slots (camelCase, turned back into attribute
    names). What ``getAttribute`` reads from the elements the script draws itself (keys of its ``el(...)`` calls,
    inside its shadow roots) is its own business."""
    source = (ROOT / "static" / "sdk.js").read_text()
    drawn = set(re.findall(r"""["'](data-[a-z-]+)["']:""", source))
    named = set(re.findall(r"""(?:get|has)Attribute\(["'](data-[a-z-]+)["']\)""", source)) - drawn
    named |= set(re.findall(r"\[(data-[a-z-]+)[\]=]", source))
    holders = set(re.findall(r"var (\w+) = \(?[^;]*?\.dataset\b", source))
    properties = set(re.findall(r"\.dataset\.([a-z]\w*)", source))
    for holder in holders:
        properties |= set(re.findall(rf"\b{holder}\.([a-z]\w*)\b(?!\()", source))
    return named | {"data-" + re.sub(r"[A-Z]", lambda upper: "-" + upper.group().lower(), name)
                    for name in properties}


def test_docs_sdk_names_every_data_attribute_the_embed_reads():
    read = sdk_attributes_read()
    assert {"data-site-id", "data-api", "data-kind", "data-size", "data-placement", "data-tasks", "data-keywords",
            "data-collapse", "data-heading-level", "data-adnet-slot", "data-adnet-rewards"} <= read
    documented = set(re.findall(r"`(data-[a-z-]+)`", (ROOT / "docs" / "sdk.md").read_text()))
    assert sorted(read - documented) == []


def test_docs_sdk_gives_the_integrity_of_the_served_script():
    """docs/sdk.md's pinned snippet names the current version and the SHA-384 of static/sdk.js, the file served at
    that version's URL: a change of the script that forgets its version or the docs fails here."""
    docs = (ROOT / "docs" / "sdk.md").read_text()
    pinned = re.findall(r'src="[^"]*/sdk/([0-9.]+)/sdk\.js"\s+integrity="(sha384-[A-Za-z0-9+/=]+)"', docs)
    served = (ROOT / "static" / "sdk.js").read_bytes()
    digest = "sha384-" + base64.b64encode(hashlib.sha384(served).digest()).decode()
    assert pinned == [(sdk_version(), digest)]
    assert f"The integrity of version {sdk_version()} " in docs


_PARAMETER = re.compile(r"<(?:[^<>:]+:)?[^<>]+>")
_ANY = re.compile(r"<any\(([^)]*)\):[^>]+>")
ROUTE_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}


def app_routes(*prefixes: str) -> set[str]:
    """Every ``METHOD /path`` of the app under ``prefixes``, each path parameter written ``{}`` and each
    ``<any(a, b):name>`` written out as one route per value."""
    app = create_app(make_settings("sqlite://:memory:", Path("var-unused")))
    routes = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith(prefixes):
            continue
        found = _ANY.search(rule.rule)
        paths = ([rule.rule[:found.start()] + value.strip().strip("'\"") + rule.rule[found.end():]
                  for value in found.group(1).split(",")] if found else [rule.rule])
        routes |= {f"{method} {_PARAMETER.sub('{}', path)}" for path in paths
                   for method in (rule.methods or set()) & ROUTE_METHODS}
    return routes


def test_docs_advertisers_names_every_advertiser_and_operator_route():
    """docs/advertisers.md's route table has a row for every route under /api/advertisers/ and /api/operators/,
    and none the app does not have."""
    routes = app_routes("/api/advertisers/", "/api/operators/")
    assert {"POST /api/advertisers/campaigns/{}/submit", "POST /api/advertisers/campaigns/{}/resume",
            "PATCH /api/advertisers/creatives/{}", "POST /api/operators/campaigns/{}/approve"} <= routes
    table = re.findall(r"^\| `(GET|POST|PUT|PATCH|DELETE) (/api/[^`]+)` \|", (ROOT / "docs" / "advertisers.md")
                       .read_text(), re.M)
    documented = [f"{method} {re.sub(r'{[^}]*}', '{}', path)}" for method, path in table]
    assert sorted(routes - set(documented)) == []
    assert sorted(set(documented) - routes) == []
    assert len(documented) == len(set(documented))


def test_docs_advertisers_says_which_campaign_settings_are_required():
    """The settings docs/advertisers.md says creating a campaign requires are those NewCampaign requires."""
    docs = (ROOT / "docs" / "advertisers.md").read_text()
    sentence = re.search(r"Creating a campaign requires ([^;.]+)", docs)
    assert sentence is not None
    required = {field.alias or name for name, field in NewCampaign.model_fields.items() if field.is_required()}
    assert set(re.findall(r"`(\w+)`", sentence.group(1))) == required
    assert "startsAt" in required


def test_docs_advertisers_names_the_fixed_lists_as_the_pages_do():
    """docs/advertisers.md's table of names is the catalogue every page writes through (``web.labels``)."""
    from adnet.campaigns.models import Category
    from adnet.tasks.models import TaskKind
    from web.labels import LABELS

    section = (ROOT / "docs" / "advertisers.md").read_text().split("## Names on the pages", 1)[1].split("\n## ", 1)[0]
    documented = dict(re.findall(r"^\| `([^`]+)` \| ([^|]+?) \|$", section, re.M))
    assert documented == {member.value: name for member, name in LABELS.items()
                          if isinstance(member, Category | TaskKind)}


def test_docs_advertisers_says_every_decision_reason_as_the_pages_do():
    """docs/advertisers.md's table of the decision explainer's reasons is ``web.labels.DECISION_WORDS``, the words the
    API answers and the portal shows."""
    from web.labels import DECISION_WORDS

    section = (ROOT / "docs" / "advertisers.md").read_text().split("## Why a campaign did or did not serve", 1)[1] \
        .split("\n## ", 1)[0]
    assert dict(re.findall(r"^\| `([^`]+)` \| ([^|]+?) \|$", section, re.M)) == DECISION_WORDS
