#!/usr/bin/env bash
# Replicas behind a real load balancer, on loopback: 3 `skg serve` replicas over one published
# index folder behind HAProxy (Debian package `haproxy`), driven by wrk (Debian `wrk`).
#   1. revision A is published; the replicas start (`--index-poll-ms`: each reloads on its own when
#      the folder's revision changes) and HAProxy health-checks them on /ready;
#   2. wrk POSTs /v1/route for SECONDS through HAProxy; at 1/4 of the run revision B is published
#      over the same folder (`skg index build -o`, one rename) and the replicas roll to it;
#   3. at 1/2 of the run replica 2 is killed (SIGKILL) and started again 2 s later: HAProxy
#      retries the requests it had in flight on another replica (retry-on, redispatch);
#   4. it prints wrk's figures, the revisions every answer named (only A and B may appear, each
#      answer names one) and each replica's reloads; it fails when any request failed.
# usage: scripts/replicas.sh AUDIT_DIR [SECONDS] [CONNECTIONS]
#   AUDIT_DIR: a finished `skg audit` folder (e.g. reports/registries after scripts/demo.sh).
#   SKG_BIN: the binary (default target/debug/skg). Needs haproxy, wrk, curl, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
audit=$(realpath "$1"); secs=${2:-30}; conns=${3:-16}
skg=$(realpath "${SKG_BIN:-target/debug/skg}")
for tool in haproxy wrk curl python3; do
  command -v "$tool" > /dev/null || { echo "replicas: $tool is not installed (scripts/test-deps.sh installs it)" >&2; exit 2; }
done
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
revision() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["content_hash"])' "$1/manifest.json"; }

# Two revisions of one catalog: B keeps only the relations of confidence ≥ 0.9.
index="$work/index"
"$skg" -q index build "$audit" -o "$index" --no-embeddings > /dev/null
rev_a=$(revision "$index")
"$skg" -q index build "$audit" -o "$work/b-probe" --no-embeddings --min-confidence 0.9 > /dev/null
rev_b=$(revision "$work/b-probe")
rm -rf "$work/b-probe"
[ "$rev_a" != "$rev_b" ] || { echo "replicas: the two builds have the same revision" >&2; exit 1; }
echo "revision A ${rev_a:0:12}, revision B ${rev_b:0:12}"

python3 -c 'import json,sys; [print(json.loads(l)["query"].replace("\n"," ")) for l in open(sys.argv[1]) if l.strip()]' \
  tests/fixtures/queries/demo.jsonl > "$work/tasks.txt"

ports=("$(free_port)" "$(free_port)" "$(free_port)")
start_replica() { # index in ports
  "$skg" serve --index "$index" --addr "127.0.0.1:${ports[$1]}" --bm25 --index-poll-ms 200 --drain-ms 500 \
    2>> "$work/replica$1.log" &
  pids[$1]=$!
}
wait_ready() {
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$1/ready" > /dev/null && return 0
    sleep 0.1
  done
  echo "replicas: 127.0.0.1:$1 never became ready" >&2; return 1
}
for i in 0 1 2; do start_replica "$i"; done
for i in 0 1 2; do wait_ready "${ports[$i]}"; done

lb=$(free_port)
cat > "$work/haproxy.cfg" <<CFG
global
  maxconn 4096
defaults
  mode http
  timeout connect 1s
  timeout client 30s
  timeout server 30s
  retries 3
  option redispatch 1
  retry-on all-retryable-errors
  option http-buffer-request
frontend skg
  bind 127.0.0.1:$lb
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /ready
  http-check expect status 200
  default-server inter 200ms fall 1 rise 2
  server r0 127.0.0.1:${ports[0]} check
  server r1 127.0.0.1:${ports[1]} check
  server r2 127.0.0.1:${ports[2]} check
CFG
haproxy -f "$work/haproxy.cfg" -db > "$work/haproxy.log" 2>&1 &
pids[3]=$!
wait_ready "$lb"

echo "wrk: ${secs}s, $conns connections through HAProxy on 127.0.0.1:$lb → replicas on ${ports[*]}"
WRK_TASKS="$work/tasks.txt" wrk -t2 -c"$conns" -d"${secs}s" --latency -s scripts/load/revisions.lua \
  "http://127.0.0.1:$lb/v1/route" > "$work/wrk.txt" &
wrk_pid=$!
sleep "$(python3 -c "print($secs/4)")"
"$skg" -q index build "$audit" -o "$index" --no-embeddings --min-confidence 0.9 > /dev/null
echo "published revision B at $(date +%T)"
sleep "$(python3 -c "print($secs/4)")"
kill -9 "${pids[1]}"
wait "${pids[1]}" 2> /dev/null || true
echo "killed replica 1 (SIGKILL) at $(date +%T)"
sleep 2
start_replica 1
wait_ready "${ports[1]}"
echo "replica 1 back at $(date +%T)"
wait "$wrk_pid"

summary=$(tail -1 "$work/wrk.txt")
echo "$summary"
for i in 0 1 2; do
  printf 'replica %d: serving %s; reloads %s\n' "$i" \
    "$(curl -s "http://127.0.0.1:${ports[$i]}/ready" | python3 -c 'import json,sys; print(json.load(sys.stdin)["revision"][:12])')" \
    "$(curl -s "http://127.0.0.1:${ports[$i]}/metrics" | awk '/^skg_index_reloads_total/ {printf "%s=%s ", $1, $2}')"
done
python3 - "$summary" "$rev_a" "$rev_b" <<'PY'
import json, sys
s, a, b = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
errors = sum(s["errors"].values())
seen = set(s["revisions"])
print(f"| req/s | p50 ms | p99 ms | requests | failed | revisions seen |")
print(f"|---|---|---|---|---|---|")
print(f"| {s['rps']:.0f} | {s['p50_ms']:.1f} | {s['p99_ms']:.1f} | {s['requests']} | {errors} | "
      + ", ".join(f"{r[:12]}: {n}" for r, n in sorted(s["revisions"].items())) + " |")
bad = []
if errors or s["answers_without_revision"]:
    bad.append(f"{errors} failed requests, {s['answers_without_revision']} answers without a revision")
if not seen <= {a, b}:
    bad.append(f"revisions other than A and B: {sorted(seen - {a, b})}")
if b not in seen:
    bad.append("no answer came from revision B: the replicas did not roll")
if bad:
    sys.exit("replicas: " + "; ".join(bad))
print("replicas: ok (0 failed requests; every answer from revision A or B)")
PY
