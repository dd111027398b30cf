"""Reference sentence embeddings for skg's parity test, computed independently of Rust.

Runs the same ONNX model with Python onnxruntime, tokenizes with HF `tokenizers` (max length 256,
as sentence-transformers' all-MiniLM-L6-v2), mean-pools `last_hidden_state` over the attention
mask and L2-normalizes: the sentence-transformers recipe. Each sentence runs alone (one
inference call, no padding), as skg runs it: the model's activations are quantized per call. Writes
tests/fixtures/embeddings/reference.json (the packages graph, model.onnx) or, with `--tools`,
reference-tools.json (the tool catalogs' graph, model-tools.onnx). Usage (once, in a venv with
onnxruntime, tokenizers, numpy):

    python scripts/embedding-reference.py "$(scripts/fetch-model.sh)" > tests/fixtures/embeddings/reference.json
    python scripts/embedding-reference.py "$(scripts/fetch-model.sh)" --tools > tests/fixtures/embeddings/reference-tools.json
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


GRAPHS = {
    False: (
        "model.onnx",
        "all-MiniLM-L6-v2+minilm-tasks-1 (models/minilm-tasks-1/model.onnx: dynamic int8 per channel)",
    ),
    True: (
        "model-tools.onnx",
        "all-MiniLM-L6-v2+minilm-tools-1 (models/minilm-tools-1/model.onnx, installed as model-tools.onnx: dynamic int8 per channel)",
    ),
}


def main() -> None:
    model_dir = sys.argv[1]
    graph, described = GRAPHS["--tools" in sys.argv[2:]]
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    tok.no_padding()  # the shipped tokenizer.json pads to 128; one sentence per call needs none
    sess = ort.InferenceSession(
        os.path.join(model_dir, graph), providers=["CPUExecutionProvider"]
    )
    pooled = []
    for sentence in SENTENCES:
        enc = tok.encode(sentence)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        feeds = {
            "input_ids": ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(ids),
        }
        hidden = sess.run(["last_hidden_state"], feeds)[0][0]
        m = mask[0][:, None].astype(np.float32)
        v = (hidden * m).sum(axis=0) / m.sum()
        pooled.append(v / np.linalg.norm(v))
    out = {
        "model": f"{described}, one sentence per call, mean pooling, L2-normalized",
        "generator": f"onnxruntime {ort.__version__} (Python), tokenizers, numpy",
        "sentences": [
            {"text": s, "vector": [round(float(x), 6) for x in v]}
            for s, v in zip(SENTENCES, pooled)
        ],
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
