"""Image files of a chosen size for the banner checks: real PNGs (and GIF, JPEG, WebP and SVG headers as their
encoders write them), built here so no test depends on a file outside the repository."""

from __future__ import annotations

import struct
import zlib


def png(width: int, height: int) -> bytes:
    """A complete grey PNG of ``width`` x ``height`` pixels (8-bit greyscale)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def gif(width: int, height: int) -> bytes:
    """A GIF89a's logical screen descriptor and trailer."""
    return b"GIF89a" + struct.pack("<HHBBB", width, height, 0, 0, 0) + b";"


def jpeg(width: int, height: int, *, exif: int = 0) -> bytes:
    """A baseline JPEG's segments up to its frame header, after a JFIF segment and ``exif`` bytes of APP1."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    app1 = b"\xff\xe1" + struct.pack(">H", exif + 2) + b"\x00" * exif if exif else b""
    quantisation = b"\xff\xdb" + struct.pack(">H", 67) + b"\x00" + b"\x01" * 64
    frame = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + app1 + quantisation + frame + b"\xff\xd9"


def webp_lossy(width: int, height: int) -> bytes:
    """A simple lossy WebP's RIFF header and VP8 key frame header."""
    frame = b"\x00\x00\x00" + b"\x9d\x01\x2a" + struct.pack("<HH", width, height)
    return b"RIFF" + struct.pack("<I", 4 + 8 + len(frame)) + b"WEBP" + b"VP8 " + struct.pack("<I", len(frame)) + frame


def webp_lossless(width: int, height: int) -> bytes:
    """A lossless WebP's header: 14 bits each of width - 1 and height - 1."""
    bits = (width - 1) | ((height - 1) << 14)
    frame = b"\x2f" + bits.to_bytes(4, "little")
    return b"RIFF" + struct.pack("<I", 4 + 8 + len(frame)) + b"WEBP" + b"VP8L" + struct.pack("<I", len(frame)) + frame


def webp_extended(width: int, height: int) -> bytes:
    """An extended WebP's VP8X chunk: 24 bits each of the canvas width - 1 and height - 1."""
    data = b"\x00" * 4 + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + 8 + len(data)) + b"WEBP" + b"VP8X" + struct.pack("<I", len(data)) + data


def svg(width: int, height: int) -> bytes:
    return (f'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">'
            "<rect width=\"100%\" height=\"100%\"/></svg>").encode()
