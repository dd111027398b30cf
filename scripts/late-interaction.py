"""Token-level late interaction over the fused candidates, measured outside the product (issue 14).

The dense side scores a skill by the cosine of two mean-pooled vectors: the query's and its best
row's (card, overview, usage sections). Mean pooling blurs which words matched; ColBERT-style
late interaction keeps every token: a row's score is the mean, over the query's tokens, of each
token's best cosine with any token of the row (`MaxSim`), and a skill takes its best row. The
shipped model was never trained for token matching, so this asks whether its token states carry
evidence the pooled vector loses — at query time it costs one dot product per query token and
candidate token (no second model): the candidates' token states would be stored with the index.

Reads the candidate files `skg eval … --mode hybrid --candidates FILE` writes (each query's
fused candidates with their fused score and cosine) and the audit folder the index was built
from (`documents.ndjson`: the rows skg embeds — L0 card, L1 overview cut at 768 characters,
usage sections), embeds the first `--depth` candidates' rows and the queries with the model skg
runs (`model.onnx` of `scripts/fetch-model.sh`'s folder; one text per call, 256 tokens at most,
`[CLS]`/`[SEP]` left out of the matching), and prints hit@1 / hit@5 / MRR@10 over the candidates
for:

- `fused`: the candidates as listed (skg's ranking);
- `maxsim alone`: the first `--depth` reordered by late interaction only;
- `z(fused) + w z(maxsim)`: the first `--depth` reordered by the fused score's z-score plus w
  times late interaction's (z over the query's first `--depth`), the rest as listed;
- `z(fused) + w z(cos)`: the same with the pooled cosine in its place (a control: how much of a
  change any re-weighting of the dense evidence makes).

Each row counts the queries it wins and loses against `fused` at hit@1 and hit@5; the last line
pools every set's hit@1 wins and losses at `--weight` into a two-sided sign test.

`--rows card` keeps only each skill's card, `card+overview` its card and overview (default
`all`). `--cost` prints instead one line per way of storing the rows' token states cheaply, at
`--weight`: the card alone; token codes in int8 (one scale per token); the states projected on
their first 128 or 64 principal directions (fitted on the candidates' own tokens), and in int8
after that; each row's
tokens pooled into 16 or 8 k-means centroids; the first 32 tokens of each row; a shallower
second stage (20 or 10 candidates).

`--query-weights` prints instead the stage at `--weight` with each query token weighted by its
rarity over the catalog's cards (IDF of its token id, to the power 0, 0.5, 1 or 2, or only the
tokens of IDF 1 or more), each row against the uniform weights the product uses (stop 62).

Usage (a Python with onnxruntime, tokenizers and numpy; nothing is written):
    python3 scripts/late-interaction.py AUDIT_FOLDER CANDIDATES.jsonl... [--model DIR]
        [--depth 30] [--rows all|card|card+overview] [--weight 0.3] [--cost | --query-weights]
"""

import argparse
import math
import os
import sys
import time

import numpy as np
from skg_vectors import DEFAULT_MODEL_DIR, hidden_states, query_model, read_ndjson

OVERVIEW_CUT = 768
WEIGHTS = (0.2, 0.3, 0.5, 1.0)
KINDS = {
    "all": {"card", "overview", "usage"},
    "card": {"card"},
    "card+overview": {"card", "overview"},
}
# The ways of storing token states measured by `--cost` (all over the card alone).
COST = {
    "card, f32": {},
    "card, int8": {"int8": True},
    "card, pca 128": {"dims": 128},
    "card, pca 64": {"dims": 64},
    "card, pca 128 + int8": {"dims": 128, "int8": True},
    "card, pca 64 + int8": {"dims": 64, "int8": True},
    "card, pool 16": {"pool": 16},
    "card, pool 8": {"pool": 8},
    "card, first 32 tokens": {"max_tokens": 32},
    "card, depth 20": {"depth": 20},
    "card, depth 10": {"depth": 10},
}


def rows_of(audit: str, wanted: set[str], kinds: set[str]) -> dict[str, list[str]]:
    """The texts skg embeds for each wanted skill, of the kinds asked for: card, overview (cut),
    usage sections."""
    rows: dict[str, list[str]] = {}
    for d in read_ndjson(os.path.join(audit, "documents.ndjson")):
        if d["skill"] not in wanted:
            continue
        if d["level"] == 0:
            kind, text = "card", d["text"]
        elif d["level"] == 1:
            kind, text = "overview", d["text"][:OVERVIEW_CUT]
        elif d.get("role") == "when_to_use":
            kind, text = "usage", d["text"][:OVERVIEW_CUT]
        else:
            continue
        if kind in kinds:
            rows.setdefault(d["skill"], []).append(text)
    return rows


def kept(e) -> np.ndarray:
    """The tokens of an encoding that are matched: all but `[CLS]` and `[SEP]` (all, if that
    leaves none)."""
    special = np.array(e.special_tokens_mask, dtype=bool)
    return ~special if (~special).any() else np.ones_like(special)


def token_states(tok, session, text: str) -> np.ndarray:
    """A text's token states without `[CLS]` and `[SEP]`, each L2-normalized (one text per
    call, as skg embeds)."""
    e = tok.encode(text)
    ids = np.array([e.ids], dtype=np.int64)
    mask = np.array([e.attention_mask], dtype=np.int64)
    h = hidden_states(session, ids, mask)[0][kept(e)]
    return h / np.linalg.norm(h, axis=1, keepdims=True)


def token_ids(tok, text: str) -> np.ndarray:
    """The ids of the tokens `token_states` keeps, in the same order (no model run)."""
    e = tok.encode(text)
    return np.array(e.ids, dtype=np.int64)[kept(e)]


def maxsim(qv: np.ndarray, x: np.ndarray, w: np.ndarray | None = None) -> float:
    """Late interaction of query token states `qv` with a row's `x`: each query token's best
    cosine, averaged (or weighted by `w`, summing to 1)."""
    best = (qv @ x.astype(np.float32).T).max(1)
    return float(best.mean() if w is None else best @ w)


def card_idf(tok, audit: str) -> np.ndarray:
    """Each token id's inverse document frequency over every card of the audit (its L0
    documents, tokenized as the model tokenizes them, special tokens left out):
    `ln((N + 1) / (df + 1))`, a card counting each id once."""
    df = np.zeros(tok.get_vocab_size(), dtype=np.float64)
    n = 0
    for d in read_ndjson(os.path.join(audit, "documents.ndjson")):
        if d["level"] != 0:
            continue
        e = tok.encode(d["text"])
        ids = {i for i, sp in zip(e.ids, e.special_tokens_mask, strict=True) if not sp}
        df[list(ids)] += 1
        n += 1
    return np.log((n + 1) / (df + 1))


def normed(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def kmeans(x: np.ndarray, k: int, iters: int = 10) -> np.ndarray:
    """`k` unit centroids of a row's token states (seeded at evenly spaced tokens)."""
    if len(x) <= k:
        return x
    c = x[np.linspace(0, len(x) - 1, k).astype(int)].copy()
    for _ in range(iters):
        a = (x @ c.T).argmax(1)
        for j in range(k):
            if (a == j).any():
                c[j] = x[a == j].mean(0)
        c = normed(c)
    return c


class Storage:
    """A way of storing a row's token states (`--cost`), and the query's matching side."""

    def __init__(self, cfg: dict, sample: np.ndarray) -> None:
        self.cfg = cfg
        self.mean = sample.mean(0)
        self.axes = np.linalg.svd(sample - self.mean, full_matrices=False)[2]

    def project(self, x: np.ndarray) -> np.ndarray:
        dims = self.cfg.get("dims")
        return normed((x - self.mean) @ self.axes[:dims].T) if dims else x

    def row(self, x: np.ndarray) -> np.ndarray:
        x = x.astype(np.float32)[: self.cfg.get("max_tokens")]
        if self.cfg.get("pool"):
            x = kmeans(x, self.cfg["pool"])
        x = self.project(x)
        if self.cfg.get("int8"):
            scale = np.abs(x).max(1, keepdims=True) / 127
            x = np.round(x / scale) * scale
        return x


def zscore(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else x * 0.0


def gold_rank(order: list[int], skills: list[str], gold: set[str]) -> int:
    return next((r + 1 for r, j in enumerate(order) if skills[j] in gold), 999)


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test of `wins` against `losses` (ties left out)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def reorder(q: dict, late: dict[str, float], depth: int, score: str, w: float) -> int:
    """The gold's rank once the first `depth` candidates are reordered by `score`."""
    cands = q["candidates"]
    skills = [c["skill"] for c in cands]
    top = min(depth, len(cands))
    fused = np.array([c["score"] for c in cands[:top]], dtype=float)
    ms = np.array([late.get(s, -1.0) for s in skills[:top]])
    if score == "fused":
        order = list(range(len(cands)))
        return gold_rank(order, skills, set(q["gold"]))
    if score == "maxsim alone":
        mixed = ms
    elif score == "maxsim":
        mixed = zscore(fused) + w * zscore(ms)
    else:
        cos = np.array([c["cosine"] for c in cands[:top]], dtype=float)
        mixed = zscore(fused) + w * zscore(cos)
    order = [int(j) for j in np.argsort(-mixed, kind="stable")] + list(
        range(top, len(cands))
    )
    return gold_rank(order, skills, set(q["gold"]))


def summary(name: str, r: np.ndarray, base: np.ndarray) -> str:
    h1, h5 = np.mean(r == 1), np.mean(r <= 5)
    mrr = np.mean(np.where(r <= 10, 1.0 / r, 0.0))
    w1, l1 = np.sum((r == 1) & (base != 1)), np.sum((r != 1) & (base == 1))
    w5, l5 = np.sum((r <= 5) & (base > 5)), np.sum((r > 5) & (base <= 5))
    return f"{name:34s} {h1:.3f} / {h5:.3f} / {mrr:.3f}   hit@1 +{w1} -{l1}   hit@5 +{w5} -{l5}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("audit")
    ap.add_argument("candidates", nargs="+")
    ap.add_argument("--model", default=DEFAULT_MODEL_DIR)
    ap.add_argument("--depth", type=int, default=30)
    ap.add_argument("--rows", choices=sorted(KINDS), default="all")
    ap.add_argument("--weight", type=float, default=0.3)
    ap.add_argument("--cost", action="store_true")
    ap.add_argument(
        "--query-weights",
        action="store_true",
        help="instead: MaxSim's query tokens weighted by their IDF over the catalog's cards",
    )
    args = ap.parse_args()
    kinds = KINDS["card"] if args.cost else KINDS[args.rows]

    sets = {p: read_ndjson(p) for p in args.candidates}
    wanted = {
        c["skill"]
        for qs in sets.values()
        for q in qs
        for c in q["candidates"][: args.depth]
    }
    rows = rows_of(args.audit, wanted, kinds)
    tok, session = query_model(args.model)
    started = time.time()
    qstates = {
        p: [token_states(tok, session, q["query"]) for q in qs]
        for p, qs in sets.items()
    }
    states = {
        s: [token_states(tok, session, t).astype(np.float16) for t in texts]
        for s, texts in rows.items()
    }
    n_rows = sum(len(r) for r in states.values())
    n_tokens = sum(len(x) for r in states.values() for x in r)
    print(
        f"{n_rows} rows of {len(states)} skills embedded in {time.time() - started:.0f} s"
        f" ({n_tokens / max(len(states), 1):.0f} tokens a skill)",
        file=sys.stderr,
    )
    sample = np.concatenate(
        [x for r in list(states.values())[:1500] for x in r]
    ).astype(np.float32)

    def late_scores(cfg: dict) -> dict[str, list[dict[str, float]]]:
        """Each query's MaxSim score of each of its candidates (a skill takes its best row)."""
        storage = Storage(cfg, sample)
        stored = {s: [storage.row(x) for x in r] for s, r in states.items()}
        out: dict[str, list[dict[str, float]]] = {}
        for p, qs in sets.items():
            out[p] = []
            for q, qs_ in zip(qs, qstates[p], strict=True):
                qv = storage.project(qs_)
                late = {}
                for c in q["candidates"][: cfg.get("depth", args.depth)]:
                    xs = stored.get(c["skill"], [])
                    late[c["skill"]] = max((maxsim(qv, x) for x in xs), default=-1.0)
                out[p].append(late)
        return out

    if args.query_weights:
        query_weights(args, sets, qstates, states, tok)
        return

    if args.cost:
        for name, cfg in COST.items():
            late = late_scores(cfg)
            depth = cfg.get("depth", args.depth)
            line = [f"{name:24s}"]
            for p, qs in sets.items():
                r = np.array(
                    [
                        reorder(q, m, depth, "maxsim", args.weight)
                        for q, m in zip(qs, late[p], strict=True)
                    ]
                )
                b = np.array(
                    [
                        reorder(q, m, depth, "fused", 0)
                        for q, m in zip(qs, late[p], strict=True)
                    ]
                )
                w1, l1 = np.sum((r == 1) & (b != 1)), np.sum((r != 1) & (b == 1))
                mrr = np.mean(np.where(r <= 10, 1.0 / r, 0.0))
                line.append(
                    f"{os.path.basename(p)}: {np.mean(r == 1):.3f} / {np.mean(r <= 5):.3f}"
                    f" / {mrr:.3f} (+{w1} -{l1})"
                )
            print("   ".join(line), flush=True)
        return

    late = late_scores({})
    wins = losses = 0
    for p, qs in sets.items():
        ms = late[p]
        variants = {"fused": ("fused", 0.0), "maxsim alone": ("maxsim alone", 0.0)}
        variants |= {f"z(fused) + {w} z(maxsim)": ("maxsim", w) for w in WEIGHTS}
        variants |= {f"z(fused) + {w} z(cos) [control]": ("cos", w) for w in WEIGHTS}
        res = {
            name: np.array(
                [reorder(q, m, args.depth, how, w) for q, m in zip(qs, ms, strict=True)]
            )
            for name, (how, w) in variants.items()
        }
        print(
            f"== {p} ({len(qs)} queries, first {args.depth} reordered, rows: {args.rows})"
        )
        for name, r in res.items():
            print(summary(name, r, res["fused"]))
        chosen = np.array(
            [
                reorder(q, m, args.depth, "maxsim", args.weight)
                for q, m in zip(qs, ms, strict=True)
            ]
        )
        wins += int(np.sum((chosen == 1) & (res["fused"] != 1)))
        losses += int(np.sum((chosen != 1) & (res["fused"] == 1)))
    print(
        f"all sets, weight {args.weight}: hit@1 +{wins} -{losses},"
        f" two-sided sign test p = {sign_test(wins, losses):.4f}"
    )


def query_weights(args, sets, qstates, states, tok) -> None:
    """MaxSim with each query token weighted (`--query-weights`): the weighted mean of the
    tokens' best matches, `sum(w_i best_i) / sum(w_i)`, for IDF weights over the catalog's
    cards to the power 0 (uniform, the shipped stage), 0.5, 1 and 2, and uniform weights with
    the tokens of IDF under 1 (about a third of the cards or more) left out."""
    idf = card_idf(tok, args.audit)
    ids_of = {p: [token_ids(tok, q["query"]) for q in qs] for p, qs in sets.items()}
    weightings = {
        "uniform (shipped)": lambda i: np.ones(len(i)),
        "idf^0.5": lambda i: np.sqrt(idf[i]),
        "idf": lambda i: idf[i],
        "idf^2": lambda i: idf[i] ** 2,
        "uniform, idf >= 1 only": lambda i: (idf[i] >= 1.0).astype(float),
    }
    wins = {name: [0, 0] for name in weightings}
    for p, qs in sets.items():
        print(
            f"== {p} ({len(qs)} queries, first {args.depth} reordered, rows: {args.rows})"
        )
        base = np.array([reorder(q, {}, args.depth, "fused", 0) for q in qs])
        shipped = None
        for name, weigh in weightings.items():
            ranks = []
            for q, qv, ids in zip(qs, qstates[p], ids_of[p], strict=True):
                w = weigh(ids)
                w = w / w.sum() if w.sum() > 0 else np.ones(len(ids)) / len(ids)
                late = {}
                for c in q["candidates"][: args.depth]:
                    xs = states.get(c["skill"], [])
                    late[c["skill"]] = max((maxsim(qv, x, w) for x in xs), default=-1.0)
                ranks.append(reorder(q, late, args.depth, "maxsim", args.weight))
            r = np.array(ranks)
            if shipped is None:
                shipped = r
            print(summary(f"{name}, vs fused", r, base))
            print(summary(f"{name}, vs uniform", r, shipped))
            wins[name][0] += int(np.sum((r == 1) & (shipped != 1)))
            wins[name][1] += int(np.sum((r != 1) & (shipped == 1)))
    for name, (w, l) in wins.items():
        print(
            f"all sets, {name} against uniform: hit@1 +{w} -{l}, p = {sign_test(w, l):.4f}"
        )


if __name__ == "__main__":
    main()
