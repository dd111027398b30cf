"""Candidate targets for judged retrieval queries, by the protocol of the shared dev set
(../shared/bench/QUERIES.md, step 2): every SKILL.md's frontmatter read; kept when its
description has ≥ 40 characters and its body ≥ 1,200, and it is not an agentskillexchange stub;
each registry's list (sorted by path) shuffled once with the seed; the first 1.6 × quota + 1 taken
per registry (spares for the screening step). Skills the shared dev set uses (gold or acceptable)
are left out. Each target carries its 15 nearest skills by the Jaccard of their name +
description words: candidates for copies and equivalents, for the labeller to check.

  python3 scripts/query-sample.py ../shared --seed 2026 > targets.jsonl

labels/README.md ("queries-dev2-v1.jsonl") says how the second dev set was made from it."""

import argparse
import json
import os
import random
import re
import sys

import yaml

# Targets per registry: the shared dev set's quotas scaled to 100.
QUOTA = {
    "agentskillexchange__skills": 29,
    "openclaw__skills": 24,
    "sickn33__antigravity-awesome-skills": 13,
    "github__awesome-copilot": 11,
    "alirezarezvani__claude-skills": 10,
    "K-Dense-AI__claude-scientific-skills": 7,
    "anthropics__skills": 2,
    "obra__superpowers": 2,
    "openai__skills": 2,
}
STOP = {
    "a",
    "an",
    "the",
    "and",
    "or",
    "of",
    "to",
    "in",
    "on",
    "for",
    "with",
    "by",
    "from",
    "at",
    "as",
    "is",
    "are",
    "be",
    "this",
    "that",
    "it",
    "its",
    "into",
    "via",
    "using",
    "use",
    "your",
    "you",
    "when",
    "how",
    "what",
}
STUB = "No source-backed install or usage instructions"


def frontmatter(path):
    """(name, description, body), or None when the file has no readable frontmatter."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = re.match(r"^---\s*\n(.*?)\n---\s*\n?(.*)$", text, re.DOTALL)
    if not m:
        return None
    try:
        fm = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError:
        return None
    if not isinstance(fm, dict):
        return None
    return str(fm.get("name") or ""), str(fm.get("description") or ""), m.group(2)


def words(text):
    return {
        w
        for w in re.findall(r"[a-z0-9]+", text.lower())
        if w not in STOP and len(w) > 2
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shared", help="the shared folder (registries/, bench/)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument(
        "--exclude",
        action="append",
        default=[],
        help="another judged set (JSONL) whose labels are no candidates either (repeatable)",
    )
    args = ap.parse_args()
    root = os.path.join(args.shared, "registries")
    skills = []
    for reg in sorted(os.listdir(root)):
        d = os.path.join(root, reg)
        if not os.path.isdir(d):
            continue
        for dirpath, dirnames, files in os.walk(d):
            dirnames.sort()
            if "SKILL.md" in files:
                path = os.path.join(dirpath, "SKILL.md")
                fm = frontmatter(path)
                if fm:
                    skills.append((reg, os.path.relpath(path, root), *fm))
    dev = os.path.join(args.shared, "bench", "queries_dev.jsonl")
    taken = set()
    for judged in [dev, *args.exclude]:
        with open(judged, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    q = json.loads(line)
                    taken.update(q["gold"] + q.get("acceptable", []))
    bags = [(s[1], s[2], words(s[2] + " " + s[3])) for s in skills]
    rng = random.Random(args.seed)
    out = sys.stdout
    for reg, quota in QUOTA.items():
        ok = sorted(
            (
                s
                for s in skills
                if s[0] == reg
                and len(s[3]) >= 40
                and len(s[4]) >= 1200
                and STUB not in s[4]
                and s[1] not in taken
            ),
            key=lambda s: s[1],
        )
        rng.shuffle(ok)
        for s in ok[: int(quota * 1.6) + 1]:
            w = words(s[2] + " " + s[3])
            near = sorted(
                (
                    (len(w & x) / max(1, len(w | x)), p, n)
                    for p, n, x in bags
                    if p != s[1]
                ),
                reverse=True,
            )[:15]
            row = {
                "registry": reg,
                "path": s[1],
                "name": s[2],
                "description": s[3][:400],
                "quota": quota,
                "near": [
                    {"path": p, "name": n, "jaccard": round(j, 3)} for j, p, n in near
                ],
            }
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
