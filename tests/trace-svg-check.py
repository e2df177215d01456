#!/usr/bin/env python3
"""CTest trace-svg: runs a program with ACLSIM_TRACE, renders the trace with
scripts/trace-svg.py and checks the SVG: well-formed XML, a labelled row per
track of the trace (host thread, each device's streams and workers), a box
per slice, a marker per instant.

  trace-svg-check.py PROGRAM RENDERER
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main(program, renderer):
    with tempfile.TemporaryDirectory() as d:
        trace, svg = os.path.join(d, "t.json"), os.path.join(d, "t.svg")
        env = dict(os.environ, ACLSIM_TRACE=trace)
        subprocess.run([program], env=env, check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, renderer, trace, svg], check=True)
        events = json.load(open(trace))["traceEvents"]
        root = ET.parse(svg).getroot()   # raises on malformed XML
    assert root.tag == NS + "svg", root.tag
    labels = [t.text for g in root.iter(NS + "g") if g.get("class") == "track"
              for t in g.iter(NS + "text")]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    for want in ("host / thread", "device 0 / stream", "device 0 / worker", "device 1 / stream"):
        assert any(l.startswith(want) for l in labels), (want, labels)
    assert len(labels) == len(names), (labels, names)
    slices = [e for e in events if e["ph"] == "X"]
    rects = [r for r in root.iter(NS + "rect") if r.get("class") == "slice"]
    assert len(rects) == len(slices), (len(rects), len(slices))
    assert all(r.find(NS + "title") is not None for r in rects)
    instants = [e for e in events if e["ph"] == "i"]
    marks = [p for p in root.iter(NS + "path") if p.get("class") == "instant"]
    assert len(marks) == len(instants)
    print(f"trace-svg: {len(labels)} tracks, {len(rects)} slices")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
