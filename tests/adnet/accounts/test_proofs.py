"""Reading the three proofs: the meta tag by an HTML parser (not a pattern), the well-known file line by line, and
IAB ads.txt records naming adnet and the publisher."""

from __future__ import annotations

from adnet.accounts.models import ProofMethod
from adnet.accounts.proofs import Claimant, ads_txt_line, instructions, meta_tokens, read

ADS_SYSTEM = "adnet.test"
CLAIMANT = Claimant(token="0123456789abcdef0123456789abcdef", publisher_id="pub_Abc123")


def test_meta_tags_are_read_by_the_html_parser():
    html = """<!DOCTYPE html><html><head>
      <META NAME="Adnet-Site-Verification" CONTENT=" first ">
      <meta content="second" name="adnet-site-verification"/>
      <meta name="adnet-site-verification" content="">
      <meta name="description" content="<meta name=&quot;adnet-site-verification&quot; content=&quot;fake&quot;>">
      <!-- <meta name="adnet-site-verification" content="commented"> -->
      <script>document.write('<meta name="adnet-site-verification" content="scripted">')</script>
    </head><body><p>adnet-site-verification third</p></body></html>"""
    assert meta_tokens(html) == {"first", "second"}


def test_broken_html_still_yields_its_tags():
    assert meta_tokens('<head><meta name=adnet-site-verification content=tok1><meta name="x"') == {"tok1"}
    assert meta_tokens("") == frozenset()


def test_the_well_known_file_holds_tokens_on_lines_of_their_own():
    text = f"# adnet\n  {CLAIMANT.token}  \nother-token\n"
    assert read(ProofMethod.WELL_KNOWN, text, ads_system=ADS_SYSTEM) == {CLAIMANT.token, "other-token"}
    assert read(ProofMethod.WELL_KNOWN, f"prefix {CLAIMANT.token}", ads_system=ADS_SYSTEM) == {
        f"prefix {CLAIMANT.token}"}
    truncated = f"{CLAIMANT.token}\n{CLAIMANT.token[:10]}"
    assert read(ProofMethod.WELL_KNOWN, truncated, ads_system=ADS_SYSTEM, truncated=True) == {CLAIMANT.token}


def test_ads_txt_records_name_adnet_the_publisher_and_direct():
    text = "\n".join([
        "# ads.txt of news.example.com",
        "contact=ads@news.example.com",
        "google.com, pub-1234567890, DIRECT, f08c47fec0942fa0",
        "ADNET.TEST ,pub_Abc123 , direct   # adnet",
        "adnet.test, pub_Reseller, RESELLER",
        "adnet.test, pub_WithCert, DIRECT, abc123;extension=1",
        "adnet.test, pub_abc123, DIRECT",
        "other.test, pub_Other, DIRECT",
        "adnet.test, , DIRECT",
        "adnet.test pub_NoCommas DIRECT",
    ])
    assert read(ProofMethod.ADS_TXT, text, ads_system=ADS_SYSTEM) == {"pub_Abc123", "pub_WithCert", "pub_abc123"}
    assert CLAIMANT.shown_by(ProofMethod.ADS_TXT, read(ProofMethod.ADS_TXT, text, ads_system=ADS_SYSTEM))
    assert not CLAIMANT.shown_by(ProofMethod.META_TAG, frozenset({"pub_Abc123"}))


def test_the_instructions_are_the_exact_text_each_reader_accepts():
    steps = {step.method: step for step in instructions("news.example.com", CLAIMANT, ADS_SYSTEM)}
    assert steps[ProofMethod.META_TAG].text == (
        f'<meta name="adnet-site-verification" content="{CLAIMANT.token}">')
    assert steps[ProofMethod.WELL_KNOWN].location == "https://news.example.com/.well-known/adnet.txt"
    assert steps[ProofMethod.ADS_TXT].text == ads_txt_line(ADS_SYSTEM, CLAIMANT.publisher_id) == (
        "adnet.test, pub_Abc123, DIRECT")
    for method, step in steps.items():
        assert CLAIMANT.shown_by(method, read(method, step.text, ads_system=ADS_SYSTEM)), method
