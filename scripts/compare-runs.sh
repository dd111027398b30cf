#!/usr/bin/env bash
# Runs a fixed set of skg commands with one binary into OUT, so that two binaries (before and
# after a refactoring) can be compared with scripts/compare-runs.py:
#   scripts/compare-runs.sh BIN OUT demo     # the bundled registries: every stage, JSON and human
#   scripts/compare-runs.sh BIN OUT shared   # ../shared: audit, index, eval on both dev sets, pairs, score eval (~15 min)
# Each command's stdout is OUT/<name>.out, its exit code OUT/<name>.rc; outputs are under OUT/work.
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath -m "$2"); set_=${3:-demo}
cd "$(dirname "$0")/.."
shared=${SKG_SHARED_DIR:-../shared}
w=$out/work; rm -rf "$w"; mkdir -p "$w"
run() { local name=$1; shift; echo "$(date +%T) $name" >> "$out/progress"; "$bin" "$@" > "$out/$name.out" 2> "$out/$name.err"; echo $? > "$out/$name.rc"; }
if [ "$set_" = demo ]; then
  run extract extract registries -o "$w/extract" --format json
  run extract-h extract registries -o "$w/extract2"
  run canon canonicalize "$w/extract" -o "$w/canon" --format json
  run canon-h canonicalize "$w/extract" -o "$w/canon2"
  run canon-pairs canonicalize "$w/extract" -o "$w/canon3" --no-embeddings --format json --pairs "$shared/labels/dup_pairs_dev.csv"
  run canon-synth canonicalize --synthetic 300 --seed 7 -o "$w/canon-synth" --no-embeddings --format json
  run score score "$w/extract" --canon "$w/canon" -o "$w/score" --format json
  run score-h score "$w/extract" --canon "$w/canon" -o "$w/score2"
  run measure measure "$w/extract" --canon "$w/canon" --scores "$w/score" -o "$w/measure" --format json
  run measure-h measure "$w/extract" --canon "$w/canon" --scores "$w/score" -o "$w/measure2"
  run gate gate "$w/measure" --format json
  run gate-h gate "$w/measure" --max-cfi 5 --scope each
  run gate-base gate "$w/measure" --baseline "$w/measure" --tolerance 0.01 --format json
  run schema schema
  run audit audit registries -o "$w/audit" --format json
  run audit-h audit registries -o "$w/audit"
  run index index build "$w/audit" -o "$w/index" --format json
  run route route "finish the feature branch and get it reviewed" -k 2 --index "$w/index" --format json
  run route-h route "finish the feature branch and get it reviewed" -k 2 --index "$w/index"
  run route-tools route "write a plan" --index "$w/index" --tools anthropic
else
  run audit audit "$shared/registries" -o "$w/audit" -q --format json
  run index index build "$w/audit" -o "$w/index" -q --format json
  run eval eval "$shared/bench/queries_dev.jsonl" --index "$w/index" --format json
  run eval-iq eval "$shared/bench/queries_dev.jsonl" --index "$w/index" --include-quarantined --format json --per-query
  run mt-audit audit "$shared/bench/metatool_dev/tools.jsonl" -o "$w/mt-audit" -q --format json
  run mt-index index build "$w/mt-audit" -o "$w/mt-index" -q --format json
  run mt-eval eval "$shared/bench/metatool_dev/queries_dev.jsonl" --index "$w/mt-index" --include-quarantined --format json
  run pairs canonicalize "$w/audit/stages/extract" -o "$w/canon-pairs" --pairs "$shared/labels/dup_pairs_dev.csv" --format json -q
  run score-eval score eval --labels "$shared/labels/slop_dev.csv" "$w/audit/stages/extract" --canon "$w/audit/stages/canonicalize" --format json
fi
echo "$(date +%T) done" >> "$out/progress"
