"""How far can the signals canonicalize has tell a variant from a distinct pair?

Reads `skg canonicalize EXTRACT --pairs LABELS.csv --format json` (each labelled pair's signals)
and, optionally, an index folder of the same registries (`skg index build`) for two signals
canonicalize does not compute: the cosine of the two skills' L0 cards and of their L1 overviews
(the index's own vectors). For the pairs labelled variant or distinct, prints each signal's ROC
AUC (variant high), and the three-label accuracy canonicalize would reach if that one signal,
at the threshold best *for these very pairs*, decided variant against distinct while every
other decision stayed as it is — a ceiling tuned on the test, not a method. Then the same for
the best pair of signals on a grid.

Usage:
    skg canonicalize EXTRACT --pairs ../shared/labels/dup_pairs_dev.csv --format json > pairs.json
    python3 scripts/variant-signals.py pairs.json [INDEX_FOLDER]
"""

import itertools
import json
import sys


def auc(pos: list[float], neg: list[float]) -> float:
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def card_cosines(index: str) -> dict[str, dict[int, list[float]]]:
    """Per skill (`registry folder/path`): its L0 and L1 vectors from the index."""
    from skg_vectors import IndexVectors

    ix = IndexVectors(index)
    out: dict[str, dict[int, list[float]]] = {}
    for skill, level, v in zip(ix.row_skill, ix.row_level, ix.vectors):
        out.setdefault(ix.gold_key(int(skill)), {})[int(level)] = v
    return out


def main() -> None:
    with open(sys.argv[1]) as f:
        rows = json.load(f)["pairs"]["rows"]
    vectors = card_cosines(sys.argv[2]) if len(sys.argv) > 2 else {}
    for r in rows:
        sig = r["signals"] or {}
        r["x"] = {
            "desc_cosine": sig.get("desc_cosine", 0.0),
            "desc_jaccard": sig.get("desc_jaccard", 0.0),
            "name_similarity": sig.get("name_similarity", 0.0),
            "body_jaccard": sig.get("body_jaccard", 0.0),
            "containment": sig.get("containment", 0.0),
        }
        a, b = vectors.get(r["a"], {}), vectors.get(r["b"], {})
        for level, name in ((0, "card_cosine"), (1, "overview_cosine")):
            if level in a and level in b:
                r["x"][name] = float(a[level] @ b[level])
    n = len(rows)
    fixed = sum(
        r["label"] == r["decision"]
        for r in rows
        if r["label"] == "duplicate" or r["decision"] == "duplicate"
    )
    open_rows = [
        r for r in rows if r["label"] != "duplicate" and r["decision"] != "duplicate"
    ]
    now = fixed + sum(r["label"] == r["decision"] for r in open_rows)
    names = sorted({k for r in open_rows for k in r["x"]})
    print(
        f"{n} pairs; {len(open_rows)} labelled variant/distinct and not merged; "
        f"three-label accuracy now {now / n:.3f}"
    )
    print(f"{'signal':18} {'AUC':>6} {'ceiling':>8}")

    def best(score) -> float:
        xs = sorted({score(r) for r in open_rows})
        return max(
            sum((score(r) >= t) == (r["label"] == "variant") for r in open_rows)
            for t in xs + [9.0]
        )

    for k in names:
        have = [r for r in open_rows if k in r["x"]]
        pos = [r["x"][k] for r in have if r["label"] == "variant"]
        neg = [r["x"][k] for r in have if r["label"] == "distinct"]
        ceiling = (fixed + best(lambda r, k=k: r["x"].get(k, 0.0))) / n
        print(f"{k:18} {auc(pos, neg):6.3f} {ceiling:8.3f}")
    top = (0.0, "")
    for k1, k2 in itertools.combinations(names, 2):
        for w in (0.25, 0.5, 0.75):
            c = best(
                lambda r, k1=k1, k2=k2, w=w: (
                    w * r["x"].get(k1, 0.0) + (1 - w) * r["x"].get(k2, 0.0)
                )
            )
            top = max(top, (c, f"{w} x {k1} + {1 - w} x {k2}"))
    print(
        f"best two-signal mix on the grid: {top[1]} → ceiling {(fixed + top[0]) / n:.3f}"
    )


if __name__ == "__main__":
    main()
