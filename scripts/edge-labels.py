#!/usr/bin/env python3
"""Edge precision and recall of an extract folder against the hand labels (docs/metrics.md).

labels/edges-sample-v1.csv: 100 INFERRED edges (random, seed 20261202, drawn before unmarked
mentions became AMBIGUOUS) judged right or wrong; labels/edges-sample-v2.csv: a fresh 100 drawn
after that change (seed 20261205, none of v1's). Precision per file = right / sampled among
those still INFERRED in the metrics (confidence >= 0.3) in the folder; an edge now of kind `complements` between the same skills counts as right when its
judgement said the kind should have been `complements` / a Related entry.
labels/relations-recall-v1.csv: 22 relations a reader listed in 12 skills; recall = those with
an edge in the metrics (any kind) between the two skills.
Usage: scripts/edge-labels.py EXTRACT_DIR
"""

import csv
import json
import sys
from pathlib import Path

KINDS = {"depends_on", "complements", "co_used_with", "references"}


def main() -> int:
    folder = Path(sys.argv[1])
    labels = Path(__file__).resolve().parent.parent / "labels"
    edges = {}
    with (folder / "edges.ndjson").open() as f:
        for line in f:
            e = json.loads(line)
            if e["confidence"] >= 0.3 and e["kind"] in KINDS:
                edges[(e["src"], e["dst"], e["kind"])] = e
    for name in ("edges-sample-v1.csv", "edges-sample-v2.csv"):
        kept = right = 0
        with (labels / name).open() as f:
            for r in csv.DictReader(f):
                e = edges.get((r["src"], r["dst"], r["kind"]))
                ok = int(r["correct"])
                if e is None and r["kind"] != "complements":
                    e = edges.get((r["src"], r["dst"], "complements"))
                    ok = (
                        1
                        if ("complements" in r["why"] or "Related" in r["why"])
                        else ok
                    )
                if e is not None and e["source"] == "INFERRED":
                    kept += 1
                    right += ok
        print(
            f"{name}: precision {right}/{kept} = {right / max(kept, 1):.3f} (sampled edges still INFERRED)"
        )
    pairs = {(s, d) for (s, d, _) in edges}
    with (labels / "relations-recall-v1.csv").open() as f:
        listed = [(r["src"], r["dst"]) for r in csv.DictReader(f)]
    found = sum(p in pairs for p in listed)
    print(f"recall {found}/{len(listed)} = {found / max(len(listed), 1):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
