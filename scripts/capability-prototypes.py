"""Embedding-prototype evidence for capability types, measured on the hand-labelled sample.

Each type of the taxonomy becomes a prototype vector: the mean of its "name: definition" and its
examples, embedded with skg's model (one text per call, mean pooling, L2-normalized, as skg
embeds). Each labelled skill is embedded as canonicalize embeds it ("name: description"), and
its nearest prototype is its type. Prints accuracy (and "label or its `also`") for the lexical
classifier extract ships, each prototype alone, and the lexical type with the prototype's where
the lexical one is `unknown`. A design measurement, not part of skg's build: usage (in a venv
with onnxruntime, tokenizers and numpy, as scripts/embedding-reference.py):

    python scripts/capability-prototypes.py "$(scripts/fetch-model.sh)" <extract folder> \
        crates/skg-extract/capabilities/v1.toml labels/capabilities-v1.csv
"""

import csv
import json
import os
import sys
import tomllib

import numpy as np
from skg_vectors import embedder


def main():
    model_dir, extract, taxonomy, labels_csv = sys.argv[1:5]
    embed = embedder(model_dir)
    with open(taxonomy, "rb") as f:
        types = tomllib.load(f)["type"]
    ids = [t["id"] for t in types]
    skills = {}
    with open(os.path.join(extract, "skills.ndjson")) as f:
        for line in f:
            s = json.loads(line)
            skills[(s["registry"], s["path"].rsplit("/", 1)[0])] = s
    with open(labels_csv) as f:
        rows = [(r, skills.get((r["registry"], r["path"]))) for r in csv.DictReader(f)]
    missing = [r["path"] for r, s in rows if s is None]
    if missing:
        sys.exit(f"{len(missing)} labelled skills not in {extract}: {missing[:3]}")
    gold = [r["type"] for r, _ in rows]
    also = [set((r["also"] or "").split(";")) for r, _ in rows]
    lexical = [s["capability"] for _, s in rows]
    vectors = np.stack(
        [embed(f"{s['name']}: {s.get('description') or ''}") for _, s in rows]
    )

    def accuracy(pred):
        exact = np.mean([p == g for p, g in zip(pred, gold)])
        loose = np.mean([p == g or p in a for p, g, a in zip(pred, gold, also)])
        return f"{exact:.3f} | {loose:.3f}"

    print(f"{len(rows)} labelled skills; accuracy | label or its `also`")
    print(f"lexical (extract's classifier)                 {accuracy(lexical)}")
    kinds = {
        "name: definition": lambda t: [f"{t['name']}: {t['definition']}"],
        "examples": lambda t: t["examples"],
        "name: definition + examples": lambda t: (
            [f"{t['name']}: {t['definition']}"] + t["examples"]
        ),
    }
    for kind, texts in kinds.items():
        protos = np.stack([np.mean([embed(x) for x in texts(t)], 0) for t in types])
        protos /= np.linalg.norm(protos, axis=1, keepdims=True)
        nearest = [ids[i] for i in (vectors @ protos.T).argmax(1)]
        both = [lx if lx != "unknown" else p for lx, p in zip(lexical, nearest)]
        print(f"prototype {kind:<36} {accuracy(nearest)}")
        print(f"lexical, else prototype {kind:<22} {accuracy(both)}")


if __name__ == "__main__":
    main()
