"""A refusal said for a person: the portal shows a field's refusal in the words of the field's label, never the
JSON path a client of the API reads (``blockedAdvertisers.0``, ``targeting.geoInclude``).

The API's messages start with that path (``adnet.core.inputs.refusal``), which clients rely on, so they stay as they
are; ``in_words`` rewrites them once, where the portal's forms meet a refusal (``portal.views.form_view``, the report
ranges of ``portal.forms.days_asked``). The refusal keeps its code and its ``field``, which the form uses to mark the
input it is about.
"""

from __future__ import annotations

import re

from adnet.core.errors import DomainError, Invalid

# What each field is called on the portal's forms, by its JSON name: the label beside its input, shortened.
FIELD_LABELS = {
    "accountRef": "account reference", "address": "Contract address", "amount": "Amount",
    "attachedTasks": "Attached tasks", "bannerUrl": "Image URL", "blockedAdvertisers": "Blocked advertisers",
    "blockedCampaigns": "Blocked campaigns",
    "blockedCategories": "Blocked categories", "budget": "Total budget", "by": "Rows", "campaign": "Campaign",
    "category": "Category", "clickParam": "Click parameter", "clickWindowDays": "Click window",
    "config": "Task settings", "contract": "Contract", "cpa": "Price per conversion", "cpc": "Price per click",
    "cpm": "Price per 1000 impressions", "dailyCap": "Daily cap", "days": "Days", "description": "Description",
    "devicesExclude": "Devices to leave out", "devicesInclude": "Devices", "domain": "Domain",
    "endsAt": "End", "floorCpm": "Site floor", "frequencyCap": "Impressions per viewer",
    "frequencyHours": "Hours per period", "from": "From", "fromToken": "Direction",
    "geoExclude": "Countries and regions to leave out", "geoInclude": "Countries and regions", "hours": "Hours",
    "idempotency_key": "Form key", "keywordsExclude": "Keywords to avoid", "keywordsInclude": "Keywords",
    "kind": "Kind", "mediaType": "Media", "message": "Message", "minAmount": "Minimum amount", "name": "Name",
    "osExclude": "Systems to leave out", "osInclude": "Operating systems", "placement": "Placement label",
    "placementFloors": "Placement floors", "rate": "Rate", "reason": "Reason", "refusedTaskKinds": "Refused tasks",
    "rewardGs": "Reward (G$)", "rewardPoints": "Reward (points)", "role": "Role", "rotation": "Rotation",
    "schedule": "Schedule", "scopes": "Scopes", "siteAllow": "Only on these sites",
    "siteDeny": "Never on these sites", "size": "Size",
    "sizes": "Sizes", "startsAt": "Start", "targetUrl": "Link", "timeZone": "Time zone", "title": "Title",
    "to": "To", "token": "Token", "tx": "Transaction hash", "txHash": "Transaction hash", "units": "Units",
    "url": "URL", "value": "Value", "wallet": "Wallet", "walletCap": "Per-wallet cap", "weight": "Weight",
}
# The amount rule, said as what to type (the API's own sentence describes the JSON string).
AMOUNT_RULE = "enter an amount such as 2.5: digits, at most 18 decimals, no sign"
# The JSON names a refusal's sentence may mention (``endsAt must be after startsAt``), said as their labels.
_NAMES = re.compile(r"\b(?:{})\b".format("|".join(name for name in FIELD_LABELS if not name.islower())))
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def label_of(path: str) -> str:
    """The label of the field at a JSON ``path`` (``targeting.geoInclude.2`` → "Countries and regions, item 3"):
    its last named part, and the item's place when the path ends in a list's index."""
    parts = path.split(".")
    index = parts.pop() if len(parts) > 1 and parts[-1].isdigit() else None
    names = [part for part in parts if not part.isdigit()] or ["value"]
    name = names[-1]
    label = FIELD_LABELS.get(name) or " ".join(_WORD.findall(name)).capitalize() or name
    return f"{label}, item {int(index) + 1}" if index is not None else label


def in_words(error: DomainError) -> DomainError:
    """``error`` as the portal says it: about a field, a sentence that starts with the field's label, then what the
    field takes (``Domain: a site's DNS name …``, ``Name is required: fill it in``); any other refusal as it is."""
    path = error.field
    if not isinstance(error, Invalid) or not path:
        return error
    label = label_of(path)
    text = error.message.removeprefix(f"{path}: ").removeprefix("Value error, ").strip().rstrip(".")
    text = _NAMES.sub(lambda name: label_of(name.group()).lower(), text.replace("at least 1 items", "at least one"))
    if not error.message.startswith(f"{path}: "):  # a sentence of its own
        sentence = text[:1].upper() + text[1:]
    elif text == "this field is required":
        sentence = f"{label} is required: fill it in"
    elif error.code == "invalid_amount":
        sentence = f"{label}: {AMOUNT_RULE}"
    elif text.startswith(("may ", "must ", "is ", "cannot ")):
        sentence = f"{label} {text}"
    elif text.lower().startswith(f"{label.lower()} "):  # a rule that names its field itself
        sentence = f"{label}{text[len(label):]}"
    else:
        sentence = f"{label}: {text}"
    details = {key: value for key, value in error.details.items() if key != "field"}
    return Invalid(error.code, f"{sentence}.", field=path, **details)
