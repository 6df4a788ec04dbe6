#!/usr/bin/env python3
"""The scale of one snapshot (SnapshotScaleBenchmark): Markdown tables and SVG plots from its results.

Usage: python3 benchmarks/plot_scale.py benchmarks/results docs/img
  reads   RESULTS/scale.log  (the GF-BENCH scale lines, one per fork and side)
          RESULTS/scale.json (JMH's acls(ANY) scores)
  writes  IMG/scale-load.svg, IMG/scale-memory.svg, IMG/scale-acls.svg, IMG/scale-first-acls.svg
  prints  the tables of docs/benchmarks.md, "Scale of one snapshot"

No plotting library: the SVG is written here, log-log axes, one line per side, each point the median of
the forks with a bar from the lowest to the highest fork.
"""
import json
import math
import os
import re
import statistics
import sys
from collections import defaultdict

SIDES = [("standard", "StandardAuthorizer", "#1f77b4"), ("grantforge", "GrantForge agent", "#d62728")]


def fork_lines(log_path):
    """{side: {resources: [dict of the line's key=value pairs]}}"""
    found = defaultdict(lambda: defaultdict(list))
    with open(log_path) as f:
        for line in f:
            if not line.startswith("GF-BENCH scale "):
                continue
            fields = dict(pair.split("=", 1) for pair in line.split()[2:])
            found[fields["side"]][int(fields["resources"])].append(fields)
    return found


def acls_scores(json_path):
    """{side: {resources: [ms of each measurement iteration, all forks]}}"""
    scores = defaultdict(dict)
    with open(json_path) as f:
        for result in json.load(f):
            side = result["benchmark"].rsplit("_", 1)[-1]
            resources = int(result["params"]["resourceCount"])
            scores[side][resources] = [x for fork in result["primaryMetric"]["rawData"] for x in fork]
    return scores


def spread(values):
    return statistics.median(values), min(values), max(values)


def line_chart(title, y_label, series, path):
    """series: [(label, colour, [(x, median, low, high)])], log-log."""
    width, height, left, right, top, bottom = 640, 400, 80, 180, 40, 60
    points = [p for _, _, ps in series for p in ps]
    xs = [p[0] for p in points]
    ys = [v for p in points for v in p[1:] if v > 0]
    x0, x1 = math.log10(min(xs)), math.log10(max(xs))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    if y1 == y0:
        y1 += 1
    sx = lambda x: left + (math.log10(x) - x0) / (x1 - x0 or 1) * (width - left - right)
    sy = lambda y: height - bottom - (math.log10(max(y, 10 ** y0)) - y0) / (y1 - y0) * (height - top - bottom)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="15">{title}</text>']
    for e in range(y0, y1 + 1):
        y = sy(10 ** e)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{label(10 ** e)}</text>')
    for x in sorted(set(xs)):
        out.append(f'<line x1="{sx(x):.1f}" y1="{top}" x2="{sx(x):.1f}" y2="{height - bottom}" stroke="#eee"/>')
        out.append(f'<text x="{sx(x):.1f}" y="{height - bottom + 18}" text-anchor="middle">{label(x)}</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 15}" text-anchor="middle">resources</text>')
    out.append(f'<text x="18" y="{(top + height - bottom) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {(top + height - bottom) / 2})">{y_label}</text>')
    for i, (name, colour, ps) in enumerate(series):
        ps = sorted(ps)
        path_d = " ".join(f"{'M' if j == 0 else 'L'}{sx(x):.1f},{sy(m):.1f}" for j, (x, m, _, _) in enumerate(ps))
        out.append(f'<path d="{path_d}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, m, low, high in ps:
            out.append(f'<line x1="{sx(x):.1f}" y1="{sy(low):.1f}" x2="{sx(x):.1f}" y2="{sy(high):.1f}" '
                       f'stroke="{colour}"/>')
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(m):.1f}" r="3.5" fill="{colour}"/>')
        ly = top + 20 + i * 20
        out.append(f'<line x1="{width - right + 15}" y1="{ly - 4}" x2="{width - right + 40}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{width - right + 45}" y="{ly}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def label(v):
    for div, suffix in ((1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


def growth(points):
    """The exponent b of y ~ x^b between the smallest and the largest size (1: linear)."""
    (xa, ya), (xb, yb) = points[0], points[-1]
    return math.log(yb / ya) / math.log(xb / xa) if ya > 0 and yb > 0 and xb != xa else float("nan")


def main(results, img):
    forks = fork_lines(os.path.join(results, "scale.log"))
    acls = acls_scores(os.path.join(results, "scale.json"))
    os.makedirs(img, exist_ok=True)
    sizes = sorted({r for side in forks.values() for r in side})

    def per_side(metric):
        return {side: {r: [float(f[metric]) for f in forks[side][r]] for r in forks[side]} for side, _, _ in SIDES}

    load = per_side("loadMillis")
    heap, rss = per_side("heapMiB"), per_side("rssGrowthMiB")
    # StandardAuthorizer keeps its ACLs on the heap; the agent keeps its snapshot in native memory (RSS) and,
    # once listed, the decoded view on the heap (softly).
    memory = {"standard": heap["standard"],
              "grantforge": {r: [a + b for a, b in zip(rss["grantforge"][r], heap["grantforge"][r])]
                             for r in rss["grantforge"]}}
    listed = per_side("listed")
    first_list = {side: {r: [v / 1000 for v in values] for r, values in by_size.items()}
                  for side, by_size in per_side("firstListMicros").items()}

    charts = [("Load (agent: read, verify, parse, index, ACL view; Standard: addAcl)", "ms", load,
               "scale-load.svg"),
              ("Memory kept (agent: RSS growth + heap; Standard: heap retained)", "MiB", memory, "scale-memory.svg"),
              ("acls(ANY) of a view listed before", "ms", acls, "scale-acls.svg"),
              ("First acls(ANY) of a new view (cold code; the agent decodes its view)", "ms", first_list,
               "scale-first-acls.svg")]
    for title, unit, data, file in charts:
        series = [(name, colour, [(r, *spread(v)) for r, v in data[side].items()]) for side, name, colour in SIDES
                  if side in data]
        line_chart(title, unit, series, os.path.join(img, file))

    print("| resources | Standard: entries | agent: rows listed | Standard: load | agent: load | "
          "Standard: heap retained | agent: RSS growth + heap | Standard: first acls(ANY) | "
          "agent: first acls(ANY) | Standard: acls(ANY) | agent: acls(ANY) | acls ratio (Standard / agent) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in sizes:
        def cell(data, side, digits=0):
            values = data.get(side, {}).get(r)
            if not values:
                return "–"
            m, low, high = spread(values)
            return f"{m:,.{digits}f} ({low:,.{digits}f}–{high:,.{digits}f})"
        ratio = "–"
        if r in acls.get("standard", {}) and r in acls.get("grantforge", {}):
            ratio = f"{statistics.median(acls['standard'][r]) / statistics.median(acls['grantforge'][r]):.2f}"
        print(f"| {r:,} | {int(listed['standard'][r][0]):,} | {int(listed['grantforge'][r][0]):,} | "
              f"{cell(load, 'standard')} ms | {cell(load, 'grantforge')} ms | {cell(memory, 'standard')} MiB | "
              f"{cell(memory, 'grantforge')} MiB | {cell(first_list, 'standard', 1)} ms | "
              f"{cell(first_list, 'grantforge', 1)} ms | {cell(acls, 'standard', 1)} ms | {cell(acls, 'grantforge', 1)} ms | "
              f"{ratio} |")
    print()
    print("Growth from the smallest to the largest size, as the exponent b of time or memory ~ resources^b "
          "(1 is linear):")
    print()
    print("| | Standard | agent |")
    print("|---|---:|---:|")
    for name, data in (("load", load), ("memory", memory), ("acls(ANY)", acls)):
        cells = []
        for side, _, _ in SIDES:
            pts = sorted((r, statistics.median(v)) for r, v in data.get(side, {}).items())
            cells.append(f"{growth(pts):.2f}" if len(pts) > 1 else "–")
        print(f"| {name} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
