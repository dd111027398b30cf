#!/usr/bin/env python3
"""Load and abuse against `skg serve` on 127.0.0.1 (issue 8). Every phase is bounded and stops
by itself; the server is started and stopped here. Prints one JSON line per phase and a summary.

usage: scripts/abuse-test.py INDEX [--seconds 120] [--skg target/release/skg] [--tasks FILE.jsonl]

Phases:
  sustained   wrk POST /v1/route at 8 connections for --seconds; RSS sampled every 5 s
  slowloris   200 connections that send a request line and then one header byte every 2 s;
              meanwhile /health must keep answering; reports how many the server closed
  oversized   200 POSTs of 1 MiB bodies: all must be 413
  reload      2,000 POST /admin/reload without a token and 2,000 with a wrong one: all 401,
              and the index is never reloaded
  malformed   wrk POSTing invalid JSON for 15 s: no 5xx, no socket errors
Needs wrk (Debian package).
"""

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def request(port, method, path, body=None, headers=None, timeout=10):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=body,
        method=method,
        headers=headers or {},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def metric(port, name, token):
    # The admin token reads /metrics on any gateway (with keys, a bare scrape is refused).
    headers = {"Authorization": f"Bearer {token}"}
    status, text = request(port, "GET", "/metrics", headers=headers)
    if status != 200:
        raise SystemExit(f"/metrics answered {status} to the admin token")
    total = 0.0
    for line in text.decode().splitlines():
        if line.startswith(name):
            total += float(line.rsplit(" ", 1)[1])
    return total


def wrk(port, seconds, conns, script, env):
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{conns}",
            f"-d{seconds}s",
            "--latency",
            "-s",
            script,
            f"http://127.0.0.1:{port}/v1/route",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": out.stdout + out.stderr}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("index")
    ap.add_argument("--seconds", type=int, default=120)
    ap.add_argument("--skg", default=os.path.join(ROOT, "target/release/skg"))
    ap.add_argument(
        "--tasks", default=os.path.join(ROOT, "tests/fixtures/queries/demo.jsonl")
    )
    ap.add_argument("--serve-args", default="")
    args = ap.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed (apt-get install wrk)")
    work = tempfile.mkdtemp()
    tasks = os.path.join(work, "tasks.txt")
    with open(args.tasks) as f, open(tasks, "w") as t:
        for line in f:
            if line.strip():
                t.write(json.loads(line)["query"].replace("\n", " ") + "\n")
    port = free_port()
    token = secrets.token_hex(16)
    server = subprocess.Popen(
        [
            args.skg,
            "serve",
            "--index",
            args.index,
            "--addr",
            f"127.0.0.1:{port}",
            *args.serve_args.split(),
        ],
        env={**os.environ, "SKG_ADMIN_TOKEN": token},
        # The server writes its log there for the whole run (the handle outlives any block).
        stdout=subprocess.DEVNULL,
        stderr=open(os.path.join(work, "serve.err"), "w"),  # noqa: SIM115
    )
    results = {}
    try:
        for _ in range(300):
            try:
                if request(port, "GET", "/health", timeout=1)[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        rss_start = rss_kb(server.pid)

        # sustained
        samples = []
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                samples.append(rss_kb(server.pid))
                stop.wait(5)

        th = threading.Thread(target=sample)
        th.start()
        r = wrk(
            port,
            args.seconds,
            8,
            os.path.join(ROOT, "scripts/load/route.lua"),
            {"WRK_TASKS": tasks},
        )
        stop.set()
        th.join()
        r.update(
            rss_kb_start=rss_start,
            rss_kb_end=rss_kb(server.pid),
            rss_kb_max=max(samples or [0]),
            rss_kb_samples=samples,
        )
        results["sustained"] = r
        print(json.dumps({"phase": "sustained", **r}), flush=True)

        # slowloris
        socks = []
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /v1/route HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        health_ok = 0
        closed = 0
        t0 = time.time()
        while time.time() - t0 < 40:
            for s in socks:
                try:
                    s.sendall(b"X")
                except OSError:
                    pass
            try:
                health_ok += request(port, "GET", "/health", timeout=5)[0] == 200
            except OSError:
                pass
            time.sleep(2)
        for s in socks:
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    closed += 1
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
            s.close()
        r = {
            "connections": 200,
            "seconds": 40,
            "health_answers": health_ok,
            "closed_by_server": closed,
        }
        results["slowloris"] = r
        print(json.dumps({"phase": "slowloris", **r}), flush=True)

        # oversized
        big = b"{" + b" " * (1 << 20) + b"}"
        codes = {}
        for _ in range(200):
            try:
                c = request(
                    port, "POST", "/v1/route", big, {"Content-Type": "application/json"}
                )[0]
            except OSError as e:
                c = f"socket:{type(e).__name__}"
            codes[str(c)] = codes.get(str(c), 0) + 1
        r = {"requests": 200, "statuses": codes}
        results["oversized"] = r
        print(json.dumps({"phase": "oversized", **r}), flush=True)

        # reload flood
        before = metric(port, "skg_index_reloads_total", token)
        codes = {}
        for i in range(4000):
            h = (
                {}
                if i % 2 == 0
                else {"Authorization": "Bearer " + secrets.token_hex(16)}
            )
            c = request(port, "POST", "/admin/reload", b"", h)[0]
            codes[str(c)] = codes.get(str(c), 0) + 1
        r = {
            "requests": 4000,
            "statuses": codes,
            "reloads_attempted": metric(port, "skg_index_reloads_total", token)
            - before,
        }
        results["reload"] = r
        print(json.dumps({"phase": "reload", **r}), flush=True)

        # malformed JSON
        lua = os.path.join(work, "bad.lua")
        with open(lua, "w") as f:
            f.write(
                'local bodies = {"{", "{\\"task\\":", "[1,2", "\\"x\\"", "{\\"task\\": 5}", "nul\\0l", "{\\"k\\": -1}"}\n'
                "local n = 0\n"
                "function request()\n  n = n % #bodies + 1\n"
                '  return wrk.format("POST", "/v1/route", {["Content-Type"] = "application/json"}, bodies[n])\nend\n'
                "local codes = {}\n"
                "function response(status, headers, body) codes[status] = (codes[status] or 0) + 1 end\n"
                "function done(summary, latency, requests)\n"
                "  local e = summary.errors\n"
                '  io.write(string.format(\'{"requests":%d,"rps":%.1f,"p99_ms":%.2f,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\\n\',\n'
                "    summary.requests, summary.requests / (summary.duration / 1e6), latency:percentile(99) / 1000,\n"
                "    e.connect, e.read, e.write, e.status, e.timeout))\nend\n"
            )
        r = wrk(port, 15, 8, lua, {})
        r["5xx"] = metric(
            port,
            'skg_http_requests_total{route="/v1/route",method="POST",status="5',
            token,
        )
        results["malformed"] = r
        print(json.dumps({"phase": "malformed", **r}), flush=True)
        results["alive"] = request(port, "GET", "/health")[0] == 200
        results["rss_kb_final"] = rss_kb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    print(
        json.dumps(
            {
                "phase": "summary",
                "alive": results.get("alive"),
                "rss_kb_final": results.get("rss_kb_final"),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
