"""The ads.txt reader (IAB ads.txt 1.1) as a pure function: records, variables, comments, whitespace, case, extension
fields and lines it must skip."""

from adnet.accounts import ads_txt
from adnet.accounts.ads_txt import AdsTxt, Record, parse, parse_line

FILE = """\ufeff# ads.txt of news.example
contact=ads@news.example
SUBDOMAIN = shop.news.example
OWNERDOMAIN=news.example

google.com, pub-0000000000000000, DIRECT, f08c47fec0942fa0
  ADS.Adnet.example ,  pub_Abc123 ,direct   # adnet, lower-case relationship
ads.adnet.example, pub_Reseller, RESELLER
ads.adnet.example, pub_WithExtension, DIRECT ; extension=1, more
ads.adnet.example, pub_NoRelationship
ads.adnet.example, pub_Bogus, PARTNER
ads.adnet.example, , DIRECT
#ads.adnet.example, pub_Commented, DIRECT
ads.adnet.example\tpub_Tabbed\tDIRECT
"""


def test_records_are_read_with_their_fields_in_canonical_form():
    parsed = parse(FILE)
    assert parsed.records == (
        Record("google.com", "pub-0000000000000000", "DIRECT", "f08c47fec0942fa0"),
        Record("ads.adnet.example", "pub_Abc123", "DIRECT"),
        Record("ads.adnet.example", "pub_Reseller", "RESELLER"),
        Record("ads.adnet.example", "pub_WithExtension", "DIRECT"),
    )


def test_variables_are_read_by_lower_case_name():
    assert parse(FILE).variables == (("contact", "ads@news.example"), ("subdomain", "shop.news.example"),
                                     ("ownerdomain", "news.example"))


def test_only_a_direct_record_of_the_system_and_the_exact_account_authorises():
    parsed = parse(FILE)
    accounts = parsed.direct_accounts("ADS.ADNET.EXAMPLE")
    # Not pub_abc123 (ids are exact), pub_Reseller (not DIRECT), pub_Commented, nor the malformed ones.
    assert accounts == {"pub_Abc123", "pub_WithExtension"}
    assert parsed.direct_accounts("adnet.example") == frozenset()  # another system
    assert parsed.direct_accounts("google.com") == {"pub-0000000000000000"}


def test_lines_that_are_neither_record_nor_variable_are_skipped():
    for line in ("", "   ", "# only a comment", "a.example, pub_1", "a.example, pub_1, OWNER", ", pub_1, DIRECT",
                 "a.example\tpub_1\tDIRECT"):
        assert parse_line(line) is None, line


def test_a_certification_id_is_kept_and_an_empty_one_is_none():
    assert parse_line("a.example, pub_1, DIRECT, TAG1") == Record("a.example", "pub_1", "DIRECT", "TAG1")
    assert parse_line("a.example, pub_1, DIRECT, ") == Record("a.example", "pub_1", "DIRECT", None)


def test_a_truncated_file_loses_its_partial_last_line():
    text = "a.example, pub_1, DIRECT\na.example, pub_2, DIRE"
    assert parse(text).records == (Record("a.example", "pub_1", "DIRECT"),)
    assert parse("a.example, pub_1, DIRECT\na.example, pub_2, DIRECT", truncated=True).direct_accounts(
        "a.example") == {"pub_1"}
    assert ads_txt.parse("") == AdsTxt((), ())


def test_a_byte_order_mark_does_not_hide_the_first_record():
    assert parse("\ufeffa.example, pub_1, DIRECT").direct_accounts("a.example") == {"pub_1"}
