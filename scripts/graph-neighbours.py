"""How often is a missed gold skill a relation neighbour of the skills ranked above it?

An upper bound for graph neighbours as a candidate source or a ranking feature (issue 14,
point 5): for every query that misses hit@1, whether a gold skill (or the canonical of its
duplicate cluster) is joined by an SKG edge — any, or of confidence >= 0.3 (what the metrics use)
— to the first or first three skills the fusion returned. Reads `skg eval --misses --format json`.

Usage:
    skg eval QUERIES.jsonl --index INDEX --include-quarantined --mode hybrid --misses \
        --format json > misses.json
    python3 scripts/graph-neighbours.py misses.json AUDIT_FOLDER QUERIES.jsonl
"""

import collections
import json
import os
import sys


def skill_id(path: str) -> str:
    """A gold path (`owner__name/skills/x/SKILL.md`) as skg names the skill (`owner/name:skills/x`)."""
    top, rest = path.split("/", 1)
    return top.replace("__", "/", 1) + ":" + rest.rsplit("/SKILL.md", 1)[0]


def main() -> None:
    misses_json, audit, queries = sys.argv[1:4]
    strong, weak = collections.defaultdict(set), collections.defaultdict(set)
    with open(os.path.join(audit, "edges.ndjson")) as f:
        for line in f:
            e = json.loads(line)
            for a, b in ((e["src"], e["dst"]), (e["dst"], e["src"])):
                weak[a].add(b)
                if e["confidence"] >= 0.3:
                    strong[a].add(b)
    cluster = {}
    with open(os.path.join(audit, "aliases.ndjson")) as f:
        for line in f:
            a = json.loads(line)
            cluster[a["id"]] = a["cluster_id"]
    gold_of = {}
    with open(queries) as f:
        for line in f:
            q = json.loads(line)
            gold = {skill_id(g) for g in q["gold"]}
            gold_of[q["id"]] = gold | {cluster[g] for g in gold if g in cluster}
    counts = collections.Counter()
    with open(misses_json) as f:
        misses = json.load(f)["misses"]["misses"]
    for m in misses:
        counts[f"misses of class {m['class']}"] += 1
        for k in (1, 3):
            for name, graph in (("any edge", weak), ("edge confidence >= 0.3", strong)):
                if set().union(*[graph[r] for r in m["top"][:k]]) & gold_of[m["query"]]:
                    counts[
                        f"gold joined to the first {k} by {name} ({m['class']})"
                    ] += 1
    print(f"{len(misses)} queries miss hit@1")
    for key, n in sorted(counts.items()):
        print(f"{n:4d}  {key}")


if __name__ == "__main__":
    main()
