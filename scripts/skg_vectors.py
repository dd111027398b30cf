"""What the measurement scripts share: skg's query embedder, and an index folder's vectors.

- `query_model(model_dir)`: the tokenizer and ONNX session as skg runs them for one text.
- `embedder(model_dir)`: embeds a text as skg does (`skg_embed`): one text per inference call,
  no padding, truncated at 256 tokens, mean pooling over `last_hidden_state`, L2-normalized.
  (`scripts/embedding-reference.py` computes the parity fixture independently, on purpose.)
- `mean_pool(hidden, mask)`: the same pooling over a padded batch (benchmarks, export checks).
- `hidden_states(session, ids, mask)`: a model's `last_hidden_state` for token ids and their
  attention mask (token types all 0, fed when the graph takes them).
- `IndexVectors(folder)`: an index folder as `skg index build` writes it — `skills.ndjson`,
  `documents.ndjson`, `vectors.bin` (rows of a little-endian u32 document id and `dim` f32s,
  `dim` from `manifest.json`) — with each row's skill and level.

Imported by scripts in this folder (run as `python3 scripts/<name>.py`, which puts the folder on
the import path); needs numpy, onnxruntime and tokenizers.
"""

import json
import os
from collections.abc import Callable

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

DEFAULT_MODEL_DIR = os.path.expanduser("~/.cache/skg/models/all-minilm-l6-v2-int8")


def query_model(
    model_dir: str = DEFAULT_MODEL_DIR,
) -> tuple[Tokenizer, ort.InferenceSession]:
    """The tokenizer and graph as skg runs them for one text: no padding, 256 tokens at most,
    one intra-op thread."""
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(256)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), options)
    return tok, session


def embedder(model_dir: str = DEFAULT_MODEL_DIR) -> Callable[[str], np.ndarray]:
    """A function text → its L2-normalized embedding, as skg computes it."""
    tok, session = query_model(model_dir)

    def embed(text: str) -> np.ndarray:
        e = tok.encode(text)
        ids = np.array([e.ids], dtype=np.int64)
        mask = np.array([e.attention_mask], dtype=np.int64)
        v = hidden_states(session, ids, mask)[0].mean(0)
        return v / np.linalg.norm(v)

    return embed


def hidden_states(
    session: ort.InferenceSession, ids: np.ndarray, mask: np.ndarray
) -> np.ndarray:
    """`last_hidden_state` [batch, seq, dim] of token ids and attention mask [batch, seq]."""
    feed = {"input_ids": ids, "attention_mask": mask}
    if any(i.name == "token_type_ids" for i in session.get_inputs()):
        feed["token_type_ids"] = np.zeros_like(ids)
    return session.run(None, feed)[0]


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A padded batch's sentence vectors: `last_hidden_state` [batch, seq, dim] averaged over
    the attention mask [batch, seq], L2-normalized (the sentence-transformers recipe)."""
    m = mask[..., None].astype(np.float32)
    v = (hidden * m).sum(1) / m.sum(1)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def gold_key(skill: dict) -> str:
    """How judged queries and labelled pairs name a skill row (`skills.ndjson` of an index or
    an audit): `<registry folder>/<path>`."""
    return skill["registry"].replace("/", "__") + "/" + skill["path"]


def read_ndjson(path: str) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f]


class IndexVectors:
    """An index folder's skills, documents and dense rows."""

    def __init__(self, folder: str) -> None:
        with open(os.path.join(folder, "manifest.json")) as f:
            dim = json.load(f)["dim"]
        self.skills = read_ndjson(os.path.join(folder, "skills.ndjson"))
        self.documents = read_ndjson(os.path.join(folder, "documents.ndjson"))
        raw = np.fromfile(os.path.join(folder, "vectors.bin"), dtype=np.uint8)
        raw = raw.reshape(-1, 4 + 4 * dim)
        self.row_doc = raw[:, :4].copy().view(np.uint32)[:, 0]
        self.vectors = raw[:, 4:].copy().view(np.float32)
        self.row_skill = np.array([self.documents[d]["skill"] for d in self.row_doc])
        self.row_level = np.array([self.documents[d]["level"] for d in self.row_doc])
        # Every name `skg eval` resolves a gold id by.
        self.key: dict[str, int] = {}
        for i, sk in enumerate(self.skills):
            for k in (
                sk["name"],
                sk["id"],
                sk["registry"] + "/" + sk["path"],
                self.gold_key(i),
            ):
                self.key[k] = i

    def gold_key(self, skill: int) -> str:
        """How judged queries and labelled pairs name a skill: `<registry folder>/<path>`."""
        return gold_key(self.skills[skill])

    def canonical(self, i: int) -> int:
        """A copy folded onto its canonical, as `skg eval` folds it."""
        alias = self.skills[i].get("alias_of")
        return self.key.get(alias, i) if alias else i

    def judged(self, queries: str) -> list[tuple[str, set[int]]]:
        """Judged queries (JSONL `{query, gold[]}`) with their gold skills, folded; a query
        whose gold ids are all unknown here is left out."""
        out = []
        for q in read_ndjson(queries):
            gold = {self.canonical(self.key[g]) for g in q["gold"] if g in self.key}
            if gold:
                out.append((q["query"], gold))
        return out

    def best_per_skill(self, row_scores: np.ndarray) -> np.ndarray:
        """Each skill's best row score (-9 for a skill without rows)."""
        best = np.full(len(self.skills), -9.0)
        np.maximum.at(best, self.row_skill, row_scores)
        return best

    def ranking(self, skill_scores: np.ndarray, n: int = 10) -> list[int]:
        """The first `n` distinct canonical skills by score."""
        ranked: list[int] = []
        for i in np.argsort(-skill_scores, kind="stable"):
            c = self.canonical(int(i))
            if c not in ranked:
                ranked.append(c)
                if len(ranked) == n:
                    break
        return ranked
