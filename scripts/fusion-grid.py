#!/usr/bin/env python3
"""Measure the hybrid fusion's settings on one query set: one `skg eval` per setting.

    python3 scripts/fusion-grid.py QUERIES --index IDX [--grid fusion|fields]
        [--skg target/fast/skg] [--include-quarantined] [--json OUT]

`--grid fusion` (default): the fusion's settings (36). `--grid fields`: whole-skill BM25's field
weights (`skg eval --field-weights`), the four card fields together × headings × body (36), the
fusion at its default.

Prints one row per setting (hit@1 / hit@5 / hit@10 / MRR@10, hybrid), best balanced MRR@10
first, the default marked. *Balanced*: every overlap class of the queries (`none`, `low`,
`natural`: how many of the skill's words the query uses) weighs the same, whatever its share —
the written requests are three quarters `natural`, the judged sets a fifth to a third, and BM25
gains most on `natural` queries, so a plain mean over the requests would choose for the wrong
mix. The balanced figures weigh the first-gold ranks `skg eval --per-query` reports; the plain
ones are `skg eval`'s own summary. The point is where the settings are *chosen*: on the written
training requests (`labels/train-requests-v1.jsonl`, which no judged query shares a skill with),
then measured once on the judged sets with `skg eval --compare` — not on the dev sets they are
measured on (docs/retrieval.md, "Settings chosen on the training requests").
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys

Setting = tuple[str, float, float, float, int, int, str]
# Fusion, BM25 weight, saturation, negative weight, max terms, pool, field weights ("": the
# unit's for each skill's kind; the eval report's `bm25.field_weights` says which ran).
DEFAULT: Setting = ("adaptive", 0.3, 4.0, 0.5, 16, 50, "")


def fields_grid() -> list[Setting]:
    """The card fields (name, description, when_to_use, tags) × headings × body, each set for
    every skill; the default row (each kind's own weights) first, for reference."""
    rows = [DEFAULT]
    for card, headings, body in itertools.product(
        [0.25, 0.5, 1.0], [0.5, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]
    ):
        weights = ",".join(f"{x:g}" for x in [card] * 4 + [headings, body])
        rows.append(DEFAULT[:6] + (weights,))
    return rows


def grid() -> list[Setting]:
    """The fusion's settings, field weights at the unit's."""
    rows = [DEFAULT]
    for w, s in itertools.product([0.2, 0.3, 0.4, 0.5, 0.6], [2.0, 4.0, 8.0, 16.0]):
        rows.append(("adaptive", w, s, 0.5, 16, 50, ""))
    for w, s in itertools.product([0.2, 0.3, 0.4, 0.5], [0.0, 4.0]):
        rows.append(("zscore", w, s, 0.5, 16, 50, ""))
    rows.append(("rrf", 0.3, 4.0, 0.5, 16, 50, ""))
    for neg in [0.0, 1.0]:
        rows.append(("adaptive", 0.3, 4.0, neg, 16, 50, ""))
    for terms in [8, 32, 0]:
        rows.append(("adaptive", 0.3, 4.0, 0.5, terms, 50, ""))
    for pool in [30, 100]:
        rows.append(("adaptive", 0.3, 4.0, 0.5, 16, pool, ""))
    seen: set[Setting] = set()
    return [r for r in rows if not (r in seen or seen.add(r))]


def run(args: argparse.Namespace, setting: Setting) -> dict:
    fusion, w, s, neg, terms, pool, fields = setting
    cmd = [
        args.skg,
        "eval",
        args.queries,
        "--index",
        args.index,
        "--mode",
        "hybrid",
        "--fusion",
        fusion,
        "--negative-weight",
        str(neg),
        "--max-terms",
        str(terms),
        "--pool",
        str(pool),
        "--format",
        "json",
        "-q",
    ]
    if fusion != "rrf":
        cmd += ["--bm25-weight", str(w), "--saturation", str(s)]
    if fields:
        cmd += ["--field-weights", fields]
    if args.include_quarantined:
        cmd.append("--include-quarantined")
    cmd.append("--per-query")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    mode = json.loads(out)["modes"][0]
    ranks = {q: r for q, r, _ in mode["per_query"]}
    hit = mode["metrics"]["hit"]  # hit@1, @3, @5, @10
    plain = (hit[0], hit[2], hit[3], mode["metrics"]["mrr10"])
    m = metrics(ranks, args.weights)
    return {
        "fusion": fusion,
        "bm25_weight": w,
        "saturation": s,
        "negative_weight": neg,
        "max_terms": terms,
        "pool": pool,
        "field_weights": fields or "default",
        "default": setting == DEFAULT,
        "hit1": m[0],
        "hit5": m[1],
        "hit10": m[2],
        "mrr10": m[3],
        "plain": plain,
    }


def metrics(
    ranks: dict[str, int | None], weights: dict[str, float]
) -> tuple[float, ...]:
    """Weighted hit@1, hit@5, hit@10 and MRR@10 of first-gold ranks (None: not in the first 10)."""
    total = sum(weights[q] for q in ranks)
    out = []
    for f in (
        lambda r: r == 1,
        lambda r: r <= 5,
        lambda r: r <= 10,
        lambda r: 1.0 / r,
    ):
        out.append(sum(weights[q] * f(r) for q, r in ranks.items() if r) / total)
    return tuple(out)


def class_weights(path: str) -> dict[str, float]:
    """Each query 1 / (its overlap class's size × the number of classes); 1 without classes."""
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    sizes: dict[str, int] = {}
    for r in rows:
        sizes[r.get("overlap", "")] = sizes.get(r.get("overlap", ""), 0) + 1
    return {
        r["id"]: len(rows) / (sizes[r.get("overlap", "")] * len(sizes)) for r in rows
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("queries")
    p.add_argument("--index", required=True)
    p.add_argument("--grid", choices=["fusion", "fields"], default="fusion")
    p.add_argument("--skg", default="target/fast/skg")
    p.add_argument("--include-quarantined", action="store_true")
    p.add_argument("--json", help="also write the rows here")
    args = p.parse_args()
    args.weights = class_weights(args.queries)
    settings = grid() if args.grid == "fusion" else fields_grid()
    rows = []
    for i, setting in enumerate(settings, 1):
        rows.append(run(args, setting))
        r = rows[-1]
        print(
            f"[{i}/{len(settings)}] {setting}: MRR@10 {r['mrr10']:.3f}", file=sys.stderr
        )
    rows.sort(key=lambda r: (-r["mrr10"], -r["hit1"], not r["default"]))
    print(
        "| fusion | W | S | neg | terms | pool | fields "
        "| balanced hit@1 / @5 / @10 / MRR@10 | plain |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        mark = " (default)" if r["default"] else ""
        print(
            f"| {r['fusion']}{mark} | {r['bm25_weight']} | {r['saturation']} | "
            f"{r['negative_weight']} | {r['max_terms']} | {r['pool']} | "
            f"{r['field_weights']} | {r['hit1']:.3f} / "
            f"{r['hit5']:.3f} / {r['hit10']:.3f} / {r['mrr10']:.3f} | "
            + " / ".join(f"{x:.3f}" for x in r["plain"])
            + " |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
