#!/usr/bin/env python3
"""check-heatmap: is the links heat map of report.html in a screenshot of it?

Usage: check-heatmap.py REPORT_JSON SCREENSHOT_PNG

CI (.ci/run) renders report.html of a shipped multi-link scenario in headless
Chromium and runs this on the PNG (issue 42: "the HTML page shows the heat
map, screenshot in CI"). Python 3's standard library only: the PNG is decoded
here with zlib.

The expected colours come from report.json, not from the page: each timed
figure of the links section (a class's busiest share and peak utilisation, a
top link's busy share of the iteration and peak utilisation) mapped through
the page's colour scale, reports/html.c heat_cell(): background
rgba(204, 0, 0, a) with a = 0.6 * clamp(x, 0, 1) printed to 2 decimals,
over the table's rows (white, or #f7f7f7 on even rows: report_html_css).

Checks:
  1. not blank: at least 2 % of the pixels differ from the most common colour,
     and at least 64 distinct colours;
  2. the hottest link's shade (the top link of highest peak utilisation) and
     every other shade of alpha >= MIN_ALPHA in the links section cover at
     least MIN_PIXELS pixels each (a heat cell shows about 2,900 of its shade at
     1000 px wide; the page without the heat map about 200, red text's edges).
Shades fainter than MIN_ALPHA are listed but not required: within a few
levels of the row's background they cannot be told from anti-aliased text.

Exit 0 when both hold, 1 when not (the reason on stdout), 2 on bad input.
"""
import collections
import json
import struct
import sys
import zlib

HEAT_RGB = (204, 0, 0)      # reports/html.c heat_cell()
HEAT_MAX_ALPHA = 0.6        # reports/html.c heat_cell()
ROW_BACKGROUNDS = ((255, 255, 255), (247, 247, 247))  # body, tr:nth-child(even)
TOLERANCE = 2               # per channel: Chromium's blending rounds
MIN_ALPHA = 0.05
MIN_PIXELS = 1000


def die(msg, code=1):
    print("heatmap: FAILED: " + msg)
    sys.exit(code)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(path):
    """(width, height, bytes per pixel, rows): 8-bit RGB or RGBA, not interlaced."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        die(f"{path} is not a PNG", 2)
    pos, idat, ihdr = 8, [], None
    while pos + 8 <= len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if not ihdr:
        die(f"{path}: no IHDR chunk", 2)
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        die(f"{path}: bit depth {depth}, colour type {ctype}, interlace {interlace}: "
            "only 8-bit RGB or RGBA, not interlaced, is read", 2)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    if len(raw) != h * (stride + 1):
        die(f"{path}: {len(raw)} bytes of image data, {h * (stride + 1)} expected", 2)
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ftype == 2:
            line = bytearray((x + p) & 255 for x, p in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ftype == 4:
            for i in range(stride):
                if i >= bpp:
                    line[i] = (line[i] + paeth(line[i - bpp], prev[i], prev[i - bpp])) & 255
                else:
                    line[i] = (line[i] + prev[i]) & 255
        elif ftype != 0:
            die(f"{path}: row {y} has filter type {ftype}", 2)
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def colour_counts(bpp, rows):
    counts = collections.Counter()
    for line in rows:
        counts.update(zip(line[0::bpp], line[1::bpp], line[2::bpp]))
    return counts


def alpha_of(x):
    """heat_cell()'s alpha for a share x, as the page prints it (%.2f)."""
    return float("%.2f" % (HEAT_MAX_ALPHA * min(max(x, 0.0), 1.0)))


def shade(alpha, bg):
    return tuple(round(b * (1 - alpha) + h * alpha) for h, b in zip(HEAT_RGB, bg))


def pixels_of(counts, alpha):
    """Pixels within TOLERANCE of the shade over either row background."""
    targets = [shade(alpha, bg) for bg in ROW_BACKGROUNDS]
    n = 0
    for c, k in counts.items():
        for t in targets:
            if all(abs(a - b) <= TOLERANCE for a, b in zip(c, t)):
                n += k
                break
    return n


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    report_path, png_path = sys.argv[1], sys.argv[2]
    try:
        with open(report_path) as f:
            report = json.load(f)
        it = report["summary"]["iteration_time_s"]
        links = report["links"]
    except (OSError, ValueError, KeyError) as e:
        die(f"{report_path}: {e}", 2)
    w, h, bpp, rows = decode_png(png_path)
    counts = colour_counts(bpp, rows)
    total = w * h
    common, ncommon = max(counts.items(), key=lambda kv: kv[1])
    inked = 1 - ncommon / total
    print(f"heatmap: {png_path}: {w} x {h}, {len(counts)} colours, "
          f"{100 * inked:.1f} % not {'#%02x%02x%02x' % common}")
    if inked < 0.02 or len(counts) < 64:
        die(f"the screenshot is blank ({100 * inked:.2f} % of the pixels differ from the "
            f"most common colour, {len(counts)} colours)")

    # the shades the links section asks for, from report.json's own figures
    wanted = {}  # alpha -> what it stands for (first seen)
    for c in links.get("classes", []):
        for key, x in (("busiest", c.get("busy_s_max")), ("peak", c.get("peak_util_max"))):
            if x is not None:
                share = x / it if key == "busiest" else x
                wanted.setdefault(alpha_of(share), f"class {c['class']} {key} {share:.3f}")
    top = links.get("top", [])
    for l in top:
        wanted.setdefault(alpha_of(l["busy_s"] / it), f"{l['name']} busy {l['busy_s'] / it:.3f}")
        wanted.setdefault(alpha_of(l["peak_util"]), f"{l['name']} peak {l['peak_util']:.3f}")
    if not top:
        die(f"{report_path} lists no link: pick a scenario with links")
    hottest = max(top, key=lambda l: l["peak_util"])
    hot_alpha = alpha_of(hottest["peak_util"])
    if hot_alpha < MIN_ALPHA:
        die(f"the hottest link ({hottest['name']}, peak {hottest['peak_util']:.3f}) is too faint "
            "to see: pick a scenario whose links are used")

    bad = []
    for alpha in sorted(wanted, reverse=True):
        n = pixels_of(counts, alpha)
        need = alpha >= MIN_ALPHA
        what = wanted[alpha] + (f" (and the hottest link, {hottest['name']})"
                                if alpha == hot_alpha else "")
        print(f"heatmap: alpha {alpha:.2f} rgb{shade(alpha, ROW_BACKGROUNDS[0])} / "
              f"rgb{shade(alpha, ROW_BACKGROUNDS[1])}: {n} pixels, {what}"
              + ("" if need else " (too faint to require)"))
        if need and n < MIN_PIXELS:
            bad.append(f"alpha {alpha:.2f} ({what}): {n} pixels, at least {MIN_PIXELS} wanted")
    if bad:
        die("the heat map's colours are missing (is the links section inside the "
            f"{w} x {h} window?): " + "; ".join(bad))
    print(f"heatmap: ok: {sum(1 for a in wanted if a >= MIN_ALPHA)} shades of the links "
          f"section seen, the hottest link's ({hottest['name']}, peak utilisation "
          f"{hottest['peak_util']:.3f}) at alpha {hot_alpha:.2f}")


if __name__ == "__main__":
    main()
