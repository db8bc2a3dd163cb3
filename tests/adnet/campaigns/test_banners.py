"""A banner's size read from the first bytes of its file, and the rules a banner is held to before it is stored:
https where the policy says so, a size the campaign takes, a file of the size it claims."""

from __future__ import annotations

import pytest

from adnet.accounts.fetching import Fetcher, FetchPolicy
from adnet.campaigns.banners import check_banner, image_size
from adnet.campaigns.models import MediaType
from adnet.core.errors import Invalid
from tests.images import gif, jpeg, png, svg, webp_extended, webp_lossless, webp_lossy
from tests.site_server import FileNetwork, resolver

PRODUCTION = FetchPolicy.for_environment(production=True)
DEVELOPMENT = FetchPolicy.for_environment(production=False)


@pytest.mark.parametrize("encode", [png, gif, jpeg, webp_lossy, webp_lossless, webp_extended, svg])
@pytest.mark.parametrize(("width", "height"), [(300, 250), (728, 90), (1, 1), (4000, 3000)])
def test_each_format_states_its_size(encode, width, height):
    assert image_size(encode(width, height)) == (width, height)


def test_a_jpeg_frame_after_a_large_exif_segment_is_found():
    assert image_size(jpeg(320, 50, exif=30_000)) == (320, 50)


@pytest.mark.parametrize(("header", "size"), [
    (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 728 90"><rect/></svg>', (728, 90)),
    (b"<?xml version='1.0'?><svg width='300px' height='250px'></svg>", (300, 250)),
    (b'<svg width="100%" height="100%" viewBox="0,0,320,50"></svg>', (320, 50)),
])
def test_an_svg_states_its_size_in_pixels_or_by_its_view_box(header, size):
    assert image_size(header) == size


@pytest.mark.parametrize("header", [
    b"", b"<!doctype html><title>Not found</title>", b"GIF89a", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff\xda\x00\x08",
    b'<svg width="10em" height="5em"></svg>', b"RIFF\x00\x00\x00\x00WEBPVP8 ", png(300, 250)[:20],
])
def test_what_states_no_size_is_none(header):
    assert image_size(header) is None


def fetcher(policy: FetchPolicy, **files: bytes) -> tuple[Fetcher, FileNetwork]:
    network = FileNetwork()
    for name, body in files.items():
        network.serve(f"/{name}.png", body)
    return Fetcher(policy, resolve=resolver({"cdn.example": ["93.184.216.34"]}), network=network), network


async def test_production_refuses_an_http_banner_before_fetching_it():
    banners, network = fetcher(PRODUCTION, banner=png(300, 250))
    with pytest.raises(Invalid) as refused:
        await check_banner(banners, "http://cdn.example/banner.png", "300x250", MediaType.IMAGE, [])
    assert (refused.value.code, refused.value.field) == ("insecure_url", "bannerUrl")
    assert network.requested == []
    await check_banner(banners, "https://cdn.example/banner.png", "300x250", MediaType.IMAGE, [])
    assert network.requested == ["/banner.png"] and network.tls_names == ["cdn.example"]


async def test_development_allows_http():
    banners, network = fetcher(DEVELOPMENT, banner=png(300, 250))
    await check_banner(banners, "http://cdn.example/banner.png", "300x250", MediaType.IMAGE, [])
    assert network.requested == ["/banner.png"] and network.tls_names == []


async def test_a_size_the_campaign_does_not_take_is_refused_without_a_fetch():
    banners, network = fetcher(PRODUCTION, square=png(250, 250))
    with pytest.raises(Invalid) as refused:
        await check_banner(banners, "https://cdn.example/square.png", "250x250", MediaType.IMAGE,
                           ["300x250", "728x90"])
    assert (refused.value.code, refused.value.field) == ("size_not_in_campaign", "size")
    assert refused.value.message == "size: 250x250 is not one of this campaign's sizes (300x250, 728x90)."
    assert network.requested == []


async def test_a_file_of_another_size_than_claimed_is_refused():
    banners, _ = fetcher(PRODUCTION, square=png(250, 250))
    with pytest.raises(Invalid) as refused:
        await check_banner(banners, "https://cdn.example/square.png", "300x250", MediaType.IMAGE, ["300x250"])
    assert (refused.value.code, refused.value.field, refused.value.details["actualSize"]) == (
        "banner_size_mismatch", "size", "250x250")
    assert refused.value.message == "size: the image at bannerUrl is 250x250 pixels, not 300x250."


@pytest.mark.parametrize(("url", "reason"), [
    ("https://cdn.example/missing.png", "bannerUrl: the image's address answered HTTP 404."),
    ("https://cdn.example/page.png",
     "bannerUrl: the file is not a PNG, GIF, JPEG, WebP or SVG image whose size can be read."),
    ("https://elsewhere.example/banner.png",
     "bannerUrl: the image could not be fetched: elsewhere.example does not resolve."),
])
async def test_a_banner_that_cannot_be_fetched_or_read_is_refused(url, reason):
    banners, _ = fetcher(PRODUCTION, page=b"<!doctype html><p>Hello</p>")
    with pytest.raises(Invalid) as refused:
        await check_banner(banners, url, "300x250", MediaType.IMAGE, [])
    assert (refused.value.code, refused.value.message) == ("banner_unreachable", reason)


async def test_a_video_is_held_to_https_and_the_campaigns_sizes_only():
    banners, network = fetcher(PRODUCTION)
    await check_banner(banners, "https://cdn.example/clip.mp4", "300x250", MediaType.VIDEO, ["300x250"])
    assert network.requested == []
    with pytest.raises(Invalid):
        await check_banner(banners, "https://cdn.example/clip.mp4", "728x90", MediaType.VIDEO, ["300x250"])
