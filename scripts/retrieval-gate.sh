#!/usr/bin/env bash
# Retrieval regression gate: audit ../shared/registries, the MetaTool dev tool catalog and both in
# one catalog, build their routing indexes (the first two cold), rank the corpus dev queries
# (quarantine off and on), the second and third corpus dev sets (labels/queries-dev{2,3}-v1.jsonl)
# and the MetaTool dev queries, the corpus dev and MetaTool queries again over the catalog of both
# kinds, and compare every query's rank with the committed baselines (tests/fixtures/retrieval/*-ranks.json:
# query ids — for MetaTool a hash of the text —, ranks and a digest of each judgment, no query
# text): `skg eval --compare … --fail-if-worse 0.05` fails when a metric of a mode is worse than
# the baseline with a Holm-adjusted p ≤ 0.05 (70 corpus queries
# resolve about 6–10 queries net; 1,000 MetaTool queries about 2 points). The tables of
# differences are printed either way, so a run shows what a change moved.
#   scripts/retrieval-gate.sh            # check (CI)
#   scripts/retrieval-gate.sh --update   # after an intended ranking change: rewrite the baseline
# SKG_BIN (default target/debug/skg), SKG_SHARED_DIR (default ../shared), WORK (default a
# temporary folder). Without ../shared it skips with a message, unless SKG_REQUIRE_TEST_INPUTS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
skg=$(realpath "${SKG_BIN:-target/debug/skg}")
shared=${SKG_SHARED_DIR:-../shared}
queries=$shared/bench/queries_dev.jsonl
if [ ! -f "$queries" ] || [ ! -f "$shared/registries/registries.toml" ] || [ ! -f "$shared/bench/metatool_dev/tools.jsonl" ]; then
  if [ "${SKG_REQUIRE_TEST_INPUTS:-}" = 1 ]; then
    echo "retrieval gate: $shared (registries, bench/queries_dev.jsonl, bench/metatool_dev) is required here" >&2; exit 1
  fi
  echo "retrieval gate skipped: $shared not found (set SKG_SHARED_DIR)"; exit 0
fi
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
tools=$shared/bench/metatool_dev/tools.jsonl
mt_queries=$shared/bench/metatool_dev/queries_dev.jsonl
"$skg" -q audit "$shared/registries/registries.toml" -o "$work/audit" > /dev/null
"$skg" -q index build "$work/audit" -o "$work/index" > /dev/null
"$skg" -q audit "$tools" -o "$work/mt-audit" > /dev/null
"$skg" -q index build "$work/mt-audit" -o "$work/mt-index" > /dev/null
# A catalog of both kinds (docs/retrieval.md, "A catalog of both kinds"): the registries and the
# MetaTool tools in one index, embedded with the packages graph (the registries' vectors from the
# first index; the tools' cards embedded afresh: the tool index above holds the tools graph's).
python3 scripts/mixed-catalog.py "$shared" "$work/mixed.toml"
"$skg" -q audit "$work/mixed.toml" -o "$work/mixed-audit" > /dev/null
"$skg" -q index build "$work/mixed-audit" -o "$work/mixed-index" \
  --embedding-cache "$work/index" > /dev/null
# MetaTool's queries have no ids: each gets the hash of its text as one, so the baseline holds
# hashes and ranks, never a query's text.
python3 - "$mt_queries" "$work/mt-queries.jsonl" <<'PY'
import hashlib, json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        if line.strip():
            q = json.loads(line)
            q["id"] = "t" + hashlib.blake2b(q["query"].encode(), digest_size=6).hexdigest()
            out.write(json.dumps(q) + "\n")
PY
# (name, queries, index, baseline, flag): the corpus quarantine off, as the issue measures it, and
# on, as the gateway routes by default (a change to what the quarantine removes shows here); the
# second and third corpus dev sets (labels/queries-dev2-v1.jsonl, queries-dev3-v1.jsonl, written
# after the index's settings were chosen), quarantine off; MetaTool with the default quarantine (a tool catalog routes by default);
# both over the catalog of both kinds (the tool requests with the default quarantine, the corpus
# dev queries quarantine off).
sets=(
  "corpus|$queries|$work/index|tests/fixtures/retrieval/corpus-dev-ranks.json|--include-quarantined"
  "corpus-quarantine-on|$queries|$work/index|tests/fixtures/retrieval/corpus-dev-ranks-quarantine-on.json|"
  "corpus-dev2|labels/queries-dev2-v1.jsonl|$work/index|tests/fixtures/retrieval/corpus-dev2-ranks.json|--include-quarantined"
  "corpus-dev3|labels/queries-dev3-v1.jsonl|$work/index|tests/fixtures/retrieval/corpus-dev3-ranks.json|--include-quarantined"
  "metatool|$work/mt-queries.jsonl|$work/mt-index|tests/fixtures/retrieval/metatool-dev-ranks.json|"
  "mixed-metatool|$work/mt-queries.jsonl|$work/mixed-index|tests/fixtures/retrieval/mixed-metatool-dev-ranks.json|"
  "mixed-corpus|$queries|$work/mixed-index|tests/fixtures/retrieval/mixed-corpus-dev-ranks.json|--include-quarantined"
)
status=0
for s in "${sets[@]}"; do
  IFS='|' read -r name q index baseline extra <<< "$s"
  if [ "${1:-}" = --update ]; then
    # shellcheck disable=SC2086 # $extra is one optional flag or nothing
    "$skg" -q eval "$q" --index "$index" $extra --per-query --format json > "$work/$name.json"
    # Ids and ranks only: timings and paths change from run to run.
    python3 - "$work/$name.json" "$baseline" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = {
    "index_revision": d["index_revision"],
    "queries": d["queries"],
    "include_quarantined": d["include_quarantined"],
    "modes": [{"mode": m["mode"], "per_query": m["per_query"]} for m in d["modes"]],
}
# One query per line: [id, rank, digest of its text and gold] (`skg eval --compare` pairs a
# query only with the same judgment).
modes = ",\n".join(
    ' {"mode": %s, "per_query": [\n  %s\n ]}'
    % (json.dumps(m["mode"]), ",\n  ".join(json.dumps(p) for p in m["per_query"]))
    for m in out.pop("modes")
)
head = ",\n".join(" %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in out.items())
with open(sys.argv[2], "w") as f:
    f.write("{\n%s,\n \"modes\": [\n%s\n ]\n}\n" % (head, modes))
PY
    echo "retrieval gate: $name baseline rewritten ($baseline)"
    continue
  fi
  echo "== $name ($(basename "$q"))"
  # shellcheck disable=SC2086
  "$skg" -q eval "$q" --index "$index" $extra --compare "$baseline" --fail-if-worse 0.05 || status=1
done
exit $status
