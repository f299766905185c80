"""Comparing two renderings of a signature by their coverage (alpha) channels, with nothing but the
standard library (Debian's /usr/bin/python3 has no numpy or Pillow): a small PNG reader (8-bit,
non-interlaced; what Chrome's canvas.toDataURL and rsvg-convert write) and PSNR.
"""
import math
import struct
import zlib

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}   # PNG colour type -> samples per pixel


def png_alpha(data):
    """(width, height, bytes of the alpha channel, row by row) of an 8-bit PNG; opaque when it has no alpha."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    position, idat, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or interlace != 0 or colour not in CHANNELS:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    step = CHANNELS[colour]
    stride = width * step
    raw = zlib.decompress(b"".join(idat))
    previous = bytearray(stride)
    alpha = bytearray(width * height)
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        unfilter(kind, row, previous, step)
        if colour in (4, 6):
            alpha[y * width:(y + 1) * width] = row[step - 1::step]
        else:
            alpha[y * width:(y + 1) * width] = b"\xff" * width
        previous = row
    return width, height, bytes(alpha)


def unfilter(kind, row, previous, step):
    """Undoes one PNG row filter in place (RFC 2083, section 6)."""
    if kind == 0:
        return
    for i in range(len(row)):
        left = row[i - step] if i >= step else 0
        up = previous[i]
        if kind == 1:
            row[i] = (row[i] + left) & 0xFF
        elif kind == 2:
            row[i] = (row[i] + up) & 0xFF
        elif kind == 3:
            row[i] = (row[i] + ((left + up) >> 1)) & 0xFF
        elif kind == 4:
            corner = previous[i - step] if i >= step else 0
            estimate = left + up - corner
            pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
            row[i] = (row[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        else:
            raise ValueError(f"unknown PNG filter {kind}")


def psnr(a, b, width, box=None):
    """PSNR in dB of two same-sized 8-bit channels, over the whole image or box = (x0, y0, x1, y1)."""
    if len(a) != len(b):
        raise ValueError(f"sizes differ: {len(a)} vs {len(b)}")
    height = len(a) // width
    x0, y0, x1, y1 = box or (0, 0, width, height)
    total, count = 0, 0
    for y in range(y0, y1):
        row = y * width
        for x in range(row + x0, row + x1):
            difference = a[x] - b[x]
            total += difference * difference
        count += x1 - x0
    if total == 0:
        return math.inf
    return 10 * math.log10(255 * 255 / (total / count))


def ink_box(a, b, width, margin=4):
    """The bounding box of every pixel with coverage in either channel, plus a margin."""
    height = len(a) // width
    xs, ys = [], []
    for y in range(height):
        row = y * width
        for x in range(width):
            if a[row + x] or b[row + x]:
                xs.append(x)
                ys.append(y)
    if not xs:
        return None
    return (max(0, min(xs) - margin), max(0, min(ys) - margin), min(width, max(xs) + 1 + margin), min(height, max(ys) + 1 + margin))


def shifted(channel, width, dx):
    """The channel moved dx pixels right (a negative control: a small misplacement must cost PSNR)."""
    height = len(channel) // width
    out = bytearray(len(channel))
    for y in range(height):
        row = y * width
        out[row + dx:row + width] = channel[row:row + width - dx]
    return bytes(out)
