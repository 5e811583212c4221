"""Draws viosim's reports: a Markdown page and SVG charts from viosim's JSON.

    report.py reproduce DATA.json OUTDIR   # `viosim reproduce --format json`
    report.py sweep DATA.json OUTDIR       # `viosim sweep --format json`
    report.py explain DATA.json OUTDIR     # `viosim explain --format json`

`viosim reproduce|sweep|explain --report DIR` run this
script (built into the binary) under a Python 3 with matplotlib and move
OUTDIR to DIR once it is complete. The output depends on the input only:
fixed font and sizes, fixed SVG ids, no dates or versions in the files.
Every bar, whisker and line carries an SVG id naming its cell, so a test
can count them.
"""

import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

PUBLISHED = "#a6a6a6"
CALIBRATION = "#2c6fbb"
PREDICTION = "#e8833a"
BAND = "#5b2a86"
BOUND = "#1b7837"  # the mechanism bound
OUTSIDE = "#c0262d"
SVG_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}

# Units by the metric name's suffix: (suffix, axis unit).
UNITS = [
    ("_per_s", "per s"),
    ("_us", "\u00b5s"),
    ("_pct", "%"),
    ("_gbps", "Gb/s"),
    ("_iops", "IOPS"),
]


def setup():
    plt.rcParams.update({
        "font.family": "DejaVu Sans",
        "font.size": 9,
        "axes.titlesize": 10,
        "axes.labelsize": 9,
        "legend.fontsize": 8.5,
        "xtick.labelsize": 8,
        "ytick.labelsize": 8,
        "svg.fonttype": "path",
        "svg.hashsalt": "viosim",
        "path.simplify": False,
        "axes.spines.top": False,
        "axes.spines.right": False,
    })


def metric_label(metric):
    """'lock_wait_mean_us' -> 'lock wait mean (µs)'; 'iops' -> 'IOPS'."""
    if metric == "iops":
        return "IOPS"
    for suffix, unit in UNITS:
        if metric.endswith(suffix):
            stem = metric[: -len(suffix)].replace("_", " ")
            return "%s (%s)" % (stem, unit) if unit != "IOPS" else "%s IOPS" % stem
    return metric.replace("_", " ")


def si(v, _pos=None):
    """Axis numbers: 2.5M, 150k, 0.35."""
    a = abs(v)
    if a >= 1e6:
        return ("%.1fM" % (v / 1e6)).replace(".0M", "M")
    if a >= 1e4:
        return "%dk" % round(v / 1e3)
    if a >= 1e3:
        return ("%.1fk" % (v / 1e3)).replace(".0k", "k")
    return "%g" % v


def num(v):
    """A figure for the Markdown tables."""
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1e4:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    return "%.4g" % v


def safe_id(*parts):
    return ".".join(re.sub(r"[^A-Za-z0-9_-]", "_", p) for p in parts)


def save(fig, path):
    fig.savefig(path, format="svg", metadata=SVG_METADATA)
    plt.close(fig)


# ---------------------------------------------------------------- reproduce


def panels_of(cells):
    """[(scenario, metric, [cell, ...])] in the order cells come."""
    order, groups = [], {}
    for c in cells:
        key = (c["scenario"], c["metric"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(c)
    return [(s, m, groups[(s, m)]) for s, m in order]


def top_of(c):
    tops = [c["published"], c["modeled"]]
    if c.get("ci95") is not None:
        tops.append(c["modeled"] + c["ci95"])
    band = c.get("band")
    if isinstance(band, dict) and band.get("p95") is not None:
        tops.append(band["p95"])
    return max(t for t in tops if t is not None)


def draw_panel(ax, scenario, metric, cells, title):
    w = 0.38
    for i, c in enumerate(cells):
        cid = (c["scenario"], c["variant"], c["metric"])
        pub = ax.bar(i - w / 2, c["published"], w, color=PUBLISHED, linewidth=0)
        pub.patches[0].set_gid(safe_id("published", *cid))
        prediction = c["role"] == "prediction"
        gap = bool(c.get("known_gap"))
        mod = ax.bar(i + w / 2, c["modeled"], w,
                     color=PREDICTION if prediction else CALIBRATION,
                     hatch="////" if gap else None,
                     edgecolor=OUTSIDE if not c["within"] else "white",
                     linewidth=1.2 if not c["within"] else 0)
        mod.patches[0].set_gid(safe_id("modeled", *cid))
        if c.get("ci95") is not None:
            eb = ax.errorbar(i + w * 0.35, c["modeled"], yerr=c["ci95"], fmt="none",
                             ecolor="black", elinewidth=0.9, capsize=2.2, capthick=0.9)
            eb.lines[2][0].set_gid(safe_id("ci95", *cid))
        bound = c.get("bound")
        if isinstance(bound, dict):
            # The mechanism's reach: the partner's published value moved by
            # the most its lock, made ideal, gives.
            reach = c["published"] - bound["published_difference"] + bound["bound"]
            ln = ax.plot([i - w, i + w], [reach, reach], color=BOUND, linewidth=1.4,
                         linestyle="--" if not bound["beyond"] else "-")
            ln[0].set_gid(safe_id("bound", *cid))
            if bound["beyond"] and not c["within"]:
                ax.annotate("beyond bound", (i, reach), textcoords="offset points", xytext=(0, 3),
                            ha="center", fontsize=6, color=BOUND)
        band = c.get("band")
        if isinstance(band, dict) and band.get("p5") is not None and band.get("p95") is not None:
            mid = band.get("p50", c["modeled"])
            eb = ax.errorbar(i + w * 0.8, mid, yerr=[[mid - band["p5"]], [band["p95"] - mid]],
                             fmt="D", markersize=3, color=BAND, ecolor=BAND,
                             elinewidth=1.1, capsize=2.2, capthick=1.1)
            eb.lines[2][0].set_gid(safe_id("band", *cid))
    ax.set_xticks(range(len(cells)))
    many = len(cells) > 4 or max(len(c["variant"]) for c in cells) > 8
    ax.set_xticklabels([c["variant"] for c in cells], rotation=45 if many else 0,
                       ha="right" if many else "center", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(cells) - 0.4)
    ax.set_ylim(0, max(top_of(c) for c in cells) * 1.08)
    ax.set_ylabel(metric_label(metric))
    ax.yaxis.set_major_formatter(FuncFormatter(si))
    ax.set_title(title, loc="left")
    ax.grid(axis="y", linewidth=0.4, color="#dddddd")
    ax.set_axisbelow(True)


def legend_handles(cells):
    h = [Patch(color=PUBLISHED, label="published"),
         Patch(color=CALIBRATION, label="modeled: calibration cell"),
         Patch(color=PREDICTION, label="modeled: prediction cell"),
         Line2D([], [], color="black", linewidth=0.9, marker="_", markersize=6,
                label="95% CI")]
    if any(isinstance(c.get("band"), dict) for c in cells):
        h.append(Line2D([], [], color=BAND, marker="D", markersize=3, linewidth=1.1,
                        label="prediction band p5, p50, p95"))
    if any(isinstance(c.get("bound"), dict) for c in cells):
        h.append(Line2D([], [], color=BOUND, linewidth=1.4,
                        label="lock made ideal: reach"))
    h.append(Patch(facecolor="white", edgecolor=OUTSIDE, linewidth=1.2,
                   label="outside tolerance"))
    h.append(Patch(facecolor="white", edgecolor="#555555", hatch="////",
                   label="known gap"))
    return h


def weight(cells):
    return len(cells) + 2.5


def partition(weights, rows):
    """Splits weights, in order, into `rows` runs with the smallest largest sum."""
    n = len(weights)
    best = {}

    def solve(start, k):
        if (start, k) in best:
            return best[(start, k)]
        if k == 1:
            r = (sum(weights[start:]), [n])
        else:
            r = None
            for end in range(start + 1, n - k + 2):
                head = sum(weights[start:end])
                tail, cuts = solve(end, k - 1)
                cand = (max(head, tail), [end] + cuts)
                if r is None or cand[0] < r[0]:
                    r = cand
        best[(start, k)] = r
        return r

    _, cuts = solve(0, min(rows, n))
    out, start = [], 0
    for end in cuts:
        out.append(list(range(start, end)))
        start = end
    return out


def grid_figure(panels, title_of, heading):
    """Panels in rows, each as wide as its cells; rows balanced."""
    weights = [weight(p[2]) for p in panels]
    cap = max(max(weights), 36)
    rows = partition(weights, math.ceil(sum(weights) / cap))
    inch = 0.36
    cap = max(sum(weights[i] for i in r) for r in rows)
    if len(rows) == 1:
        cap = max(cap, 7.0 / inch)  # room for the legend; one row fills the width
    fig = plt.figure(figsize=(cap * inch + 0.4, 3.1 * len(rows) + 1.0), layout="constrained")
    # The last row holds the legend, so nothing overlaps it.
    subs = fig.subfigures(len(rows) + 1, 1, height_ratios=[3.1] * len(rows) + [0.55])
    for sub, row in zip(subs, rows):
        ratios = [weights[i] for i in row]
        spare = cap - sum(ratios) if len(rows) > 1 else 0
        axes = sub.subplots(1, len(row) + (1 if spare > 0.5 else 0),
                            gridspec_kw={"width_ratios": ratios + ([spare] if spare > 0.5 else [])},
                            squeeze=False)[0]
        for ax, i in zip(axes, row):
            draw_panel(ax, *panels[i], title_of(panels[i]))
        if spare > 0.5:
            axes[-1].axis("off")
    all_cells = [c for p in panels for c in p[2]]
    fig.suptitle(heading, x=0.01, ha="left", fontsize=11)
    handles = legend_handles(all_cells)
    wide = fig.get_figwidth() >= 10
    subs[-1].legend(handles=handles, loc="center", frameon=False,
                    ncol=len(handles) if wide else math.ceil(len(handles) / 2))
    return fig


def reproduce(data, out):
    cells = data["cells"]
    panels = panels_of(cells)
    scenarios = []
    for c in cells:
        if c["scenario"] not in scenarios:
            scenarios.append(c["scenario"])
    within = sum(1 for c in cells if c["within"])
    fig = grid_figure(panels, lambda p: "%s" % p[0],
                      "viosim: every published cell, published beside modeled")
    save(fig, os.path.join(out, "reproduction.svg"))
    for s in scenarios:
        mine = [p for p in panels if p[0] == s]
        fig = grid_figure(mine, lambda p: metric_label(p[1]),
                          "%s: published beside modeled" % s)
        save(fig, os.path.join(out, "%s.svg" % safe_id(s)))

    # The effects panel: each prediction's change over its calibration
    # partner, published beside modeled (what a what-if reads).
    eff = [c for c in cells if isinstance(c.get("effect"), dict)]
    if eff:
        fig, ax = plt.subplots(figsize=(11, 0.26 * len(eff) + 1.4))
        ys = list(range(len(eff)))[::-1]
        h = 0.38
        for y, c in zip(ys, eff):
            e = c["effect"]
            b1 = ax.barh(y + h / 2, e["published"] - 1, h, left=1, color=PUBLISHED, linewidth=0)
            b1.patches[0].set_gid(safe_id("effect-published", c["scenario"], c["variant"], c["metric"]))
            b2 = ax.barh(y - h / 2, e["modeled"] - 1, h, left=1, color=PREDICTION, linewidth=0)
            b2.patches[0].set_gid(safe_id("effect-modeled", c["scenario"], c["variant"], c["metric"]))
            if e.get("ci95") is not None:
                ax.errorbar(e["modeled"], y - h / 2, xerr=e["ci95"], fmt="none", ecolor="black",
                            elinewidth=0.8, capsize=1.8)
            ax.annotate("%+.1f%%" % e["error_pct"], (max(e["published"], e["modeled"]), y),
                        textcoords="offset points", xytext=(4, -3), fontsize=6.5)
        ax.axvline(1, color="black", linewidth=0.8)
        ax.set_yticks(ys)
        ax.set_yticklabels(["%s  %s / %s  %s" % (c["scenario"], c["variant"], c["effect"]["partner"], c["metric"])
                            for c in eff], fontsize=6.5)
        ax.set_xlabel("effect: the prediction's value over its calibration partner's (1 = no change)")
        ax.set_title("viosim: effects, published beside modeled (the label: the effect's error)", loc="left")
        ax.legend(handles=[Patch(color=PUBLISHED, label="published effect"),
                           Patch(color=PREDICTION, label="modeled effect")], loc="lower right")
        ax.grid(axis="x", linewidth=0.4, color="#dddddd")
        ax.set_axisbelow(True)
        fig.subplots_adjust(left=0.44, right=0.97)
        save(fig, os.path.join(out, "effects.svg"))

    preds = {p["scenario"]: p for p in data.get("predictions", [])}
    lines = ["# viosim reproduction report", "",
             "%d cells: %d within tolerance, %d outside." % (len(cells), within, len(cells) - within),
             "",
             "Grey bars are the published values; blue modeled calibration cells (the column the "
             "fitted costs are chosen from), orange modeled prediction cells. Whiskers are 95% confidence intervals "
             "(none where none was computed, or where the next seed gives the same value); a red "
             "outline marks a cell outside its tolerance, hatching a known gap the scenario "
             "documents. A green line over a patch's cell is the mechanism's reach: the value before the "
             "patch plus the most the lock the patch moves the call out of could give, made ideal "
             "(`viosim explain --ideal`); solid where the published difference lies beyond it. `data.json` holds the figures as `viosim reproduce --format json` "
             "prints them.", "",
             "![every published cell](reproduction.svg)", ""]
    if eff:
        lines += ["## Effects", "",
                  "What a what-if reads is the change, not the level: each prediction over the calibration cell "
                  "of its metric whose variant differs from it least, published (grey) beside modeled (orange), "
                  "with the modeled effect's 95% interval from the two runs' batches paired and the effect's error.",
                  "", "![effects](effects.svg)", ""]
    for s in scenarios:
        lines += ["## %s" % s, "", "![%s](%s.svg)" % (s, safe_id(s)), ""]
        mine = [c for c in cells if c["scenario"] == s]
        has_band = any(isinstance(c.get("band"), dict) for c in mine)
        head = ["variant", "metric", "published", "modeled", "95% CI +/-"]
        if has_band:
            head.append("band p5..p95")
        head += ["error", "tolerance", "role", "status"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join("---" for _ in head) + "|")
        for c in mine:
            ci = num(c["ci95"]) if c.get("ci95_informative", True) else "n/i"
            row = [c["variant"], c["metric"], num(c["published"]), num(c["modeled"]), ci]
            if has_band:
                b = c.get("band")
                row.append("%s..%s" % (num(b.get("p5")), num(b.get("p95")))
                           if isinstance(b, dict) else "")
            status = "ok" if c["within"] else (
                "outside (known gap)" if c.get("known_gap") else "OUTSIDE")
            row += ["%+.2f%%" % c["error_pct"], "%g%%" % c["tolerance_pct"], c["role"], status]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
        p = preds.get(s)
        if p is not None and p.get("mae_pct") is not None:
            lines += ["%d prediction cells, %d independent predictions; mean |error| %.2f%% "
                      "over their %d cells." % (p["prediction_cells"], len(p["independent"]),
                                                p["mae_pct"], p["cells"]), ""]
        gaps = [c for c in mine if c.get("known_gap") or
                (isinstance(c.get("bound"), dict) and c["bound"]["beyond"] and not c["within"])]
        for c in gaps:
            b = c.get("bound")
            if isinstance(b, dict) and b["beyond"] and not c["within"]:
                lines.append("- beyond the mechanism's bound, %s / %s: %s could account for at most %s "
                             "(published difference %s)" % (c["variant"], c["metric"], " + ".join(b["resources"]),
                                                            num(abs(b["bound"])), num(b["published_difference"])))
            else:
                lines.append("- known gap, %s / %s: %s" % (c["variant"], c["metric"], c["known_gap"]))
        if gaps:
            lines.append("")
    return lines


# ---------------------------------------------------------------- sweep

DURATION = {"ps": 1e-6, "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def numeric_axis(values):
    """(numbers, unit) when every value is a number, or a duration; else None."""
    parsed = []
    for v in values:
        m = re.fullmatch(r"\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-z]*)\s*", v)
        if not m or (m.group(2) and m.group(2) not in DURATION):
            return None
        parsed.append((float(m.group(1)), m.group(2)))
    units = {u for _, u in parsed}
    if units == {""}:
        return [x for x, _ in parsed], ""
    if "" in units:
        return None
    if len(units) == 1:
        return [x for x, _ in parsed], units.pop()
    return [x * DURATION[u] for x, u in parsed], "us"


def heat_panel(ax, fig, rows, cols, grid, fmt, cmap, norm, gid):
    """One heat map: grid[r][c] (None: not measured) over rows x cols, each
    square labelled with its value."""
    import numpy as np
    z = np.array([[np.nan if v is None else v for v in row] for row in grid], dtype=float)
    im = ax.imshow(z, cmap=cmap, norm=norm, aspect="auto", origin="lower")
    im.set_gid(gid)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows)
    for r in range(len(rows)):
        for c in range(len(cols)):
            v = grid[r][c]
            if v is None:
                ax.text(c, r, "-", ha="center", va="center", fontsize=8)
                continue
            rgba = im.cmap(im.norm(v))
            dark = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] < 0.5
            ax.text(c, r, fmt(v), ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")
    ax.spines["top"].set_visible(True)
    ax.spines["right"].set_visible(True)
    return im


def sweep_grid(data, out):
    """A grid sweep (--over two or three times): per variant and metric a heat
    map over the first two fields (one panel per value of a third), and with
    two variants the gain's heat map."""
    from matplotlib.colors import TwoSlopeNorm, Normalize
    fields = [data["field"]] + [a["field"] for a in data["more"]]
    points = data["points"]
    ys = []  # the first field's values: the map's rows
    for p in points:
        if p["value"] not in ys:
            ys.append(p["value"])
    xs = data["more"][0]["values"]
    zs = data["more"][1]["values"] if len(data["more"]) > 1 else [None]
    variants, metrics = [], []
    for p in points:
        if p["variant"] not in variants:
            variants.append(p["variant"])
        for m in p["metrics"]:
            if m not in metrics:
                metrics.append(m)

    def at(p, y, x, z):
        return p["value"] == y and p["at"][0] == x and (z is None or p["at"][1] == z)

    def short(f):
        parts = f.split(".")
        return ".".join(parts[-2:]) if parts[-1] in ("value", "option") or len(parts) > 3 else f

    charts = []

    def figure(title, name, cell_of, fmt, cmap, norm_of, bar_label):
        n = len(zs)
        fig, axes = plt.subplots(1, n, figsize=(1.2 + 3.0 * n + 0.9 * max(0, 3 - n), 3.6),
                                 layout="constrained", squeeze=False)
        grids = [[[cell_of(y, x, z) for x in xs] for y in ys] for z in zs]
        flat = [v for g in grids for row in g for v in row if v is not None]
        if not flat:
            plt.close(fig)
            return
        norm = norm_of(min(flat), max(flat))
        im = None
        for k, z in enumerate(zs):
            ax = axes[0][k]
            im = heat_panel(ax, fig, ys, xs, grids[k], fmt, cmap, norm, safe_id("heat", name, str(z)))
            ax.set_xlabel(short(fields[1]))
            if k == 0:
                ax.set_ylabel(short(fields[0]))
            if z is not None:
                ax.set_title("%s = %s" % (short(fields[2]), z), loc="left", fontsize=9)
        fig.colorbar(im, ax=axes[0].tolist(), label=bar_label, shrink=0.9)
        fig.suptitle(title, x=0.01, ha="left", fontsize=10)
        save(fig, os.path.join(out, name))
        charts.append((title, name))

    def level_norm(lo, hi):
        return Normalize(vmin=lo, vmax=hi if hi > lo else lo + 1)

    for v in variants:
        for m in metrics:
            def cell(y, x, z, v=v, m=m):
                for p in points:
                    if p["variant"] == v and at(p, y, x, z):
                        return p["metrics"].get(m)
                return None
            figure("%s, %s: %s" % (data["scenario"], v, metric_label(m)),
                   "grid_%s.svg" % safe_id(v, m), cell,
                   lambda x: "%.0f" % x if abs(x) >= 100 else "%.3g" % x, "viridis", level_norm,
                   metric_label(m))
    gains = data.get("gains", [])
    if gains:
        a, b = gains[0]["a"], gains[0]["b"]
        for m in metrics:
            def gain(y, x, z, m=m):
                for g in gains:
                    if g["metric"] == m and g["value"] == y and g["at"][0] == x and \
                            (z is None or g["at"][1] == z):
                        return g["ratio"]
                return None

            def gain_norm(lo, hi):
                # Centred on no change: blue above 1, red below.
                span = max(abs(hi - 1), abs(1 - lo), 1e-9)
                return TwoSlopeNorm(vcenter=1.0, vmin=1 - span, vmax=1 + span)
            figure("%s: %s/%s, %s" % (data["scenario"], b, a, metric_label(m)),
                   "grid_gain_%s.svg" % safe_id(m), gain, lambda v: "%.3gx" % v, "RdBu", gain_norm,
                   "%s / %s" % (b, a))

    lines = ["# viosim sweep: %s over %s" % (data["scenario"], " x ".join(fields)), "",
             "A grid: every combination was run. Each square is one run's value (the gain maps: "
             "the second variant over the first). `data.json` holds the figures, with their 95% "
             "intervals, as `viosim sweep --format json` prints them.", ""]
    for title, name in charts:
        lines += ["![%s](%s)" % (title, name), ""]
    return lines


def sweep(data, out):
    if data.get("more"):
        return sweep_grid(data, out)
    field = data["field"]
    points = data["points"]
    values, variants, metrics = [], [], []
    for p in points:
        if p["value"] not in values:
            values.append(p["value"])
        if p["variant"] not in variants:
            variants.append(p["variant"])
        for m in p["metrics"]:
            if m not in metrics:
                metrics.append(m)
    axis = numeric_axis(values)
    xs = axis[0] if axis else list(range(len(values)))
    unit = axis[1] if axis else None
    short = field.split(".")[-1] if field.split(".")[-1] != "value" else ".".join(field.split(".")[-2:])
    xlabel = "%s (%s)" % (field, "\u00b5s" if unit == "us" else unit) if unit else field
    logx = axis is not None and min(xs) > 0 and max(xs) / min(xs) >= 50
    colors = ["#2c6fbb", "#e8833a", "#3a9a4a", "#c0262d", "#5b2a86", "#8c564b", "#d45fb0", "#6b6b6b"]
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    charts = []
    for m in metrics:
        fig, ax = plt.subplots(figsize=(7.4, 3.8), layout="constrained")
        for k, v in enumerate(variants):
            px, py, pe = [], [], []
            for i, val in enumerate(values):
                for p in points:
                    if p["value"] == val and p["variant"] == v and m in p["metrics"] \
                            and p["metrics"][m] is not None:
                        px.append(xs[i])
                        py.append(p["metrics"][m])
                        pe.append(p["ci95"].get(m) or 0.0)
            if not px:
                continue
            eb = ax.errorbar(px, py, yerr=pe, color=colors[k % len(colors)],
                             marker=markers[k % len(markers)], markersize=4, linewidth=1.3,
                             capsize=2.5, elinewidth=0.9, label=v)
            eb.lines[0].set_gid(safe_id("line", v, m))
        if logx:
            ax.set_xscale("log")
            ax.set_xticks(xs)
            ax.set_xticklabels(values)
            ax.minorticks_off()
        elif axis is None:
            ax.set_xticks(xs)
            ax.set_xticklabels(values, rotation=30 if max(len(v) for v in values) > 6 else 0,
                               ha="right" if max(len(v) for v in values) > 6 else "center",
                               rotation_mode="anchor")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(metric_label(m))
        ax.yaxis.set_major_formatter(FuncFormatter(si))
        ax.set_ylim(bottom=0)
        ax.grid(linewidth=0.4, color="#dddddd")
        ax.set_axisbelow(True)
        ax.set_title("%s: %s against %s" % (data["scenario"], metric_label(m), short), loc="left")
        # Beside the plot, never over a line.
        ax.legend(title="variant\n(whiskers: 95% CI)", frameon=False, loc="upper left",
                  bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        name = "sweep_%s.svg" % safe_id(m)
        save(fig, os.path.join(out, name))
        charts.append((m, name))

    lines = ["# viosim sweep: %s over %s" % (data["scenario"], field), "",
             "Each point is one run; whiskers are 95% confidence intervals (none where none was "
             "computed). `data.json` holds the figures as `viosim sweep --format json` prints them.", ""]
    for m, name in charts:
        lines += ["![%s](%s)" % (m, name), ""]
    cal = data.get("calibration")
    head = [field]
    if cal:
        head += ["refit %s" % cal["field"], "refit outcome"]
    head += ["%s %s" % (v, m) for v in variants for m in metrics]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---" for _ in head) + "|")
    for val in values:
        row = [val]
        mine = [p for p in points if p["value"] == val]
        if cal:
            r = mine[0].get("refit", {}) if mine else {}
            row += [str(r.get("value")) if r.get("value") is not None else "-",
                    r.get("outcome", "-")]
        for v in variants:
            for m in metrics:
                cell = "-"
                for p in mine:
                    if p["variant"] == v and p["metrics"].get(m) is not None:
                        ci = p["ci95"].get(m)
                        cell = num(p["metrics"][m]) + ("" if ci is None else " +/- " + num(ci))
                row.append(cell)
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    return lines


# Bar colours of `explain`'s tornado chart by the cost's source kind.
SOURCE_COLORS = {
    "measured": "#3a9a4a",
    "derived": "#2c6fbb",
    "estimated": "#e8833a",
    "fitted": "#c0262d",
    "defined": "#6b6b6b",
}


def short_field(field):
    """'stack.virtio_blk.qemu_pop_submit.value' -> 'stack.virtio_blk.qemu_pop_submit'."""
    return field[: -len(".value")] if field.endswith(".value") else field


def explain(data, out):
    costs = data["costs"]
    metric = data["metric"]
    step = data["step"]
    title = "%s / %s: elasticity of %s to each cost\n(each cost run at \u00b1%g%% with the same seed)" % (
        data["scenario"], data["variant"], metric_label(metric), step * 100)
    chart = None
    if costs:
        n = len(costs)
        fig, ax = plt.subplots(figsize=(8.6, 1.2 + 0.27 * n), layout="constrained")
        ys = list(range(n))[::-1]
        for y, c in zip(ys, costs):
            color = SOURCE_COLORS.get(c["source"], "#6b6b6b")
            bar = ax.barh(y, c["elasticity"], 0.62, color=color)
            bar.patches[0].set_gid(safe_id("elasticity", c["field"]))
            if c.get("ci95") is not None:
                eb = ax.errorbar(c["elasticity"], y, xerr=c["ci95"], fmt="none", ecolor="#222222",
                                 elinewidth=0.9, capsize=2.5)
                eb.lines[2][0].set_gid(safe_id("ci95", c["field"]))
        ax.set_yticks(ys)
        ax.set_yticklabels([short_field(c["field"]) for c in costs])
        ax.axvline(0, color="#444444", linewidth=0.8)
        # Zero and every whisker in view; the side no bar reaches kept narrow.
        lo = min([0.0] + [c["elasticity"] - (c.get("ci95") or 0.0) for c in costs])
        hi = max([0.0] + [c["elasticity"] + (c.get("ci95") or 0.0) for c in costs])
        pad = max(hi - lo, 0.05) * 0.08
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_xlabel("elasticity: d ln %s / d ln cost (whiskers: 95%% CI)" % metric)
        ax.grid(axis="x", linewidth=0.4, color="#dddddd")
        ax.set_axisbelow(True)
        ax.set_title(title, loc="left")
        kinds = [k for k in SOURCE_COLORS if any(c["source"] == k for c in costs)]
        handles = [Patch(color=SOURCE_COLORS[k], label=k) for k in kinds]
        # In the empty corner the small bars leave (they sit at zero), else beside the plot.
        span = hi - lo
        if max(c["elasticity"] for c in costs) <= 0.05 * span:
            ax.legend(handles=handles, title="source", frameon=False, loc="lower left")
        elif min(c["elasticity"] for c in costs) >= -0.05 * span:
            ax.legend(handles=handles, title="source", frameon=False, loc="lower right")
        else:
            ax.legend(handles=handles, title="source", frameon=False, loc="upper left",
                      bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        chart = "explain_%s.svg" % safe_id(data["variant"], metric)
        save(fig, os.path.join(out, chart))

    value = num(data["value"])
    if data.get("value_ci95") is not None:
        value += " +/- " + num(data["value_ci95"])
    lines = ["# viosim explain: %s / %s, %s" % (data["scenario"], data["variant"], metric), "",
             "%s = %s. Every costed field was run %g%% above and below its value with the same seed; "
             "the elasticity is the relative change of the metric per relative change of the cost "
             "(negative: a dearer cost lowers the metric). `data.json` holds the figures as "
             "`viosim explain --format json` prints them." % (metric, value, step * 100), ""]
    lines += ["## Reading", ""] + ["- " + r for r in data.get("reading", [])] + [""]
    if chart:
        lines += ["![elasticities](%s)" % chart, ""]
    details = {d["field"]: d for d in data.get("cost_details", [])}
    lines += ["| rank | field | source | value | elasticity | 95% CI +/- |", "|---|---|---|---|---|---|"]
    for i, c in enumerate(costs, 1):
        d = details.get(c["field"], {})
        ci = "-" if c.get("ci95") is None else "%.4f" % c["ci95"]
        lines.append("| %d | `%s` | %s | %s | %+.4f | %s |" % (
            i, c["field"], c["source"], d.get("value", "-"), c["elasticity"], ci))
    lines.append("")
    if data.get("not_varied"):
        lines += ["Not varied:", ""]
        for nv in data["not_varied"]:
            lines.append("- `%s` (%s, %s): %s" % (nv["field"], nv["source"], nv["value"], nv["reason"]))
        lines.append("")
    return lines


def main(argv):
    kinds = {"reproduce": reproduce, "sweep": sweep, "explain": explain}
    if len(argv) != 4 or argv[1] not in kinds:
        sys.stderr.write("usage: report.py reproduce|sweep|explain DATA.json OUTDIR\n")
        return 2
    with open(argv[2], encoding="utf-8") as f:
        data = json.load(f)
    setup()
    lines = kinds[argv[1]](data, argv[3])
    with open(os.path.join(argv[3], "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
