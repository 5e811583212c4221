# viosim teach: one self-contained HTML page that sets two variants of a
# scenario side by side for a class. Built into the viosim binary (like
# report.py) and run as
#
#   python3 -I -B -c <this script> DATA.json OUT.html
#
# DATA.json is written by cli/teach.cc: the `viosim run --format json`
# document of the variants, each variant's Chrome trace of the start of its
# measured window, and the page's settings (window, CPUs shown). Only the
# standard library is used; the page holds inline CSS and SVG and loads
# nothing. Every figure on it is read from DATA.json; the sentences are
# written from those figures. The same DATA.json gives the same bytes.
import html
import json
import math
import sys

# CPU states as the trace names them, in drawing and legend order, with
# colours a class can tell apart (Tableau 10, colour-blind safe order).
STATE_COLOURS = [
    ("user", "#4e79a7", "user"),
    ("system", "#76b7b2", "system (kernel)"),
    ("irq", "#e15759", "interrupt"),
    ("softirq", "#ff9da7", "softirq"),
    ("spin", "#f28e2b", "spinning on a lock"),
    ("poll", "#edc948", "polling"),
    ("exit", "#59a14f", "VM exit (host handles it)"),
    ("steal", "#9c755f", "stolen (its host thread off the CPU)"),
]
EXTRA_STATE_COLOURS = ["#bab0ac", "#d4a6c8", "#86bcb6", "#fabfd2"]
LOCK_COLOURS = ["#6a3d9a", "#8c564b", "#1f77b4", "#b8860b", "#17becf", "#7f7f7f"]

# Page geometry, in CSS pixels: the page is laid out for 1280 px.
LABEL_W = 96  # CPU names, and the thread pinned there
PLOT_W = 600  # the time axis
SHARE_W = 74  # the whole-window share bar beside each lane
SVG_W = LABEL_W + PLOT_W + 14 + SHARE_W + 8
MARK_H = 7  # wake-up marks
STATE_H = 13
LOCK_H = 9
LANE_GAP = 5
LANE_H = MARK_H + STATE_H + LOCK_H + LANE_GAP
QUEUE_H = 46
AXIS_H = 34


def esc(s):
    return html.escape(str(s), quote=True)


def fmt_num(v, digits=4):
    """A number as a reader wants it: thousands separated, about `digits`
    significant digits, no exponent."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, int) or (abs(v) >= 1 and float(v).is_integer()):
        return f"{int(v):,}"
    a = abs(v)
    if a >= 10 ** digits:
        return f"{v:,.0f}"
    if a == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(a))))
    decimals = min(decimals, 6)
    return f"{v:,.{decimals}f}"


def fmt_us(us):
    if us >= 1000:
        return f"{us / 1000:g} ms"
    return f"{us:g} us"


def pct_change(a, b):
    if a == 0:
        return None
    return (b - a) / a * 100.0


def change_words(a, b, unit=""):
    """'from A to B (+x%)' in words."""
    p = pct_change(a, b)
    tail = "" if p is None else f" ({'+' if p >= 0 else '-'}{fmt_num(abs(p), 3)}%)"
    return f"from {fmt_num(a)}{unit} to {fmt_num(b)}{unit}{tail}"


class Trace:
    """One variant's trace, cut to [0, window) us from its first instant."""

    def __init__(self, doc, window_us):
        events = doc["traceEvents"]
        self.names = {}  # tid -> CPU name
        self.order = {}
        starts = [float(e["ts"]) for e in events if e.get("ph") in ("X", "C", "i")]
        self.t0 = min(starts) if starts else 0.0
        self.window = window_us
        self.states = {}  # tid -> [(start, end, name)]
        self.holds = {}  # tid -> [(start, end, lock)]
        self.handoffs = {}  # tid -> [(start, end, lock)]: the lock on its way to this CPU
        self.marks = {}  # tid -> [(t, name)]
        self.queues = {}  # lock -> [(t, waiters on every lock of that name)]
        samples = []
        for e in events:
            ph = e.get("ph")
            if ph == "M":
                if e["name"] == "thread_name":
                    self.names[e["tid"]] = e["args"]["name"]
                elif e["name"] == "thread_sort_index":
                    self.order[e["tid"]] = e["args"]["sort_index"]
                continue
            t = float(e["ts"]) - self.t0
            if ph == "X":
                end = min(t + float(e.get("dur", 0)), window_us)
                t = max(t, 0.0)
                if t >= window_us or end <= t:
                    continue
                cat = e.get("cat", "")
                tid = e["tid"]
                if cat == "cpu":
                    self.states.setdefault(tid, []).append((t, end, e["name"]))
                elif cat == "lock":
                    self.holds.setdefault(tid, []).append((t, end, e["name"]))
                elif cat == "handoff":
                    self.handoffs.setdefault(tid, []).append((t, end, e["name"]))
                else:  # a wake-up and the like: a mark where it starts
                    self.marks.setdefault(tid, []).append((t, e["name"]))
            elif ph == "i":
                if t < window_us:
                    self.marks.setdefault(e["tid"], []).append((t, e["name"]))
            elif ph == "C":
                # "<lock> waiters #<n>": one lock's waiters; the strip shows
                # the sum over the locks of one name.
                name, _, _ = e["name"].partition(" waiters #")
                if name != e["name"] and t < window_us:
                    samples.append((t, name, e["name"], e["args"]["value"]))
        now = {}
        for t, name, track, value in samples:
            now[track] = value
            total = sum(v for k, v in now.items() if k.partition(" waiters #")[0] == name)
            self.queues.setdefault(name, []).append((max(t, 0.0), total))
        self.tids = sorted(self.names, key=lambda tid: (self.order.get(tid, tid), tid))

    def time_in(self, tid, state):
        return sum(b - a for a, b, n in self.states.get(tid, []) if n == state)

    def hold_time(self, tid, lock):
        return sum(b - a for a, b, n in self.holds.get(tid, []) if n == lock)

    def states_during(self, lock):
        """Time the holders of `lock` spent in each CPU state while holding it."""
        out = {}
        for tid, holds in self.holds.items():
            states = self.states.get(tid, [])
            for a, b, n in holds:
                if n != lock:
                    continue
                covered = 0.0
                for sa, sb, sn in states:
                    o = min(b, sb) - max(a, sa)
                    if o > 0:
                        out[sn] = out.get(sn, 0.0) + o
                        covered += o
        return out


def nice_up(x):
    """The smallest of 1, 2, 5 x 10^k that is >= x."""
    if x <= 0:
        return 1.0
    k = math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        v = m * 10 ** k
        if v >= x * (1 - 1e-9):
            return float(v)
    return float(10 ** (k + 1))


def tick_step(span):
    return nice_up(span / 8.0)


def lock_rows(v):
    return [r for r in v.get("lock_stat", []) if r.get("acquisitions", 0) > 0]


def lock_util(row, v):
    """Share of the measured window the lock was held, percent."""
    dur_us = v["duration_s"] * 1e6
    return row["holdtime_total_us"] / dur_us * 100.0 if dur_us > 0 else 0.0


def instances(v, lock):
    """The lock_stat rows of the locks the trace names `lock`: the row of that
    name, else the numbered rows of one lock per queue (vq_lock0, vq_lock1..)."""
    rows = v.get("lock_stat", [])
    same = [r for r in rows if r["class_name"] == lock]
    if same:
        return same
    return [r for r in rows if r["class_name"].startswith(lock) and r["class_name"][len(lock):].isdigit()]


def row_of(v, lock):
    """One row for `lock` (summed over its instances); `util` is the busiest
    instance's share of the window held."""
    rows = instances(v, lock)
    if not rows:
        return None
    acq = sum(r["acquisitions"] for r in rows)
    con = sum(r["contentions"] for r in rows)
    hold = sum(r["holdtime_total_us"] for r in rows)
    wait = sum(r["waittime_total_us"] for r in rows)
    return {
        "class_name": lock, "instances": len(rows), "acquisitions": acq, "contentions": con,
        "holdtime_total_us": hold, "holdtime_avg_us": hold / acq if acq else 0.0,
        "holdtime_max_us": max(r["holdtime_max_us"] for r in rows),
        "waittime_avg_us": wait / con if con else 0.0, "waittime_total_us": wait,
        "util": max(lock_util(r, v) for r in rows),
    }


def focus_lock(variants, traced):
    """The lock the page is about: of the locks the traces draw, the one held
    the largest share of the measured window in any variant."""
    best = None
    for v in variants:
        for name in sorted(traced):
            r = row_of(v, name)
            if r is None or r["acquisitions"] == 0:
                continue
            key = (r["util"], name)
            if best is None or key > best[0]:
                best = (key, name)
    return best[1] if best else None


def choose_cpus(tr, lock, limit):
    """Every CPU when they fit; else the `limit` that held or spun on the
    focus lock longest in the window (then the busiest), in CPU order."""
    if len(tr.tids) <= limit:
        return tr.tids, None

    def score(tid):
        holds = sum(1 for _, _, n in tr.holds.get(tid, []) if n == lock) if lock else 0
        held = tr.hold_time(tid, lock) if lock else 0.0
        spun = tr.time_in(tid, "spin")
        busy = sum(b - a for a, b, _ in tr.states.get(tid, []))
        return (holds, held + spun, busy)

    if lock and not any(n == lock for hs in tr.holds.values() for _, _, n in hs):
        lock = None  # nobody took it in this window: rank by spinning, then by busy time
    ranked = sorted(tr.tids, key=lambda tid: (tuple(-x for x in score(tid)), tr.order.get(tid, tid)))
    chosen = set(ranked[:limit])
    return [t for t in tr.tids if t in chosen], (
        f"took {lock} most often in this window, then spun on locks longest" if lock
        else "spun on locks longest in this window, then were busiest")


class Page:
    def __init__(self, data):
        self.data = data
        self.run = data["run"]
        self.variants = self.run["variants"]
        self.cpu_limit = int(data["cpus"])
        self.descriptions = data.get("variant_descriptions", [])
        trace_us = float(data["trace_us"])
        traced = set()
        for t in data["traces"]:
            tr = Trace(t, trace_us)
            for holds in tr.holds.values():
                traced.update(n for _, _, n in holds)
            traced.update(tr.queues)
        self.lock = focus_lock(self.variants, traced)
        self.window_chosen = data.get("window_us") is None
        if self.window_chosen:
            # Six mean holds of the lock the page is about, in whichever
            # variant holds it longer, as a 1-2-5 step within 50 us..1 ms.
            hold = max([row_of(v, self.lock)["holdtime_avg_us"] for v in self.variants
                        if self.lock and row_of(v, self.lock)] + [0.0])
            self.window = min(max(nice_up(6 * hold), 50.0), 1000.0, trace_us)
            # Then long enough that every variant shows the focus lock taken
            # a few times: widened step by step within the trace.
            traces_full = [Trace(t, trace_us) for t in data["traces"]]

            def holds_within(tr, w):
                return sum(1 for hs in tr.holds.values() for a, _, n in hs if n == self.lock and a < w)
            while self.lock and self.window < trace_us and \
                    any(holds_within(tr, self.window) < 4 for tr in traces_full):
                self.window = min(nice_up(self.window * 1.5), trace_us)
        else:
            self.window = float(data["window_us"])
        self.traces = [Trace(t, self.window) for t in data["traces"]]
        # Lock colours: the focus lock first, then by name.
        others = sorted(traced - {self.lock}) if self.lock else sorted(traced)
        names = ([self.lock] if self.lock else []) + others
        self.lock_colour = {n: LOCK_COLOURS[i % len(LOCK_COLOURS)] for i, n in enumerate(names)}
        states = set()
        for tr in self.traces:
            for ss in tr.states.values():
                states.update(n for _, _, n in ss)
        known = [s for s, _, _ in STATE_COLOURS]
        self.state_colour = {s: c for s, c, _ in STATE_COLOURS}
        self.state_label = {s: l for s, _, l in STATE_COLOURS}
        for i, s in enumerate(sorted(states - set(known))):
            self.state_colour[s] = EXTRA_STATE_COLOURS[i % len(EXTRA_STATE_COLOURS)]
            self.state_label[s] = s
        self.states_seen = [s for s in known if s in states] + sorted(states - set(known))
        self.mark_names = sorted({n for tr in self.traces for ms in tr.marks.values() for _, n in ms})
        self.queue_max = {n: max([1] + [v for tr in self.traces for _, v in tr.queues.get(n, [])])
                          for n in self.lock_colour}
        # The names with holds drawn, and the waiters strips worth a strip:
        # the page's lock, and any other that had a waiter in the window.
        self.hold_names = {n for tr in self.traces for hs in tr.holds.values() for _, _, n in hs}
        self.strip_names = [n for n in self.lock_colour
                            if n == self.lock or any(v > 0 for tr in self.traces for _, v in tr.queues.get(n, []))]

    # -- the figures in words ------------------------------------------------

    def throughput_metric(self):
        m = self.variants[0]["metrics"]
        for name in ("iops", "throughput_gbps", "lock_acquisitions_per_s"):
            if name in m:
                return name
        return next(iter(m)) if m else None

    def sentences(self):
        out = []
        vs = self.variants
        a, b = vs[0], vs[-1]
        lock = self.lock
        if lock:
            parts = []
            held_top, wait_top = 0.0, 0.0
            for v in vs:
                r = row_of(v, lock)
                if r is None:
                    continue
                if r["acquisitions"] == 0:
                    parts.append(f"in <b>{esc(v['name'])}</b> it is never taken")
                    continue
                busiest = f" by the busiest of its {r['instances']} instances" if r["instances"] > 1 else ""
                contended = (f"{fmt_num(r['contentions'])} of them contended, {fmt_num(r['waittime_avg_us'])} us "
                             f"mean wait when contended" if r["contentions"] else "none contended")
                ncpu = len(v.get("cpus", [])) or 1
                waiting = r["waittime_total_us"] / (v["duration_s"] * 1e6 * ncpu) * 100.0
                held_top, wait_top = max(held_top, r["util"]), max(wait_top, waiting)
                wait_words = (f", while its {ncpu} CPUs spend {fmt_num(waiting, 3)}% of their time waiting for it"
                              if r["contentions"] else "")
                parts.append(
                    f"in <b>{esc(v['name'])}</b> it is held {fmt_num(r['util'], 3)}% of the measured "
                    f"window{busiest} ({fmt_num(r['acquisitions'])} acquisitions, {contended}){wait_words}")
            if held_top >= 50:
                lead = f"<b>{esc(lock)}</b> bounds this run: one CPU at a time can hold it, and "
            elif wait_top >= 25:
                lead = f"<b>{esc(lock)}</b> bounds this run: CPUs queue for it, and "
            else:
                lead = f"No lock bounds this run by itself; the most held is <b>{esc(lock)}</b>: "
            out.append(lead + "; ".join(parts) + ".")
            ra, rb = row_of(a, lock), row_of(b, lock)
            if ra and rb and ra["acquisitions"] and rb["acquisitions"]:
                out.append(f"Its mean hold went {change_words(ra['holdtime_avg_us'], rb['holdtime_avg_us'], ' us')} "
                           f"from <b>{esc(a['name'])}</b> to <b>{esc(b['name'])}</b>, its longest hold "
                           f"{change_words(ra['holdtime_max_us'], rb['holdtime_max_us'], ' us')}.")
            for v, tr in zip(vs, self.traces):
                during = tr.states_during(lock)
                total = sum(during.values())
                if total <= 0:
                    continue
                top_states = [kv for kv in sorted(during.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
                              if kv[1] / total >= 0.0005]
                words = ", ".join(f"{self.state_label.get(s, s)} {fmt_num(t / total * 100, 3)}%"
                                  for s, t in top_states)
                out.append(f"In the window drawn below, while a CPU of <b>{esc(v['name'])}</b> holds "
                           f"{esc(lock)} it is in: {words}.")
        # Held, and on its way between owners: a lock held briefly can still
        # bound a run when its hand-offs fill the time between holds.
        if lock:
            for v, tr in zip(vs, self.traces):
                held = sum(b - a for hs in tr.holds.values() for a, b, n in hs if n == lock)
                moving = sum(b - a for hs in tr.handoffs.values() for a, b, n in hs if n == lock)
                inst = max(1, (row_of(v, lock) or {}).get("instances", 1))
                if moving > 0 and held > 0:
                    out.append(f"In the window drawn, {esc(lock)} of <b>{esc(v['name'])}</b> is held "
                               f"{fmt_num(100 * held / (self.window * inst), 3)}% of the time and on its way from "
                               f"one owner to the next {fmt_num(100 * moving / (self.window * inst), 3)}%"
                               + (f" (per instance, over its {inst})" if inst > 1 else "")
                               + ": each hand-off moves the lock's cache line to the next CPU, and nobody can hold "
                               "it meanwhile.")
        # Where another lock is held more of the window than the page's own,
        # the bottleneck has moved to it (QEMU's BQL once vq_lock is short).
        for v in vs:
            mine = row_of(v, lock) if lock else None
            rows = [row_of(v, r["class_name"]) for r in lock_rows(v)]
            top = max((r for r in rows if r), key=lambda r: (r["util"], r["class_name"]), default=None)
            if top and top["class_name"] != lock and top["util"] >= 50 and (mine is None or top["util"] > mine["util"]):
                out.append(f"In <b>{esc(v['name'])}</b> <b>{esc(top['class_name'])}</b> is held "
                           f"{fmt_num(top['util'], 3)}% of the measured window"
                           + (f", more than {esc(lock)} ({fmt_num(mine['util'], 3)}%)" if mine else "")
                           + ": there it is the lock that bounds the run; its holds are the half bars, its "
                           f"waiters the strip below the lanes.")
        for v in vs:
            if v.get("bound_detail"):
                out.append(f"The stack says <b>{esc(v['name'])}</b> is bound by {esc(v['bound_detail'])}.")
        spin = [self.mean_share(v, "spin_pct") for v in vs]
        if any(s is not None for s in spin) and spin[0] is not None and spin[-1] is not None:
            out.append(f"The CPUs' mean time spinning on locks went {change_words(spin[0], spin[-1], '%')} "
                       f"of the measured window.")
        for v, tr in zip(vs, self.traces):
            counts = {}
            for ms in tr.marks.values():
                for _, n in ms:
                    counts[n] = counts.get(n, 0) + 1
            if counts:
                words = ", ".join(f"{c} &times; {esc(n)}" for n, c in sorted(counts.items()))
                out.append(f"Marks in <b>{esc(v['name'])}</b>'s window: {words}.")
        metric = self.throughput_metric()
        moved = []
        for name, x in a["metrics"].items():
            y = b["metrics"].get(name)
            if name == metric or y is None or x is None or y is None or not x:
                continue
            moved.append((-abs((y - x) / x), name, x, y))
        moved.sort()
        if moved:
            words = "; ".join(f"<b>{esc(n)}</b> {change_words(x, y)}" for _, n, x, y in moved[:2])
            out.append(f"The metrics that moved most: {words}.")
        if metric and metric in b["metrics"]:
            x, y = a["metrics"][metric], b["metrics"][metric]
            ratio = f", {y / x:.3g} times" if x else ""
            out.append(f"Throughput: <b>{esc(metric)}</b> went {change_words(x, y)}{ratio} "
                       f"(mean over {fmt_num(b['duration_s'] * 1000, 3)} ms measured after "
                       f"{fmt_num(b['warmup_s'] * 1000, 3)} ms of warm-up).")
        return out

    def mean_share(self, v, key):
        rows = v.get("cpus", [])
        vals = [r[key] for r in rows if key in r]
        return sum(vals) / len(vals) if vals else None

    # -- drawing ---------------------------------------------------------------

    def x(self, t):
        return LABEL_W + t / self.window * PLOT_W

    def timeline(self, vi):
        v, tr = self.variants[vi], self.traces[vi]
        shown, why = choose_cpus(tr, self.lock, self.cpu_limit)
        # A waiters strip per lock with a waiters track in this window: the
        # focus lock first, then the others (QEMU's BQL) by name.
        strips = [n for n in self.strip_names if tr.queues.get(n)]
        height = 8 + LANE_H * len(shown) + (QUEUE_H + 10) * len(strips) + AXIS_H
        o = []
        o.append(f'<svg class="timeline" data-variant="{esc(v["name"])}" data-cpus-shown="{len(shown)}" '
                 f'data-cpus-total="{len(tr.tids)}" width="{SVG_W}" height="{height}" '
                 f'viewBox="0 0 {SVG_W} {height}" role="img" '
                 f'aria-label="per-CPU timeline of {esc(v["name"])}">')
        y = 8
        shares = {r["name"]: r for r in v.get("cpus", [])}
        for tid in shown:
            name = tr.names[tid]
            o.append(f'<g class="lane" data-variant="{esc(v["name"])}" data-cpu="{esc(name)}">')
            o.append(f'<rect x="{LABEL_W}" y="{y + MARK_H}" width="{PLOT_W}" height="{STATE_H + LOCK_H}" '
                     f'fill="#f4f4f4"/>')
            cpu, _, thread = name.partition(" ")
            if thread:  # "host4 qemu/main": the CPU, and below it what runs there
                o.append(f'<text x="{LABEL_W - 6}" y="{y + MARK_H + 9}" class="cpu">{esc(cpu)}</text>')
                o.append(f'<text x="{LABEL_W - 6}" y="{y + MARK_H + STATE_H + 7}" class="small">{esc(thread)}</text>')
            else:
                o.append(f'<text x="{LABEL_W - 6}" y="{y + MARK_H + STATE_H}" class="cpu">{esc(cpu)}</text>')
            # Idle: what no state covers, hatched so it is not mistaken for a
            # state (a vCPU's time in the guest is drawn in its states).
            at = 0.0
            for a, b, n in sorted(tr.states.get(tid, [])) + [(self.window, self.window, None)]:
                if a > at:
                    o.append(self.idle(at, a, y + MARK_H))
                at = max(at, b)
            for a, b, n in tr.states.get(tid, []):
                o.append(self.rect(a, b, y + MARK_H, STATE_H, self.state_colour[n]))
            holds = sorted(tr.holds.get(tid, []), key=lambda h: (h[2] != self.lock, h[0]))
            for a, b, n in holds:
                top = y + MARK_H + STATE_H + (0 if n == self.lock else LOCK_H // 2)
                h = LOCK_H if n == self.lock else LOCK_H - LOCK_H // 2
                o.append(self.rect(a, b, top, h, self.lock_colour[n], least=1.5))
            # The page's lock on its way to this CPU: an outline in its colour
            # where the hold will start.
            for a, b, n in tr.handoffs.get(tid, []):
                if n != self.lock:
                    continue
                x0, x1 = self.x(a), self.x(b)
                o.append(f'<rect class="handoff" x="{x0:.2f}" y="{y + MARK_H + STATE_H + 0.5}" '
                         f'width="{max(x1 - x0, 1.0):.2f}" height="{LOCK_H - 1}" fill="#ffffff" '
                         f'stroke="{self.lock_colour[n]}" stroke-width="1"/>')
            for t, n in tr.marks.get(tid, []):
                cx = self.x(t)
                o.append(f'<path d="M{cx - 3.5:.2f} {y} L{cx + 3.5:.2f} {y} L{cx:.2f} {y + MARK_H - 1}Z" '
                         f'fill="{self.mark_colour(n)}"/>')
            o.append(self.share_bar(shares.get(name), y + MARK_H, v))
            o.append("</g>")
            y += LANE_H
        for n in strips:
            y += 6
            o.append(self.queue_strip(n, tr.queues[n], y))
            y += QUEUE_H + 4
        o.append(self.axis(y))
        o.append("</svg>")
        return "\n".join(o), shown, why

    def idle(self, a, b, y):
        """Idle: a dotted line along the lane's middle, so it is not mistaken
        for a state."""
        x0, x1 = self.x(a), self.x(b)
        mid = y + STATE_H / 2
        return (f'<line class="idle" x1="{x0:.2f}" y1="{mid:.1f}" x2="{x1:.2f}" y2="{mid:.1f}" stroke="#9a9a9a" '
                f'stroke-width="1.2" stroke-dasharray="1.5,2.5"/>')

    def rect(self, a, b, y, h, colour, least=0.6):
        x0, x1 = self.x(a), self.x(b)
        w = max(x1 - x0, least)  # a slice too short for a pixel still shows
        return f'<rect x="{x0:.2f}" y="{y}" width="{w:.2f}" height="{h}" fill="{colour}"/>'

    def mark_colour(self, name):
        palette = ["#111111", "#d62728", "#2ca02c", "#9467bd"]
        return palette[self.mark_names.index(name) % len(palette)]

    def share_bar(self, row, y, v):
        """The CPU's shares of the whole measured window, in the lane's colours."""
        x = LABEL_W + PLOT_W + 14
        if row is None:  # a CPU the stack does not account (its shares are not reported)
            return ""
        out = [f'<rect x="{x}" y="{y}" width="{SHARE_W}" height="{STATE_H}" fill="#ffffff" stroke="#999" '
               f'stroke-width="0.5"/>']
        for s in self.states_seen:
            p = row.get(f"{s}_pct")
            if not p:
                continue
            w = SHARE_W * p / 100.0
            out.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{STATE_H}" '
                       f'fill="{self.state_colour[s]}"><title>{esc(s)} {fmt_num(p, 3)}%</title></rect>')
            x += w
        return "".join(out)

    def queue_strip(self, lock, queue, y):
        out = [f'<g class="queue" data-lock="{esc(lock)}">']
        out.append(f'<rect x="{LABEL_W}" y="{y}" width="{PLOT_W}" height="{QUEUE_H}" fill="#fbf8ff" '
                   f'stroke="#ccc" stroke-width="0.5"/>')
        short = lock if len(lock) <= 12 else lock[:11] + "\u2026"
        out.append(f'<text x="{LABEL_W - 6}" y="{y + 10}" class="small">{esc(short)}</text>')
        out.append(f'<text x="{LABEL_W - 6}" y="{y + 20}" class="cpu">waiters</text>')
        qmax = self.queue_max.get(lock, 1)
        out.append(f'<text x="{LABEL_W - 6}" y="{y + QUEUE_H}" class="small">0</text>')
        out.append(f'<text x="{LABEL_W - 6}" y="{y + 28}" class="small">max {qmax}</text>')
        scale = (QUEUE_H - 4) / qmax
        pts = []
        prev = None
        for t, val in queue:
            if prev is not None:
                pts.append(f"{self.x(t):.2f},{y + QUEUE_H - prev * scale:.2f}")
            pts.append(f"{self.x(t):.2f},{y + QUEUE_H - val * scale:.2f}")
            prev = val
        if prev is not None:
            pts.append(f"{self.x(self.window):.2f},{y + QUEUE_H - prev * scale:.2f}")
            poly = f"{self.x(queue[0][0]):.2f},{y + QUEUE_H} " + " ".join(pts) + \
                f" {self.x(self.window):.2f},{y + QUEUE_H}"
            out.append(f'<polygon points="{poly}" fill="{self.lock_colour[lock]}" fill-opacity="0.35" '
                       f'stroke="{self.lock_colour[lock]}" stroke-width="1"/>')
        out.append("</g>")
        return "".join(out)

    def axis(self, y):
        step = tick_step(self.window)
        out = [f'<line x1="{LABEL_W}" y1="{y + 2}" x2="{LABEL_W + PLOT_W}" y2="{y + 2}" stroke="#333"/>']
        n = int(math.floor(self.window / step + 1e-9))
        for i in range(n + 1):
            t = i * step
            x = self.x(t)
            anchor = "end" if i == n and x > LABEL_W + PLOT_W - 20 else "middle"
            out.append(f'<line x1="{x:.2f}" y1="{y + 2}" x2="{x:.2f}" y2="{y + 7}" stroke="#333"/>')
            out.append(f'<text x="{x:.2f}" y="{y + 20}" text-anchor="{anchor}" class="tick">{t:g}</text>')
        out.append(f'<text x="{LABEL_W + PLOT_W / 2:.2f}" y="{y + 33}" text-anchor="middle" class="tick">'
                   f'us after the measured window starts</text>')
        out.append(f'<text x="{LABEL_W + PLOT_W + 14 + SHARE_W / 2:.2f}" y="{y + 20}" text-anchor="middle" '
                   f'class="tick">whole run</text>')
        return "".join(out)

    def legend(self):
        items = []
        for s in self.states_seen:
            items.append(f'<span class="key"><i style="background:{self.state_colour[s]}"></i>'
                         f'{esc(self.state_label[s])}</span>')
        for n, c in self.lock_colour.items():
            if n not in self.hold_names and n != self.lock:
                continue
            role = "holds" if n == self.lock else "holds (half bar)"
            items.append(f'<span class="key"><i class="lock" style="background:{c}"></i>{esc(n)} {role}</span>')
        if self.lock and any(n == self.lock for tr in self.traces for hs in tr.handoffs.values() for _, _, n in hs):
            items.append(f'<span class="key"><i style="background:#fff;border:1px solid {self.lock_colour[self.lock]}">'
                         f'</i>{esc(self.lock)} on its way to its next owner (hand-off)</span>')
        for n in self.mark_names:
            items.append(f'<span class="key"><b class="tri" style="border-top-color:{self.mark_colour(n)}"></b>'
                         f'{esc(n)}</span>')
        for n in self.strip_names:
            if any(tr.queues.get(n) for tr in self.traces):
                what = ("work items queued for the vhost worker" if n == "vhost work list"
                        else f"tasks or CPUs waiting for {esc(n)}")
                items.append(f'<span class="key"><i style="background:{self.lock_colour[n]};opacity:.45"></i>'
                             f'{what}</span>')
        items.append('<span class="key"><i style="background:#f4f4f4;border-top:6px solid #f4f4f4;'
                     'border-bottom:6px solid #f4f4f4;box-sizing:border-box;border-left:0;border-right:0;'
                     'background-image:none;outline:1px dotted #9a9a9a;outline-offset:-6px"></i>idle, dotted '
                     '(nothing to run; a vCPU\'s time in the guest is drawn in its states)</span>')
        return '<div class="legend">' + "".join(items) + "</div>"

    def lock_table(self, v):
        rows = lock_rows(v)
        if not rows:
            return '<p class="small">No lock was taken in the measured window.</p>'
        o = ['<table class="nums"><caption>lock_stat (whole measured window; times in us)</caption>',
             "<tr><th>lock</th><th>acquisitions</th><th>contended</th><th>wait avg</th>"
             "<th>hold avg</th><th>held</th></tr>"]
        for r in rows:
            name = esc(r["class_name"]).replace("_", "_<wbr>").replace("(", "<wbr>(")
            o.append(f"<tr><td>{name}</td><td>{fmt_num(r['acquisitions'])}</td>"
                     f"<td>{fmt_num(r['contentions'])}</td><td>{fmt_num(r['waittime_avg_us'])}</td>"
                     f"<td>{fmt_num(r['holdtime_avg_us'])}</td><td>{fmt_num(lock_util(r, v), 3)}%</td></tr>")
        o.append("</table>")
        return "".join(o)

    def cpu_table(self, v, shown_names):
        rows = [r for r in v.get("cpus", []) if r["name"] in shown_names]
        if not rows:
            return ""
        keys = [k for k in rows[0] if k.endswith("_pct")]
        allrows = v.get("cpus", [])
        keys = [k for k in keys if any(r.get(k, 0) >= 0.05 for r in allrows)]
        o = ['<table class="nums"><caption>CPU time, % of the measured window</caption><tr><th>cpu</th>']
        o += [f"<th>{esc(k[:-4].replace('_', '-'))}</th>" for k in keys]
        o.append("</tr>")
        many = len(rows) > 8
        for r in rows[:8] if many else rows:
            o.append(f"<tr><td>{esc(r['name'])}</td>" + "".join(f"<td>{r.get(k, 0):.1f}</td>" for k in keys)
                     + "</tr>")
        if many:
            o.append(f'<tr><td colspan="{len(keys) + 1}" class="small">... {len(rows) - 8} more shown CPUs '
                     f'(hover a share bar for its figures)</td></tr>')
        o.append(f"<tr class='mean'><td>mean of all {len(allrows)}</td>" +
                 "".join(f"<td>{sum(x.get(k, 0) for x in allrows) / len(allrows):.1f}</td>" for k in keys) +
                 "</tr>")
        o.append("</table>")
        return "".join(o)

    def render(self):
        scen = self.run["scenario"]
        names = [v["name"] for v in self.variants]
        title = f"{scen}: {' vs '.join(names)}"
        o = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{esc(title)}</title>", f"<style>{CSS}</style></head><body>",
             f"<h1>{esc(scen)}: {' vs '.join(f'<span>{esc(n)}</span>' for n in names)}</h1>"]
        if self.data.get("description"):
            o.append(f'<p class="desc">{esc(self.data["description"])}</p>')
        o.append('<div class="story">' + "".join(f"<p>{s}</p>" for s in self.sentences()) + "</div>")
        o.append(self.legend())
        chosen = (f" (chosen as six mean holds of {esc(self.lock)}, widened until every variant takes it at least "
                  f"4 times; viosim teach --window sets it)"
                  if self.window_chosen and self.lock else "")
        o.append(f'<p class="small">Each lane is one CPU over the first {fmt_us(self.window)} of the measured '
                 f'window (after the warm-up){chosen}, on the same time scale for every variant: the upper bar is what the '
                 f'CPU is doing, the lower bar the locks it holds, triangles above mark events; the bar at the '
                 f'right is the CPU\'s shares over the whole measured window.</p>')
        for vi, v in enumerate(self.variants):
            svg, shown, why = self.timeline(vi)
            tr = self.traces[vi]
            o.append(f'<section class="variant" data-variant="{esc(v["name"])}">')
            o.append(f"<h2>{esc(v['name'])}</h2>")
            if vi < len(self.descriptions) and self.descriptions[vi]:
                o.append(f'<p class="desc">{esc(self.descriptions[vi])}</p>')
            if why:
                o.append(f'<p class="note">Showing {len(shown)} of {len(tr.tids)} CPUs: the ones that {esc(why)} '
                         f'(viosim teach --cpus N shows more).</p>')
            o.append('<div class="row"><div class="plot">' + svg + "</div>")
            o.append('<div class="side">' + self.lock_table(v) +
                     self.cpu_table(v, {tr.names[t] for t in shown}) + "</div></div>")
            o.append("</section>")
        o.append(f'<p class="small foot">Made by `viosim teach` ({esc(self.data.get("version", ""))}) from '
                 f'{esc(self.data.get("scenario_file", ""))}, seed {esc(self.variants[0].get("seed", ""))}. '
                 f'Every figure is counted from simulated events.</p>')
        o.append("</body></html>")
        return "\n".join(o) + "\n"


CSS = """
body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;font-size:15px;color:#222;margin:16px 20px;max-width:1240px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:18px;margin:14px 0 2px}
.desc{margin:2px 0 6px;color:#444}.small{font-size:13px;color:#444}.note{font-size:14px;color:#7a4b00;margin:2px 0}
.story{background:#f6f8fa;border-left:4px solid #6a3d9a;padding:4px 12px;margin:8px 0}.story p{margin:6px 0}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:8px 0;font-size:14px}
.key{white-space:nowrap}.key i{display:inline-block;width:18px;height:11px;margin-right:5px;vertical-align:-1px}
.key i.lock{height:7px;vertical-align:1px}
.key b.tri{display:inline-block;width:0;height:0;border-left:6px solid transparent;border-right:6px solid transparent;
border-top:8px solid #111;margin-right:5px}
.row{display:flex;gap:14px;align-items:flex-start}.plot{flex:none}.side{flex:1;min-width:0}
svg text{font-family:"DejaVu Sans",Verdana,Arial,sans-serif}
svg text.cpu{font-size:13px;text-anchor:end;fill:#222}svg text.tick{font-size:12px;fill:#333}
svg text.small{font-size:11px;text-anchor:end;fill:#555}
table.nums{border-collapse:collapse;font-size:12.5px;margin:0 0 10px;width:100%}
table.nums caption{text-align:left;font-weight:bold;font-size:13px;padding:2px 0}
table.nums td,table.nums th{white-space:nowrap;border-bottom:1px solid #ddd;padding:2px 4px;text-align:right}
table.nums td:first-child,table.nums th:first-child{text-align:left;white-space:normal}
table.nums tr.mean td{font-weight:bold}
.foot{margin-top:16px}
"""


def main():
    data_path, out_path = sys.argv[1], sys.argv[2]
    with open(data_path, encoding="utf-8") as f:
        data = json.load(f)
    page = Page(data).render()
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        f.write(page)


if __name__ == "__main__":
    main()
