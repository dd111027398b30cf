"""Overlap class of a judged query against its target's frontmatter, as the shared dev set
defines it (../shared/bench/QUERIES.md, `overlap`): content words (stopwords out), lightly
stemmed; two words match when equal, or when one is a prefix of the other and both have 5+
characters. `none`: no word shared; `low`: none shared with the name and at most one with the
description; `natural`: anything else.

  python3 scripts/query-overlap.py REGISTRIES SKILL_ID "query text"
  python3 scripts/query-overlap.py REGISTRIES --check QUERIES.jsonl   # recorded vs computed"""

import json
import re
import sys

import yaml

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
    "was",
    "were",
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "into",
    "via",
    "using",
    "use",
    "used",
    "your",
    "you",
    "we",
    "our",
    "my",
    "me",
    "i",
    "how",
    "what",
    "when",
    "where",
    "which",
    "who",
    "can",
    "could",
    "should",
    "would",
    "will",
    "do",
    "does",
    "did",
    "not",
    "no",
    "so",
    "if",
    "then",
    "than",
    "but",
    "all",
    "any",
    "each",
    "every",
    "some",
    "more",
    "most",
    "other",
    "such",
    "only",
    "own",
    "same",
    "too",
    "very",
    "just",
    "also",
    "get",
    "make",
    "need",
    "want",
    "help",
    "new",
    "one",
    "two",
    "up",
    "out",
    "about",
    "over",
    "after",
    "before",
}


def stem(w):
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def words(text):
    return {
        stem(w)
        for w in re.findall(r"[a-z0-9]+", text.lower())
        if w not in STOP and len(w) > 1
    }


def match(a, b):
    return a == b or (min(len(a), len(b)) >= 5 and (a.startswith(b) or b.startswith(a)))


def shared(query, target):
    return sorted({w for w in query if any(match(w, t) for t in target)})


def overlap(registries, skill_id, query):
    with open(f"{registries}/{skill_id}", encoding="utf-8", errors="replace") as f:
        text = f.read()
    fm = yaml.safe_load(re.match(r"^---\s*\n(.*?)\n---", text, re.DOTALL).group(1))
    name = str(fm.get("name") or "").replace("-", " ")
    q = words(query)
    with_name = shared(q, words(name))
    with_description = shared(q, words(str(fm.get("description") or "")))
    if not with_name and not with_description:
        cls = "none"
    elif not with_name and len(with_description) <= 1:
        cls = "low"
    else:
        cls = "natural"
    return cls, with_name, with_description


def main():
    registries = sys.argv[1]
    if sys.argv[2] == "--check":
        wrong = 0
        with open(sys.argv[3], encoding="utf-8") as f:
            queries = [json.loads(line) for line in f if line.strip()]
        for q in queries:
            cls, _, _ = overlap(registries, q["gold"][0], q["query"])
            if cls != q.get("overlap"):
                wrong += 1
                print(f"{q['id']}: recorded {q.get('overlap')}, computed {cls}")
        print(f"{wrong} recorded overlap classes differ from the computed ones")
        sys.exit(1 if wrong else 0)
    cls, with_name, with_description = overlap(registries, sys.argv[2], sys.argv[3])
    print(
        cls, "| shared with name:", with_name, "| with description:", with_description
    )


if __name__ == "__main__":
    main()
