"""Serving without HTTP: the query it takes."""

import pytest

from adnet.core.errors import DomainError
from adnet.delivery.serving import parse_serve_query


def test_query_parsing_normalises():
    query = parse_serve_query({"siteId": "site_abc", "kind": "banner, poll", "wallet": "0x" + "AB" * 20,
                               "attached": "1"})
    assert query.kinds == {"BANNER", "POLL"} and query.wallet == "0x" + "ab" * 20 and query.attached
    with pytest.raises(DomainError) as raised:
        parse_serve_query({"siteId": "site_abc", "kind": "BANNER,,POLL"})
    assert raised.value.field == "kind"
