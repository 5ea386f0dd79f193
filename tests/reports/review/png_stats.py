#!/usr/bin/env python3
"""The screenshot test's PNG decoder when stb_image.h (libstb-dev) is absent: standard library only.

Prints "WIDTH HEIGHT COLOURS DOMINANT_PIXELS NEAR_4E79A7_PIXELS NEAR_FDE8C8_PIXELS" (pixels
within 30 per channel of the first op's colour, anti-aliased edges included, and within 4 of a
flagged counter cell's fill) for an 8-bit, non-interlaced RGB or
RGBA PNG (what Chromium writes); exits 1 with the reason on anything else.
"""
import struct
import sys
import zlib
from collections import Counter


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace:
        sys.exit(f"unsupported PNG: depth {depth}, colour type {colour_type}, interlace {interlace}")
    bpp = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        # The five PNG filters (RFC 2083, 6.2), undone in place.
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif kind == 4:
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    width, height, bpp, rows = decode(sys.argv[1])
    colours = Counter()
    for line in rows:
        colours.update(bytes(line[i:i + 3]) for i in range(0, len(line), bpp))
    near = sum(n for rgb, n in colours.items()
               if max(abs(rgb[0] - 0x4E), abs(rgb[1] - 0x79), abs(rgb[2] - 0xA7)) <= 30)
    flag = sum(n for rgb, n in colours.items()
               if max(abs(rgb[0] - 0xFD), abs(rgb[1] - 0xE8), abs(rgb[2] - 0xC8)) <= 4)
    print(width, height, len(colours), max(colours.values()), near, flag)


if __name__ == "__main__":
    main()
