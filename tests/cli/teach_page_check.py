"""Checks what headless Chromium made of a `viosim teach` page.

  teach_page_check.py SCREENSHOT.png DOM.html VARIANTS CPUS_TOTAL

The screenshot must be a 1280 px wide PNG with many colours (a blank or
failed render has one or two); the DOM, as Chromium built it, must hold one
timeline per variant and, in each, one lane per CPU it says it shows, as
many as the CPUs it has when they fit under --cpus, and a waiters strip
per variant at least.
"""
import re
import struct
import sys
import zlib


def png_pixels(path):
    """Width, height and the set of RGB(A) colours of an 8-bit PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                sys.exit(f"{path}: colour type {ctype} depth {depth} not handled")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours = set()
    i = 0
    for _ in range(height):
        ftype = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colours.update(bytes(line[x:x + 3]) for x in range(0, stride, bpp * 4))
        prev = line
    return width, height, colours


def main():
    png, dom_path, variants, cpus_total = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
    width, height, colours = png_pixels(png)
    if width != 1280:
        sys.exit(f"screenshot is {width} px wide, not 1280")
    if len(colours) < 12:
        sys.exit(f"screenshot has {len(colours)} colours: blank or not drawn")
    print(f"screenshot {width}x{height}, {len(colours)} colours sampled")
    dom = open(dom_path, encoding="utf-8").read()
    svgs = re.findall(r'<svg class="timeline" data-variant="([^"]*)" data-cpus-shown="(\d+)" '
                      r'data-cpus-total="(\d+)"', dom)
    if [s[0] for s in svgs] != variants:
        sys.exit(f"timelines for {[s[0] for s in svgs]}, expected {variants}")
    for name, shown, total in svgs:
        lanes = re.findall(rf'<g class="lane" data-variant="{re.escape(name)}" data-cpu="([^"]*)"', dom)
        if len(lanes) != int(shown) or len(set(lanes)) != len(lanes):
            sys.exit(f"{name}: {len(lanes)} lanes ({len(set(lanes))} distinct), the timeline says {shown}")
        if int(total) != cpus_total:
            sys.exit(f"{name}: the timeline counts {total} CPUs, expected {cpus_total}")
        if int(shown) < min(cpus_total, 16):
            sys.exit(f"{name}: {shown} lanes of {cpus_total} CPUs under --cpus 16")
        if int(shown) < cpus_total and f"Showing {shown} of {total} CPUs" not in dom:
            sys.exit(f"{name}: a subset of the CPUs is drawn but the page does not say so")
        print(f"{name}: {shown} lanes of {total} CPUs")
    if len(re.findall(r'<g class="queue"', dom)) < len(variants):
        sys.exit("not a waiters strip in every variant")


if __name__ == "__main__":
    main()
