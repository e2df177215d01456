#!/usr/bin/env python3
"""Renders an aclsim trace file (Chrome Trace Event JSON, ACLSIM_TRACE or
aclprofFinalize) to a self-contained SVG timeline: one row per track
(host threads, then each device's streams and workers), a box per slice,
a tick per instant, arrows from event records to the waits that waited for
them. Hovering a box shows its name, times and arguments. Standard library
only (Debian's python3).

  trace-svg.py TRACE.json OUT.svg [--width PIXELS] [--from US] [--to US]

docs/tracing.md explains how to read the picture.
"""
import argparse
import html
import json
import sys

LABEL_W = 230
ROW_H = 22
AXIS_H = 34
PAD = 8

# Fill colours by category (tasks by kind).
COLOURS = {
    "api": "#8fa9c8", "copy": "#e6a04e", "block": "#6cbf84", "msproftx": "#c58fd1",
    "mstx": "#c58fd1", "aclsim": "#d9534f",
}
KIND_COLOURS = {
    "copy": "#e6a04e", "memset": "#e8c468", "kernel": "#3f9e5a", "host function": "#d1746f",
    "event record": "#7d7d7d", "wait": "#b9b9b9", "signal": "#9a9a9a", "mark": "#c58fd1",
    "callback": "#d1746f", "batch": "#e6a04e", "copy2d": "#e6a04e", "memset32": "#e8c468",
}


def colour(e):
    cat = e.get("cat", "")
    if cat == "task":
        return KIND_COLOURS.get(e.get("args", {}).get("kind", ""), "#a0a0d0")
    if cat.startswith("mstx"):
        return COLOURS["mstx"]
    return COLOURS.get(cat, "#a0a0d0")


def load(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if isinstance(data, list):
        return data, {}
    return data.get("traceEvents", []), data.get("otherData", {})


def tracks(events):
    """(pid, tid) -> label, in display order: host, then devices; within a
    process, threads before streams, by tid."""
    procs, threads, seen = {}, {}, set()
    for e in events:
        if e.get("ph") == "M":
            name = e.get("args", {}).get("name", "")
            if e.get("name") == "process_name":
                procs[e["pid"]] = name
            elif e.get("name") == "thread_name":
                threads[(e["pid"], e["tid"])] = name
        elif e.get("ph") in ("X", "i"):
            seen.add((e["pid"], e["tid"]))
    keys = sorted(seen | set(threads), key=lambda k: (k[0], k[1]))
    order = []
    for pid, tid in keys:
        pname = procs.get(pid, f"process {pid}")
        tname = threads.get((pid, tid), f"track {tid}")
        order.append(((pid, tid), f"{pname} / {tname}"))
    return order


def fmt_us(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f} s"
    if us >= 1e3:
        return f"{us / 1e3:.3f} ms"
    return f"{us:.3f} us"


def render(events, other, width, t_from=None, t_to=None):
    order = tracks(events)
    row_of = {key: i for i, (key, _) in enumerate(order)}
    timed = [e for e in events if e.get("ph") in ("X", "i", "s", "f") and "ts" in e]
    if timed:
        t0 = min(e["ts"] for e in timed)
        t1 = max(e["ts"] + e.get("dur", 0) for e in timed)
    else:
        t0, t1 = 0.0, 1.0
    if t_from is not None:
        t0 = t_from
    if t_to is not None:
        t1 = t_to
    span = max(t1 - t0, 1e-3)
    plot_w = width - LABEL_W - 2 * PAD
    height = AXIS_H + ROW_H * max(len(order), 1) + 2 * PAD + 18

    def x(ts):
        return LABEL_W + PAD + (ts - t0) / span * plot_w

    def y(row):
        return AXIS_H + PAD + row * ROW_H

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        '<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="7" refY="4" '
        'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#444"/></marker></defs>',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    # Rows: alternate shading and labels.
    out.append('<g class="tracks">')
    for i, ((pid, tid), label) in enumerate(order):
        fill = "#f4f6f8" if i % 2 == 0 else "#ffffff"
        out.append(f'<g class="track" data-pid="{pid}" data-tid="{tid}">'
                   f'<rect x="0" y="{y(i):.1f}" width="{width}" height="{ROW_H}" fill="{fill}"/>'
                   f'<text x="{PAD}" y="{y(i) + ROW_H * 0.68:.1f}">{html.escape(label)}</text></g>')
    out.append("</g>")
    # Time axis.
    out.append('<g class="axis" stroke="#999">')
    for k in range(11):
        ts = t0 + span * k / 10
        xx = x(ts)
        out.append(f'<line x1="{xx:.1f}" y1="{AXIS_H - 6}" x2="{xx:.1f}" y2="{height - 18}" '
                   f'stroke="#e2e2e2"/>')
        out.append(f'<text x="{xx:.1f}" y="{AXIS_H - 10}" text-anchor="middle" stroke="none" '
                   f'fill="#333">+{html.escape(fmt_us(ts - t0))}</text>')
    out.append("</g>")
    # Slices and instants.
    out.append('<g class="events">')
    flows_out, flows_in = {}, {}
    for e in events:
        ph = e.get("ph")
        key = (e.get("pid"), e.get("tid"))
        if ph in ("s", "f"):
            (flows_out if ph == "s" else flows_in).setdefault(e.get("id"), (key, e["ts"], e.get("cat")))
            continue
        if ph not in ("X", "i") or key not in row_of:
            continue
        row = row_of[key]
        name = e.get("name", "")
        args = e.get("args", {})
        tip = f"{name}\nstart {fmt_us(e['ts'] - t0)}"
        if ph == "X":
            tip += f", {fmt_us(e.get('dur', 0))}"
        if args:
            tip += "\n" + ", ".join(f"{k}={v}" for k, v in args.items())
        if ph == "X":
            x0, x1 = x(e["ts"]), x(e["ts"] + e.get("dur", 0))
            if x1 < LABEL_W + PAD or x0 > width - PAD:
                continue
            w = max(x1 - x0, 0.8)
            out.append(f'<rect class="slice" x="{x0:.2f}" y="{y(row) + 3:.1f}" width="{w:.2f}" '
                       f'height="{ROW_H - 6}" fill="{colour(e)}" stroke="#555" stroke-width="0.3">'
                       f'<title>{html.escape(tip)}</title></rect>')
            if w > 7 * len(name) * 0.6:
                out.append(f'<text x="{x0 + 2:.1f}" y="{y(row) + ROW_H * 0.68:.1f}" '
                           f'font-size="10" pointer-events="none">{html.escape(name)}</text>')
        else:
            xx = x(e["ts"])
            out.append(f'<path class="instant" d="M{xx:.1f},{y(row) + 2:.1f} l4,6 l-8,0 z" '
                       f'fill="{colour(e)}" stroke="#333" stroke-width="0.4">'
                       f'<title>{html.escape(tip)}</title></path>')
    out.append("</g>")
    # Arrows between streams (event record -> wait).
    out.append('<g class="flows" stroke="#444" stroke-width="0.8" fill="none">')
    for fid, (key_in, ts_in, cat) in flows_in.items():
        if cat not in ("event", "notify") or fid not in flows_out:
            continue
        key_out, ts_out, _ = flows_out[fid]
        if key_out not in row_of or key_in not in row_of:
            continue
        out.append(f'<line class="flow" x1="{x(ts_out):.1f}" y1="{y(row_of[key_out]) + ROW_H / 2:.1f}" '
                   f'x2="{x(ts_in):.1f}" y2="{y(row_of[key_in]) + ROW_H / 2:.1f}" '
                   f'marker-end="url(#arrow)"/>')
    out.append("</g>")
    dropped = other.get("dropped_events", 0)
    note = f"{len(order)} tracks, {fmt_us(span)}"
    if dropped:
        note += f"; {dropped} events were dropped (ring full: ACLSIM_TRACE_EVENTS)"
    out.append(f'<text x="{PAD}" y="{height - 5}" fill="#555">{html.escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    p = argparse.ArgumentParser(description="aclsim trace -> SVG timeline")
    p.add_argument("trace")
    p.add_argument("svg")
    p.add_argument("--width", type=int, default=1400)
    p.add_argument("--from", dest="t_from", type=float, help="start (us, the file's clock)")
    p.add_argument("--to", dest="t_to", type=float, help="end (us, the file's clock)")
    a = p.parse_args(argv)
    events, other = load(a.trace)
    svg = render(events, other, max(a.width, 400), a.t_from, a.t_to)
    with open(a.svg, "w", encoding="utf-8") as f:
        f.write(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
