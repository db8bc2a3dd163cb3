"""What a creative's banner must be before it is stored: an https address (plain http in development and test only),
a size the campaign allows, and, for an image, a file whose real size is the size it claims. The address rule is
the one for every banner adnet serves, a publisher's house ads included (``check_banner_url``).

A banner that breaks one of these would show as a broken or distorted image on a publisher's page, so it is refused
when it is added or changed, with the reason beside the field. The file is fetched through the guarded fetcher
(``adnet.accounts.fetching``: in production https only, public addresses only, bounded in time and size), and its
size is read from the first bytes of the file: PNG, GIF, JPEG and WebP headers, and an SVG's ``width`` and
``height`` (or its ``viewBox``). A video's size is not read (its container keeps it anywhere in the file); a video
banner is only held to the https rule and the campaign's sizes.

Advertisers' banners are absolute addresses. adnet's own files (the demo's banners) are stored as paths on adnet and
named with the public URL in answers (``banner_address``).
"""

from __future__ import annotations

import re
import struct
from urllib.parse import urlsplit

from adnet.accounts.fetching import Fetcher, FetchFailed, FetchPolicy
from adnet.campaigns.models import MediaType
from adnet.core.errors import Invalid

USER_AGENT = "adnet-banner-check/1"
# JPEG start-of-frame markers, the segments that carry the image's size (not DHT C4, JPG C8, DAC CC).
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# JPEG markers that stand alone, without a length: TEM, RST0-7.
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})
_SVG_ROOT = re.compile(rb"<svg\b[^>]*>", re.IGNORECASE)
_PIXELS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:px)?\s*$")


def banner_address(stored: str, public_url: str) -> str:
    """Where a browser loads a creative's banner: its stored address, or for one of adnet's own files (the demo's
    banners), stored as a path on adnet such as ``/static/demo/banner-1-300x250.svg``, that path under
    ``public_url``. adnet's own files are never stored with an origin, so they show wherever adnet is served; a
    page of adnet may name the path as it is."""
    return public_url + stored if stored.startswith("/") else stored


def image_size(header: bytes) -> tuple[int, int] | None:
    """The width and height in pixels a PNG, GIF, JPEG, WebP or SVG file starts by stating, or None when the
    bytes are none of these or do not state a size."""
    if header.startswith(b"\x89PNG\r\n\x1a\n") and header[12:16] == b"IHDR" and len(header) >= 24:
        width, height = struct.unpack(">II", header[16:24])
        return _positive(width, height)
    if header[:6] in (b"GIF87a", b"GIF89a") and len(header) >= 10:
        width, height = struct.unpack("<HH", header[6:10])
        return _positive(width, height)
    if header.startswith(b"\xff\xd8"):
        return _jpeg_size(header)
    if header.startswith(b"RIFF") and header[8:12] == b"WEBP":
        return _webp_size(header)
    return _svg_size(header)


# The types of image file whose size ``image_size`` reads, by how their first bytes start.
_IMAGE_TYPES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"),
                (b"\xff\xd8", "image/jpeg"))


def image_type(data: bytes) -> str | None:
    """The media type of a PNG, GIF, JPEG, WebP or SVG file whose size ``image_size`` reads, or None: what adnet
    says a file is when it serves one, from its bytes, never from the Content-Type its host sent."""
    if image_size(data) is None:
        return None
    for start, media_type in _IMAGE_TYPES:
        if data.startswith(start):
            return media_type
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    return "image/svg+xml"


def video_type(data: bytes) -> str | None:
    """The media type of an MP4, WebM or Ogg video, the containers browsers play in a ``<video>``, read from its
    first bytes (an ISO base media ``ftyp`` box other than QuickTime's, an EBML header of doctype ``webm``, an Ogg
    page), or None."""
    if data[4:8] == b"ftyp" and data[8:12] != b"qt  ":
        return "video/mp4"
    if data.startswith(b"\x1a\x45\xdf\xa3") and b"webm" in data[:64]:
        return "video/webm"
    if data.startswith(b"OggS"):
        return "video/ogg"
    return None


def _positive(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Walk the JPEG's segments to its first start-of-frame, which holds the height then the width."""
    position = 2
    while position + 4 <= len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte before a marker
            position += 1
            continue
        if marker in _JPEG_STANDALONE:
            position += 2
            continue
        (length,) = struct.unpack(">H", data[position + 2:position + 4])
        if marker in _JPEG_FRAMES:
            if position + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[position + 5:position + 9])
            return _positive(width, height)
        if marker == 0xDA or length < 2:  # image data starts before any frame: not a readable file
            return None
        position += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    """The canvas of an extended WebP (VP8X), or the frame of a simple lossy (VP8) or lossless (VP8L) one."""
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return _positive(width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def _svg_size(data: bytes) -> tuple[int, int] | None:
    """An SVG's size from its root element: ``width`` and ``height`` in pixels, else its ``viewBox``."""
    root = _SVG_ROOT.search(data)
    if root is None:
        return None
    tag = root.group(0).decode("utf-8", errors="replace")
    attributes = {name.lower(): value for name, value in re.findall(r'\s([\w:-]+)\s*=\s*["\']([^"\']*)["\']', tag)}
    width, height = (_PIXELS.match(attributes.get(name, "")) for name in ("width", "height"))
    if width and height:
        return _positive(round(float(width.group(1))), round(float(height.group(1))))
    box = attributes.get("viewbox", "").replace(",", " ").split()
    if len(box) == 4 and all(_PIXELS.match(number) for number in box[2:]):
        return _positive(round(float(box[2])), round(float(box[3])))
    return None


def check_banner_url(banner_url: str, policy: FetchPolicy) -> None:
    """Refuse the address of any banner adnet serves (a creative's, a house ad's) whose scheme ``policy`` does not
    fetch: Invalid ``insecure_url`` for http where it is https only (production)."""
    if urlsplit(banner_url).scheme.lower() not in policy.schemes:
        raise Invalid("insecure_url", "bannerUrl: banners are served over https only; an http:// image would be "
                                      "blocked on https pages.", field="bannerUrl")


async def check_banner(fetcher: Fetcher, banner_url: str, size: str, media_type: MediaType,
                       campaign_sizes: list[str]) -> None:
    """Refuse a banner that would not show as the campaign expects (Invalid, naming the field): ``insecure_url``
    for http where the fetcher's policy is https only (``check_banner_url``), ``size_not_in_campaign`` for a size
    the campaign does not take, and for an image ``banner_unreachable`` when its file cannot be fetched or read,
    ``banner_size_mismatch`` when the file is not ``size``."""
    check_banner_url(banner_url, fetcher.policy)
    if campaign_sizes and size not in campaign_sizes:
        raise Invalid("size_not_in_campaign", f"size: {size} is not one of this campaign's sizes "
                                              f"({', '.join(campaign_sizes)}).", field="size")
    if media_type is not MediaType.IMAGE:
        return
    host = urlsplit(banner_url).hostname or ""
    try:
        page = await fetcher.get(banner_url, scope=host)
    except FetchFailed as failure:
        raise Invalid("banner_unreachable", f"bannerUrl: the image could not be fetched: {failure.reason}.",
                      field="bannerUrl") from None
    if page.status != 200:
        raise Invalid("banner_unreachable", f"bannerUrl: the image's address answered HTTP {page.status}.",
                      field="bannerUrl")
    found = image_size(page.body)
    if found is None:
        raise Invalid("banner_unreachable", "bannerUrl: the file is not a PNG, GIF, JPEG, WebP or SVG image whose "
                                            "size can be read.", field="bannerUrl")
    real = f"{found[0]}x{found[1]}"
    if real != size:
        raise Invalid("banner_size_mismatch", f"size: the image at bannerUrl is {real} pixels, not {size}.",
                      field="size", actualSize=real)


def banner_fetcher(production: bool) -> Fetcher:
    """The fetcher banners are checked with: the environment's policy (https, public addresses and default ports
    only in production), every URL on its own port."""
    return Fetcher(FetchPolicy.for_environment(production), user_agent=USER_AGENT)
