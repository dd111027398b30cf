"""Unsupervised variants of skg's dense ranking, measured outside the product (issue 14).

Reads an index folder as `skg index build` writes it (`skills.ndjson`, `documents.ndjson`,
`vectors.bin`), embeds each judged query with the model skg runs (`model.onnx` of
`scripts/fetch-model.sh`'s folder: one text per call, mean pooling, L2-normalized, as
`skg_embed` does), ranks skills by their best row's cosine (copies folded onto their canonical,
as `skg eval` folds them) and prints dense hit@1 / hit@5 / MRR@10 for:

- `whole`: the query as one text (skg's dense side; reproduces `skg eval --mode dense`);
- query sentences (tasks that tell a story before they ask): each sentence of three or more
  words embedded apart, a skill scored by the best sentence (`max`), the mean of the whole's and
  the sentences' best (`mean`), the whole and the best sentence half and half (`whole+max`), or
  by the mean of all the vectors (`vmean`);
- isotropy post-processing of the catalog: vectors centred on the catalog mean (`center`), and
  the first D principal directions removed after centring (`abtt D`, "all-but-the-top");
- hubness reduction (CSLS): a skill's score minus lam x the mean cosine of its rows to their k
  nearest other rows (skills close to everything are pushed down).
- a skill's rows (card, overview, usage sections) combined otherwise than by the best one
  (stop 47): a soft maximum, `t · log Σ exp(cos / t)` (`rows lse t`), or the best row mixed with
  the rows' mean (`rows max+mean w`) — a skill several of whose rows match counts for more;
- with `--doc-sentences`: each skill's description split into sentences (three or more words),
  each embedded apart — a skill scored by the best of its rows and sentences (`docsent max`), or
  its best row mixed half and half with its best sentence (`docsent 0.5 max`) or its sentences'
  mean (`docsent 0.5 mean`): multi-vector cards, for descriptions that list several jobs.
- with `--idf AUDIT`: the query's token states pooled by weight instead of a plain mean (stop 46),
  the catalog's rows as they are: each token weighted by its IDF over the audit folder's
  documents (`documents.ndjson`, tokenized as the model tokenizes), `ln((N+1)/(df+1))`, to the
  power 0.5, 1 or 2 (`idf^p`), or by SIF's `a / (a + p(token))` (`sif a`); `[CLS]` and `[SEP]`
  take the mean weight of the other tokens.

Usage (a Python with onnxruntime, tokenizers and numpy; nothing is written):
    python3 scripts/dense-variants.py INDEX_FOLDER QUERIES.jsonl [MODEL_FOLDER] [--doc-sentences]
        [--idf AUDIT_FOLDER]
"""

import os
import re
import sys
from collections.abc import Callable

import numpy as np
from skg_vectors import (
    DEFAULT_MODEL_DIR,
    IndexVectors,
    embedder,
    hidden_states,
    query_model,
    read_ndjson,
)


class Catalog(IndexVectors):
    """An index folder's vectors, and where a query's first gold skill ranks."""

    def rank_of_gold(self, scores: np.ndarray, gold: set) -> int | None:
        ranked = self.ranking(scores, 10)
        return next((r for r, c in enumerate(ranked) if c in gold), None)


def sentences(text: str) -> list[str]:
    parts = (p.strip() for p in re.split(r"(?<=[.!?])\s+", text))
    return [p for p in parts if len(p.split()) >= 3]


def normed(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def weighted_pooling(
    model_dir: str, audit: str
) -> Callable[[str], dict[str, np.ndarray]]:
    """A function query → its vectors pooled by each token weighting (see the module doc)."""
    tok, session = query_model(model_dir)
    texts = [d["text"] for d in read_ndjson(os.path.join(audit, "documents.ndjson"))]
    df = np.zeros(tok.get_vocab_size())
    for i in range(0, len(texts), 2000):
        for e in tok.encode_batch(texts[i : i + 2000]):
            df[np.unique(e.ids)] += 1
    n = len(texts)
    idf = np.log((n + 1) / (df + 1))
    special = {tok.token_to_id(t) for t in ("[CLS]", "[SEP]")}

    def pooled(text: str) -> dict[str, np.ndarray]:
        e = tok.encode(text)
        ids = np.array(e.ids)
        h = hidden_states(
            session, np.array([e.ids]), np.array([e.attention_mask], dtype=np.int64)
        )[0]
        marks = np.isin(ids, list(special))
        weights = {f"idf^{p}": idf[ids] ** p for p in (0.5, 1, 2)}
        for a in (1e-3, 1e-4):
            weights[f"sif {a}"] = a / (a + (df[ids] + 1) / n)
        out = {}
        for name, w in weights.items():
            w = w.copy()
            w[marks] = w[~marks].mean() if (~marks).any() else 1.0
            out[name] = normed((h * w[:, None]).sum(0) / w.sum())
        return out

    return pooled


def rows_combined(
    cat: Catalog, row_scores: np.ndarray, best: np.ndarray
) -> dict[str, np.ndarray]:
    """Each skill's rows combined by a soft maximum or the best row mixed with their mean."""
    out = {}
    k = len(cat.skills)
    lifted = row_scores - best[cat.row_skill]
    for t in (0.01, 0.02, 0.05):
        acc = np.zeros(k)
        np.add.at(acc, cat.row_skill, np.exp(lifted / t))
        out[f"rows lse {t}"] = np.where(
            acc > 0, best + t * np.log(np.maximum(acc, 1e-30)), best
        )
    total, n = np.zeros(k), np.zeros(k)
    np.add.at(total, cat.row_skill, row_scores)
    np.add.at(n, cat.row_skill, 1)
    mean = np.where(n > 0, total / np.maximum(n, 1), best)
    for w in (0.2, 0.4):
        out[f"rows max+mean {w}"] = (1 - w) * best + w * mean
    return out


def main() -> None:
    argv = sys.argv[1:]
    audit = None
    if "--idf" in argv:
        at = argv.index("--idf")
        audit = argv[at + 1]
        del argv[at : at + 2]
    args = [a for a in argv if a != "--doc-sentences"]
    index, queries = args[:2]
    model_dir = args[2] if len(args) > 2 else DEFAULT_MODEL_DIR
    embed = embedder(model_dir)
    cat = Catalog(index)
    doc_rows, doc_skill = [], []
    if "--doc-sentences" in sys.argv:
        for i, s in enumerate(cat.skills):
            for p in sentences(s.get("description") or ""):
                doc_rows.append(embed(p))
                doc_skill.append(i)
    D, Dk = np.array(doc_rows), np.array(doc_skill, dtype=np.int64)
    judged = cat.judged(queries)
    whole = np.array([embed(text) for text, _ in judged])
    parts = [[embed(s) for s in sentences(text)] for text, _ in judged]
    pooled = weighted_pooling(model_dir, audit) if audit else None
    weighted = [pooled(text) for text, _ in judged] if pooled else []
    table: dict[str, list[float]] = {}

    def count(name: str, scores: np.ndarray, gold: set) -> None:
        r = cat.rank_of_gold(scores, gold)
        row = table.setdefault(name, [0.0, 0.0, 0.0])
        row[0] += r == 0
        row[1] += r is not None and r < 5
        row[2] += 1 / (r + 1) if r is not None else 0.0

    V = cat.vectors
    mu = V.mean(0)
    _, _, vt = np.linalg.svd(V - mu, full_matrices=False)
    spaces = {"whole": (V, whole), "center": (normed(V - mu), normed(whole - mu))}
    for d in (1, 2, 3, 5, 8):
        p = vt[:d]

        def strip(x: np.ndarray, p: np.ndarray = p) -> np.ndarray:
            return normed((x - mu) - ((x - mu) @ p.T) @ p)

        spaces[f"abtt {d}"] = (strip(V), strip(whole))
    hub = {}
    if len(V) <= 20000:
        sims = V @ V.T
        np.fill_diagonal(sims, -1.0)
        for k in (5, 10):
            per_row = np.sort(sims, 1)[:, -k:].mean(1)
            per_skill = np.full(len(cat.skills), 9.0)
            np.minimum.at(per_skill, cat.row_skill, per_row)
            hub[k] = per_skill
        del sims
    for qi, (_, gold) in enumerate(judged):
        for name, (vx, qx) in spaces.items():
            count(name, cat.best_per_skill(vx @ qx[qi]), gold)
        row_scores = V @ whole[qi]
        base = cat.best_per_skill(row_scores)
        for name, scores in rows_combined(cat, row_scores, base).items():
            count(name, scores, gold)
        for name, q in weighted[qi].items() if weighted else ():
            count("query pooled by " + name, cat.best_per_skill(V @ q), gold)
        for k, per_skill in hub.items():
            for lam in (0.25, 0.5):
                count(f"csls k{k} lam {lam}", base - lam * per_skill, gold)
        if len(parts[qi]) > 1:
            each = np.max([cat.best_per_skill(V @ s) for s in parts[qi]], 0)
            mean = np.mean([cat.best_per_skill(V @ s) for s in parts[qi]], 0)
            pooled = normed(np.mean([whole[qi], *parts[qi]], 0))
            variants = {
                "max": np.maximum(base, each),
                "mean": (base + mean) / 2,
                "vmean": cat.best_per_skill(V @ pooled),
                "whole+max": (base + each) / 2,
            }
        else:
            variants = dict.fromkeys(("max", "mean", "vmean", "whole+max"), base)
        for name, scores in variants.items():
            count("sentences " + name, scores, gold)
        if len(D):
            sims = D @ whole[qi]
            best = np.full(len(cat.skills), -9.0)
            np.maximum.at(best, Dk, sims)
            total, n = np.zeros(len(cat.skills)), np.zeros(len(cat.skills))
            np.add.at(total, Dk, sims)
            np.add.at(n, Dk, 1)
            has = n > 0
            mean = np.where(has, total / np.maximum(n, 1), 0.0)
            count("docsent max", np.maximum(base, best), gold)
            count("docsent 0.5 max", np.where(has, (base + best) / 2, base), gold)
            count("docsent 0.5 mean", np.where(has, (base + mean) / 2, base), gold)
    n = len(judged)
    multi = sum(len(p) > 1 for p in parts)
    print(
        f"{n} judged queries ({multi} of more than one sentence); dense hit@1 / hit@5 / MRR@10"
    )
    for name, (h1, h5, mrr) in table.items():
        print(f"{name:22} {h1 / n:.3f} {h5 / n:.3f} {mrr / n:.3f}")


if __name__ == "__main__":
    main()
