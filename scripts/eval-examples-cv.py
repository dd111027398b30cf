#!/usr/bin/env python3
"""K-fold cross-validation of few-shot routing (`skg index build --examples`).

For each fold: an index over AUDIT whose examples are the other folds' queries, evaluated on the
fold's queries (which the index never saw). Prints each fold and the mean of every metric, for
every mode, as JSON on stdout. Folds are fixed: query i goes to fold i mod K.

usage: scripts/eval-examples-cv.py AUDIT QUERIES.jsonl [--folds 5] [--work DIR] [EVAL ARGS...]
SKG_BIN names the skg binary (default target/debug/skg).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("audit")
    p.add_argument("queries")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--work")
    a, eval_args = p.parse_known_args()
    a.eval_args = [x for x in eval_args if x != "--"]
    skg = os.environ.get("SKG_BIN", "target/debug/skg")
    lines = [l for l in Path(a.queries).read_text().splitlines() if l.strip()]
    work = Path(a.work or tempfile.mkdtemp(prefix="skg-cv-"))
    work.mkdir(parents=True, exist_ok=True)
    folds = []
    for k in range(a.folds):
        train = [l for i, l in enumerate(lines) if i % a.folds != k]
        test = [l for i, l in enumerate(lines) if i % a.folds == k]
        (work / f"train{k}.jsonl").write_text("\n".join(train) + "\n")
        (work / f"test{k}.jsonl").write_text("\n".join(test) + "\n")
        index = work / f"index{k}"
        subprocess.run(
            [
                skg,
                "index",
                "build",
                a.audit,
                "-o",
                str(index),
                "--examples",
                str(work / f"train{k}.jsonl"),
                "-q",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        out = subprocess.run(
            [
                skg,
                "eval",
                str(work / f"test{k}.jsonl"),
                "--index",
                str(index),
                "--format",
                "json",
                *a.eval_args,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        r = json.loads(out.stdout)
        folds.append(r)
        print(
            f"fold {k}: "
            + ", ".join(
                f"{m['mode']} hit@1 {m['metrics']['hit'][0]:.3f} MRR@10 {m['metrics']['mrr10']:.3f}"
                for m in r["modes"]
            ),
            file=sys.stderr,
        )
    modes = {}
    for r in folds:
        for m in r["modes"]:
            acc = modes.setdefault(
                m["mode"],
                {
                    "queries": 0,
                    "hit": [0.0] * 4,
                    "mrr10": 0.0,
                    "ndcg10": 0.0,
                    "recall": [0.0] * 4,
                },
            )
            n = m["metrics"]["queries"]
            acc["queries"] += n
            for i in range(4):
                acc["hit"][i] += m["metrics"]["hit"][i] * n
                acc["recall"][i] += m["metrics"]["recall"][i] * n
            acc["mrr10"] += m["metrics"]["mrr10"] * n
            acc["ndcg10"] += m["metrics"]["ndcg10"] * n
    for acc in modes.values():
        n = max(acc["queries"], 1)
        acc["hit"] = [round(x / n, 4) for x in acc["hit"]]
        acc["recall"] = [round(x / n, 4) for x in acc["recall"]]
        acc["mrr10"] = round(acc["mrr10"] / n, 4)
        acc["ndcg10"] = round(acc["ndcg10"] / n, 4)
    json.dump(
        {"folds": a.folds, "queries": len(lines), "held_out": modes},
        sys.stdout,
        indent=2,
    )
    print()


if __name__ == "__main__":
    main()
