#!/usr/bin/env bash
# Load test of `skg serve` with wrk (Debian package `wrk`) on 127.0.0.1:
#   1. POST /v1/route for a fixed duration: requests/s, latency, errors;
#   2. the same while /admin/reload swaps the served index twice (A → B → A through a symlink, as a
#      blue/green deploy does): every request must still succeed.
# usage: scripts/load-test.sh INDEX_A INDEX_B [SECONDS] [CONNECTIONS]
#   INDEX_A, INDEX_B: two finished index folders with different revisions (e.g. built from the
#   same audit with different --min-confidence). Tasks: $TASKS (JSONL with "query", default the
#   demo queries). SKG_BIN: the binary (default target/release/skg). SKG_SERVE_ARGS: extra flags.
set -euo pipefail
cd "$(dirname "$0")/.."
a=$(realpath "$1"); b=$(realpath "$2"); secs=${3:-30}; conns=${4:-16}
skg=${SKG_BIN:-target/release/skg}
tasks_jsonl=${TASKS:-tests/fixtures/queries/demo.jsonl}
command -v wrk > /dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
work=$(mktemp -d)
trap 'kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; rm -rf "$work"' EXIT
python3 -c 'import json,sys; [print(json.loads(l)["query"].replace("\n"," ")) for l in open(sys.argv[1]) if l.strip()]' \
  "$tasks_jsonl" > "$work/tasks.txt"
ln -s "$a" "$work/current"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
# shellcheck disable=SC2086
SKG_ADMIN_TOKEN=$token "$skg" serve --index "$work/current" --addr "127.0.0.1:$port" ${SKG_SERVE_ARGS:-} \
  2> "$work/serve.err" &
pid=$!
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$port/health" > /dev/null && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$port/health" > "$work/health.json" || { cat "$work/serve.err" >&2; exit 1; }
python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); print("serving", h["index"]["revision"][:12], h["index"]["counts"], "degraded:", h["degraded"])' "$work/health.json"
rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
url="http://127.0.0.1:$port/v1/route"
export WRK_TASKS="$work/tasks.txt"

echo "rss_kb_start $(rss)"
echo "phase 1: ${secs}s, $conns connections"
wrk -t1 -c"$conns" -d"${secs}s" --latency -s scripts/load/route.lua "$url" > "$work/wrk1.txt"
tail -1 "$work/wrk1.txt"
echo "rss_kb_after_phase1 $(rss)"

echo "phase 2: ${secs}s with two index swaps"
wrk -t1 -c"$conns" -d"${secs}s" --latency -s scripts/load/route.lua "$url" > "$work/wrk2.txt" &
wrk_pid=$!
reload() {
  ln -sfn "$1" "$work/next" && mv -T "$work/next" "$work/current"
  curl -s -XPOST -H "Authorization: Bearer $token" "http://127.0.0.1:$port/admin/reload"
  echo
}
sleep $(( secs / 3 )); reload "$b"
sleep $(( secs / 3 )); reload "$a"
wait "$wrk_pid"
tail -1 "$work/wrk2.txt"
echo "rss_kb_end $(rss)"
# The admin token reads /metrics on any gateway (with keys, a bare scrape is refused).
metrics=$(curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$port/metrics") \
  || { echo "load-test: /metrics refused the admin token" >&2; exit 1; }
echo "$metrics" | grep -E '^skg_index_reloads_total|^skg_http_requests_total\{route="/v1/route"' || true
