"""What each step of scripts/optimize-model.py buys: speed, and how far the vectors move.

The graph skg shipped until 2026-12-02. Derives every intermediate graph from the packaged file
(source-model.onnx in the model folder that fetch-model.sh of that date installed) and measures, on one intra-op thread (skg's sessions run one thread each):
- query latency: the corpus dev queries one at a time (p50 / p95 ms, tokenization included);
- texts per second for 256- and 80-token texts, one text per call;
- how far vectors move from the packaged graph's (cosine, mean and min over the queries);
- whether a vector depends on its batch-mates (max |alone − batched with a long text|).

Usage (in a venv with scripts/model-requirements.txt and `tokenizers`):
    python scripts/model-bench.py "$(scripts/fetch-model.sh)" ../shared/bench/queries_dev.jsonl
"""

import importlib.util
import json
import os
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
from skg_vectors import hidden_states, mean_pool
from tokenizers import Tokenizer

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "optimize_model", os.path.join(here, "optimize-model.py")
)
opt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(opt)

VARIANTS = [
    ("packaged (int8 storage, fp32 compute)", None),
    ("+ weights folded", {"unguard": False, "fuse": False, "quantize": False}),
    ("+ NaN guards dropped", {"unguard": True, "fuse": False, "quantize": False}),
    ("+ attention fused", {"unguard": True, "fuse": True, "quantize": False}),
    ("+ dynamic int8 (shipped)", {"unguard": True, "fuse": True, "quantize": True}),
    (
        "dynamic int8 without the fusion",
        {"unguard": True, "fuse": False, "quantize": True},
    ),
]


def session(path: str) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def embed(sess, tok, texts):
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    return mean_pool(hidden_states(sess, ids, mask), mask)


def main() -> None:
    model_dir, queries_file = sys.argv[1], sys.argv[2]
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    tok.enable_padding()  # batch longest; a single text gets none
    with open(queries_file) as f:
        queries = [json.loads(line)["query"] for line in f]
    long_text = " ".join(queries) * 3
    rng = np.random.default_rng(20261202)
    print(
        "| graph | query p50 / p95 ms | 256-token texts/s | 80-token texts/s | cosine to packaged (mean / min) | max change from batch-mates |"
    )
    print("|---|---|---|---|---|---|")
    ref = None
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in VARIANTS:
            path = os.path.join(model_dir, "source-model.onnx")
            if flags is not None:
                path = os.path.join(tmp, "m.onnx")
                opt.derive(os.path.join(model_dir, "source-model.onnx"), path, **flags)
            sess = session(path)
            alone = np.array([embed(sess, tok, [q])[0] for q in queries])
            ref = alone if ref is None else ref
            cos = (alone * ref).sum(1)
            batched = embed(sess, tok, queries[:16] + [long_text])[:-1]
            dep = np.abs(batched - alone[:16]).max()
            ms = []
            for q in queries * 2:
                t = time.perf_counter()
                embed(sess, tok, [q])
                ms.append((time.perf_counter() - t) * 1000)
            rates = []
            for n in (256, 80):
                ids = rng.integers(1000, 20000, (1, n), dtype=np.int64)
                feeds = {
                    "input_ids": ids,
                    "attention_mask": np.ones_like(ids),
                    "token_type_ids": np.zeros_like(ids),
                }
                sess.run(None, feeds)
                t = time.perf_counter()
                reps = 20 if n == 256 else 60
                for _ in range(reps):
                    sess.run(None, feeds)
                rates.append(reps / (time.perf_counter() - t))
            print(
                f"| {name} | {np.percentile(ms, 50):.2f} / {np.percentile(ms, 95):.2f} | {rates[0]:.1f} | {rates[1]:.1f} "
                f"| {cos.mean():.4f} / {cos.min():.4f} | {dep:.1e} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
