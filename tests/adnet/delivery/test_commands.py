"""What delivery is asked, as the commands parse it: a serve query and a reported event."""

import pytest

from adnet.core.errors import DomainError
from adnet.core.inputs import parse
from adnet.delivery.commands import ServeQuery, TrackEvent


def test_a_serve_query_is_normalised():
    query = parse(ServeQuery, {"siteId": "site_abc", "kind": "banner, poll", "wallet": "0x" + "AB" * 20,
                               "attached": "1", "size": ""})
    assert query.kinds == {"BANNER", "POLL"} and query.wallet == "0x" + "ab" * 20 and query.attached
    assert query.size is None and query.placement == ""
    assert parse(ServeQuery, {"siteId": "site_abc"}).kinds == {"BANNER"}


@pytest.mark.parametrize(("args", "code", "field"), [
    ({}, "missing_field", "siteId"),
    ({"siteId": "site_abc", "kind": "BANNER,,POLL"}, "invalid_field", "kind"),
    ({"siteId": "site_abc", "kind": "VISIT_URL"}, "invalid_field", "kind"),
    ({"siteId": "site_abc", "size": "300 x 250"}, "invalid_field", "size"),
    ({"siteId": "site_abc", "placement": "p" * 65}, "invalid_field", "placement"),
    ({"siteId": "site_abc", "wallet": "0x1234"}, "invalid_wallet", "wallet"),
    ({"siteId": "site_abc", "attached": "yes"}, "invalid_field", "attached"),
])
def test_a_bad_serve_query_names_its_parameter(args, code, field):
    with pytest.raises(DomainError) as refused:
        parse(ServeQuery, args)
    assert (refused.value.code, refused.value.field) == (code, field)


EVENT = {"type": "IMPRESSION", "campaignId": "cmp_a", "adId": "ad_a", "siteId": "site_a", "fingerprint": "fp-1"}


@pytest.mark.parametrize(("change", "field"), [
    ({"rendered": "true"}, "rendered"),  # strict: a string is no boolean
    ({"pageUrl": "javascript:alert(1)"}, "pageUrl"),
    ({"pageUrl": "https://"}, "pageUrl"),
    ({"fingerprint": "has space"}, "fingerprint"),
    ({"type": "VIEW"}, "type"),
    ({"extra": 1}, "extra"),
])
def test_a_reported_event_is_checked_field_by_field(change, field):
    assert parse(TrackEvent, EVENT).type == "IMPRESSION"
    with pytest.raises(DomainError) as refused:
        parse(TrackEvent, {**EVENT, **change})
    assert refused.value.field == field
