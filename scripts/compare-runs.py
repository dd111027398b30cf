#!/usr/bin/env python3
"""Compares two scripts/compare-runs.sh folders: every output file byte for byte, JSON outputs
semantically (key order and timing fields aside), human outputs with durations masked.

usage: scripts/compare-runs.py BEFORE AFTER [REV ...]

REVs (full git commit ids) are masked wherever they appear: the demo registries' `rev` is the
checkout's HEAD, an input rather than behaviour. tantivy names its segment files with random
UUIDs, so `bm25/` segment names differ between any two runs; their contents are compared by
extension.
"""

import json
import os
import re
import sys

A, B = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
REVS = sys.argv[3:]
TIMING = {
    "seconds",
    "elapsed_seconds",
    "skills_per_second",
    "took_ms",
    "milliseconds",
    "latency_ms",
    "embed_seconds",
    "texts_per_second",
    "read",
    "embed",
    "dedup",
    "write",
    "total",
}


def norm(b, root):
    for r in REVS:
        b = b.replace(r.encode(), b"<REV>").replace(r[:12].encode(), b"<REV12>")
    return b.replace(root.encode(), b"<DIR>")


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in TIMING}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def files(root):
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.join(d, f)
            rel = os.path.relpath(p, root)
            if "/bm25/" in "/" + rel and re.match(r"[0-9a-f]{32}\.", f):
                rel = os.path.join(os.path.dirname(rel), "<segment>" + f[32:])
            out[rel] = p
    return out


same, different = [], []
fa, fb = files(A), files(B)
for rel in sorted(set(fa) | set(fb)):
    if rel.endswith((".err", ".rc", "meta.json", ".managed.json")) or rel == "progress":
        continue
    if rel not in fa or rel not in fb:
        different.append(f"only in {'after' if rel in fb else 'before'}: {rel}")
        continue
    with open(fa[rel], "rb") as x, open(fb[rel], "rb") as y:
        a, b = norm(x.read(), A), norm(y.read(), B)
    if a == b:
        same.append(rel)
        continue
    try:
        if strip(json.loads(a)) == strip(json.loads(b)):
            same.append(rel + " (as JSON, key order and timings aside)")
            continue
        different.append(f"JSON differs: {rel}")
        continue
    except ValueError:
        pass
    mask = lambda t: re.sub(rb"\d+\.\d+ ?s\b|\(\d+ skills/s\)|\(\d+/s\)", b"<T>", t)
    if mask(a) == mask(b):
        same.append(rel + " (durations aside)")
    else:
        different.append(f"differs: {rel}")
for d in different:
    print(d)
print(f"{len(same)} same, {len(different)} different")
