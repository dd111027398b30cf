#!/usr/bin/env python3
"""Fusion weighted per query by which ranking looks sure of its first answer (measured, not adopted).

Reads the candidate files `skg eval QUERIES --mode hybrid --candidates NAME.jsonl` writes (every
query's fused candidates with their own BM25 score and cosine) and re-ranks the candidates:

* `shipped`: the shipped adaptive mix, recomputed from the file (w · BM25 / best + (1 − w) ·
  cosine): it must give `skg eval`'s figures, which checks the reading;
* `which`: query-performance prediction — a logistic regression, fitted on the training sets'
  queries where exactly one ranking has a gold skill first, predicts from the query's BM25
  margin ((first − second) / first), cosine margin (first − second) and the two rankings' overlap
  in their first ten whether BM25 is the one that is right; the query's BM25 weight becomes
  w_adaptive / 0.3 · (lo + (hi − lo) · p);
* `softmax`: each ranking's scores as a softmax over the candidates (temperatures Tb, Td), mixed
  λ · w_adaptive / 0.3 : rest — a ranking with a sure first answer puts more mass on it.
* `interleave`: the fused first k, then BM25's and dense's first answers where the fusion left
  them out, then the rest of the fused order — each ranking's best guess kept in the first five
  (stop 47). Also counted: how often a ranking's first answer is outside the fused first five,
  and how often it is a gold skill then.

usage: scripts/qpp-fusion.py TRAIN[,TRAIN…] NAME=FILE.jsonl [NAME=FILE.jsonl …]
  TRAIN: names of the files `which` is fitted on; every file is evaluated with each variant.
Prints hit@1 / hit@5 / MRR@10 per file and variant (stdlib only).
"""

import json
import math
import statistics
import sys

SHIPPED_MAX = 0.3  # skg_index::Fusion::MAX_BM25


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def metrics(ranks):
    n = max(1, len(ranks))
    hit1 = sum(1 for r in ranks if r is not None and r <= 1) / n
    hit5 = sum(1 for r in ranks if r is not None and r <= 5) / n
    mrr = sum(1 / r for r in ranks if r is not None and r <= 10) / n
    return f"{hit1:.3f} / {hit5:.3f} / {mrr:.3f}"


def first_gold(order, gold):
    for i, skill in enumerate(order[:10]):
        if skill in gold:
            return i + 1
    return None


def evaluate(records, rank):
    return metrics([first_gold(rank(r), set(r["gold"])) for r in records])


def adaptive_share(r):
    """The shipped weight over its largest value: how much lexical evidence the query found."""
    return (r["bm25_weight"] or 0.0) / SHIPPED_MAX


def mixed(r, w):
    cands = r["candidates"]
    best = max([c["bm25_counted"] for c in cands] + [0.0])
    scored = [
        (
            w * (min(1.0, max(0.0, c["bm25_counted"] / best)) if best > 0 else 0.0)
            + (1 - w) * c["cosine"],
            c["skill"],
        )
        for c in cands
    ]
    # Ties keep the file's order (Python's sort is stable).
    return [s for _, s in sorted(scored, key=lambda x: -x[0])]


def shipped(r):
    return mixed(r, r["bm25_weight"] or 0.0)


def tops(r, key):
    return sorted(r["candidates"], key=lambda c: (-c[key], c["skill"]))


def features(r):
    b, d = tops(r, "bm25"), tops(r, "cosine")
    mb = (
        (b[0]["bm25"] - b[1]["bm25"]) / b[0]["bm25"]
        if len(b) > 1 and b[0]["bm25"] > 0
        else 0.0
    )
    md = d[0]["cosine"] - d[1]["cosine"] if len(d) > 1 else 0.0
    overlap = len({c["skill"] for c in b[:10]} & {c["skill"] for c in d[:10]}) / 10
    return [mb, 10 * md, overlap]


def fit_which(records):
    """Logistic regression (L2 0.1, standardized features, gradient descent) on the queries where
    exactly one ranking has a gold skill first: 1 when it is BM25's."""
    x, y = [], []
    for r in records:
        gold = set(r["gold"])
        b, d = tops(r, "bm25"), tops(r, "cosine")
        if not b or not d or b[0]["bm25"] <= 0:
            continue
        b_right, d_right = b[0]["skill"] in gold, d[0]["skill"] in gold
        if b_right != d_right:
            x.append(features(r))
            y.append(1.0 if b_right else 0.0)
    n, m = len(x), 3
    mean = [sum(row[j] for row in x) / n for j in range(m)]
    sd = [
        max(1e-6, (sum((row[j] - mean[j]) ** 2 for row in x) / n) ** 0.5)
        for j in range(m)
    ]
    z = [[(row[j] - mean[j]) / sd[j] for j in range(m)] for row in x]
    w, b0 = [0.0] * m, 0.0
    for _ in range(3000):
        gw, gb = [0.0] * m, 0.0
        for zi, yi in zip(z, y):
            p = 1 / (1 + math.exp(-(b0 + sum(a * c for a, c in zip(w, zi)))))
            for j in range(m):
                gw[j] += (p - yi) * zi[j]
            gb += p - yi
        for j in range(m):
            w[j] -= 0.1 * (gw[j] / n + 0.1 * w[j])
        b0 -= 0.1 * gb / n

    def prob(r):
        f = features(r)
        t = b0 + sum(a * (v - u) / s for a, v, u, s in zip(w, f, mean, sd))
        return 1 / (1 + math.exp(-t))

    return prob, n


def which(prob, lo, hi):
    return lambda r: mixed(r, adaptive_share(r) * (lo + (hi - lo) * prob(r)))


def softmax(tb, td, lam):
    def rank(r):
        cands = r["candidates"]
        best = max([c["bm25_counted"] for c in cands] + [0.0])
        if best <= 0:
            return [c["skill"] for c in sorted(cands, key=lambda c: -c["cosine"])]
        bn = [min(1.0, max(0.0, c["bm25_counted"] / best)) for c in cands]
        cs = [c["cosine"] for c in cands]
        eb = [math.exp((v - max(bn)) / tb) for v in bn]
        ed = [math.exp((v - max(cs)) / td) for v in cs]
        zb, zd = sum(eb), sum(ed)
        w = adaptive_share(r) * lam
        scored = [
            (w * a / zb + (1 - w) * d / zd, c["skill"])
            for a, d, c in zip(eb, ed, cands)
        ]
        return [s for _, s in sorted(scored, key=lambda x: -x[0])]

    return rank


def first_answer(r, key):
    """A ranking's first answer among the candidates: none when it scored none of them (BM25
    gives 0 to a skill outside its cut; ties fall to the skill's name, not BM25's own order)."""
    ranked = tops(r, key)
    return ranked[0]["skill"] if ranked and ranked[0][key] > 0 else None


def interleave(keep, sources):
    """The fused first `keep`, then each source ranking's first answer not already listed."""

    def rank(r):
        fused = [c["skill"] for c in r["candidates"]]
        out = fused[:keep]
        for key in sources:
            first = first_answer(r, key)
            if first is not None and first not in out:
                out.append(first)
        return out + [s for s in fused if s not in out]

    return rank


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    train = sys.argv[1].split(",")
    sets = dict(arg.split("=", 1) for arg in sys.argv[2:])
    data = {name: load(path) for name, path in sets.items()}
    missing = [t for t in train if t not in data]
    if missing:
        sys.exit(f"training sets not given: {', '.join(missing)}")
    names = list(data)
    print("hit@1 / hit@5 / MRR@10 per set: " + " | ".join(names))

    def row(label, rank):
        print(f"{label:34} " + " | ".join(evaluate(data[n], rank) for n in names))

    row(
        "candidates as listed (skg eval)",
        lambda r: [c["skill"] for c in r["candidates"]],
    )
    row("shipped adaptive mix, recomputed", shipped)
    prob, n = fit_which([r for t in train for r in data[t]])
    print(
        f"`which` fitted on {'+'.join(train)}: {n} queries where one ranking alone is right"
    )
    for lo, hi in [(0.2, 0.4), (0.1, 0.5), (0.0, 0.6)]:
        row(f"which, w in [{lo}, {hi}]", which(prob, lo, hi))
    for keep, sources in [(3, ("bm25", "cosine")), (4, ("bm25",)), (4, ("cosine",))]:
        row(f"interleave fused {keep} + {'+'.join(sources)}", interleave(keep, sources))
    for n in names:
        counts = []
        for key in ("bm25", "cosine"):
            out = gold = 0
            for r in data[n]:
                first = first_answer(r, key)
                if first is None:
                    continue
                if first not in [c["skill"] for c in r["candidates"][:5]]:
                    out += 1
                    gold += first in set(r["gold"])
            counts.append(f"{key} {out} ({gold} gold)")
        print(f"{n}: first answer outside the fused first five: " + ", ".join(counts))
    # The whole grid the docs' softmax rows come from (the best on dev is not the best elsewhere).
    for tb in (0.05, 0.1, 0.2):
        for td in (0.01, 0.02, 0.04):
            for lam in (0.3, 0.5, 0.7):
                row(f"softmax Tb {tb} Td {td} lambda {lam}", softmax(tb, td, lam))
    # Why a predictor looked worth trying: the margins where only one ranking has a gold first.
    print(
        "median BM25 margin / cosine margin where only BM25 | only dense has a gold first:"
    )
    for n in names:
        only = {True: [], False: []}
        for r in data[n]:
            b, d = tops(r, "bm25"), tops(r, "cosine")
            if len(b) < 2 or len(d) < 2 or b[0]["bm25"] <= 0:
                continue
            gold = set(r["gold"])
            if (b[0]["skill"] in gold) != (d[0]["skill"] in gold):
                only[b[0]["skill"] in gold].append(features(r))
        cells = [
            f"{statistics.median(f[0] for f in v):.3f} / "
            f"{statistics.median(f[1] / 10 for f in v):.4f} (n {len(v)})"
            if v
            else "-"
            for v in (only[True], only[False])
        ]
        print(f"  {n:10} " + " | ".join(cells))


if __name__ == "__main__":
    main()
