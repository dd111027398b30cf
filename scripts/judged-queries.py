"""Judged retrieval queries by the protocol of the shared dev set (../shared/bench/QUERIES.md).

  python3 scripts/judged-queries.py sample ../shared --seed 2026 [--exclude SET.jsonl] > targets.jsonl
  python3 scripts/judged-queries.py train ../shared --count 600 --seed 2028 \
      --exclude labels/queries-dev2-v1.jsonl --exclude labels/queries-dev3-v1.jsonl > targets.jsonl
  python3 scripts/judged-queries.py overlap REGISTRIES SKILL_ID "query text"
  python3 scripts/judged-queries.py overlap REGISTRIES --check QUERIES.jsonl

`sample` (step 2): every SKILL.md's frontmatter read; kept when its description has ≥ 40
characters and its body ≥ 1,200, and it is not an agentskillexchange stub; each registry's list
(sorted by path) shuffled once with the seed; the first ⌊1.6 × quota⌋ + 1 taken per registry
(spares for the screening). Skills the shared dev set (and each --exclude set) labels are left
out. Each target carries its 15 nearest skills by the Jaccard of their name + description content
words: candidates for copies and equivalents, for the labeller to check.

`train`: targets for *training* requests (labels/train-requests-v1.jsonl), by the same filters
and per-registry shuffle with the quotas scaled to --count and no spares. Beside the judged sets'
labels, every copy of a labelled skill is left out too — the same name or description, or a
name + description Jaccard ≥ 0.5 — so that no request trained on names a judged query's answer
under another path. Each target carries the skill's headings and the start of its body, for the
writer. `train --check REQUESTS.jsonl` (CI) exits 1 when a written request names a judged label, a
copy of one, or no skill.

`overlap` (the `overlap` field): content words (stopwords out), lightly stemmed; two words match
when equal, or when one is a prefix of the other and both have 5+ characters. `none`: no word
shared; `low`: none shared with the name and at most one with the description; `natural`:
anything else. `--check` recomputes every query's class and exits 1 when one differs.

labels/README.md says how the second and third dev sets were made with it."""

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
STUB = "No source-backed install or usage instructions"
STOP = set(
    """a an the and or of to in on for with by from at as is are be was were this that these
    those it its into via using use used your you we our my me i how what when where which who can
    could should would will do does did not no so if then than but all any each every some more
    most other such only own same too very just also get make need want help new one two up out
    about over after before""".split()  # noqa: SIM905 (a word list reads best as text)
)


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


def stem(w):
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def content_words(text):
    return {
        stem(w)
        for w in re.findall(r"[a-z0-9]+", text.lower())
        if w not in STOP and len(w) > 1
    }


def labels_of(path):
    """Every gold and acceptable id of a judged set."""
    with open(path, encoding="utf-8") as f:
        queries = [json.loads(line) for line in f if line.strip()]
    return {g for q in queries for g in q["gold"] + q.get("acceptable", [])}


def read_skills(shared):
    """(registry, id, name, description, body) of every SKILL.md with readable frontmatter."""
    root = os.path.join(shared, "registries")
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
    return skills


def judged_labels(args):
    taken = set()
    for judged in [
        os.path.join(args.shared, "bench", "queries_dev.jsonl"),
        *args.exclude,
    ]:
        taken |= labels_of(judged)
    return taken


def substantial(s, reg, taken):
    return (
        s[0] == reg
        and len(s[3]) >= 40
        and len(s[4]) >= 1200
        and STUB not in s[4]
        and s[1] not in taken
    )


def sample(args):
    skills = read_skills(args.shared)
    taken = judged_labels(args)
    bags = [(s[1], s[2], content_words(s[2] + " " + s[3])) for s in skills]
    rng = random.Random(args.seed)
    for reg, quota in QUOTA.items():
        ok = sorted(
            (s for s in skills if substantial(s, reg, taken)), key=lambda s: s[1]
        )
        rng.shuffle(ok)
        for s in ok[: int(quota * 1.6) + 1]:
            w = content_words(s[2] + " " + s[3])
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
            sys.stdout.write(json.dumps(row) + "\n")


def norm(text):
    return " ".join(text.lower().split())


def excerpt(body, chars=1400):
    """The body's headings, then its first `chars` characters of prose (code fences out)."""
    heads = [ln.strip() for ln in body.splitlines() if re.match(r"#{1,3} ", ln.strip())]
    prose = re.sub(r"```.*?```", " ", body, flags=re.DOTALL)
    prose = " ".join(prose.split())
    return {"headings": heads[:25], "start": prose[:chars]}


def train(args):
    skills = read_skills(args.shared)
    taken = judged_labels(args)
    labelled = [s for s in skills if s[1] in taken]
    names = {norm(s[2]) for s in labelled if s[2].strip()}
    descs = {norm(s[3]) for s in labelled if s[3].strip()}
    bags = [content_words(s[2] + " " + s[3]) for s in labelled]

    def copy_of_labelled(s):
        if norm(s[2]) in names or norm(s[3]) in descs:
            return True
        w = content_words(s[2] + " " + s[3])
        return any(len(w & x) / max(1, len(w | x)) >= 0.5 for x in bags)

    if args.check:
        with open(args.check, encoding="utf-8") as f:
            requests = [json.loads(line) for line in f if line.strip()]
        by_id = {s[1]: s for s in skills}
        bad = 0
        for r in requests:
            for g in r["gold"]:
                why = (
                    "no such skill"
                    if g not in by_id
                    else "a judged label"
                    if g in taken
                    else "a copy of a judged label"
                    if copy_of_labelled(by_id[g])
                    else None
                )
                if why:
                    bad += 1
                    print(f"{args.check}: {r['id']}: {g} is {why}", file=sys.stderr)
        print(f"{len(requests)} requests, {bad} name a skill no request may name")
        sys.exit(1 if bad else 0)
    rng = random.Random(args.seed)
    total = sum(QUOTA.values())
    for reg, quota in QUOTA.items():
        want = round(quota * args.count / total)
        ok = sorted(
            (s for s in skills if substantial(s, reg, taken)), key=lambda s: s[1]
        )
        rng.shuffle(ok)
        kept = 0
        for s in ok:
            if kept == want:
                break
            if copy_of_labelled(s):
                continue
            kept += 1
            row = {
                "registry": reg,
                "path": s[1],
                "name": s[2],
                "description": s[3][:600],
                **excerpt(s[4]),
            }
            sys.stdout.write(json.dumps(row) + "\n")
        if kept < want:
            print(f"{reg}: {kept} of {want} targets", file=sys.stderr)


def match(a, b):
    return a == b or (min(len(a), len(b)) >= 5 and (a.startswith(b) or b.startswith(a)))


def shared(query, target):
    return sorted({w for w in query if any(match(w, t) for t in target)})


def overlap_class(registries, skill_id, query):
    name, description, _ = frontmatter(f"{registries}/{skill_id}")
    q = content_words(query)
    with_name = shared(q, content_words(name.replace("-", " ")))
    with_description = shared(q, content_words(description))
    if not with_name and not with_description:
        cls = "none"
    elif not with_name and len(with_description) <= 1:
        cls = "low"
    else:
        cls = "natural"
    return cls, with_name, with_description


def overlap(args):
    if args.check:
        with open(args.check, encoding="utf-8") as f:
            queries = [json.loads(line) for line in f if line.strip()]
        wrong = 0
        for q in queries:
            cls, _, _ = overlap_class(args.registries, q["gold"][0], q["query"])
            if cls != q.get("overlap"):
                wrong += 1
                print(f"{q['id']}: recorded {q.get('overlap')}, computed {cls}")
        print(f"{wrong} recorded overlap classes differ from the computed ones")
        sys.exit(1 if wrong else 0)
    cls, with_name, with_description = overlap_class(
        args.registries, args.skill, args.query
    )
    print(
        cls, "| shared with name:", with_name, "| with description:", with_description
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)

    def targets(name, help, seed):
        p = sub.add_parser(name, help=help)
        p.add_argument("shared", help="the shared folder (registries/, bench/)")
        p.add_argument("--seed", type=int, default=seed)
        p.add_argument(
            "--exclude",
            action="append",
            default=[],
            help="another judged set (JSONL) whose labels are no targets either (repeatable)",
        )
        return p

    s = targets("sample", "candidate targets (JSONL on stdout)", 2026)
    s.set_defaults(run=sample)
    t = targets("train", "targets for training requests (JSONL on stdout)", 2028)
    t.add_argument("--count", type=int, default=600)
    t.add_argument(
        "--check",
        metavar="REQUESTS.jsonl",
        help="instead: exit 1 when a request names a judged label, a copy of one or no skill",
    )
    t.set_defaults(run=train)
    o = sub.add_parser(
        "overlap", help="a query's overlap class, or --check a judged set"
    )
    o.add_argument("registries")
    o.add_argument("skill", nargs="?")
    o.add_argument("query", nargs="?")
    o.add_argument("--check", metavar="QUERIES.jsonl")
    o.set_defaults(run=overlap)
    args = ap.parse_args()
    if args.command == "overlap" and not args.check and not (args.skill and args.query):
        ap.error("overlap: SKILL_ID and a query, or --check QUERIES.jsonl")
    args.run(args)


if __name__ == "__main__":
    main()
