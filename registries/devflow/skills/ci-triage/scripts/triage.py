"""Sort CI test results into real failures, flaky tests and infrastructure noise.

Input lines look like "<test id> <outcome>", collected from one or more CI
runs of the same commit. Lines mentioning known infrastructure problems are
reported separately.

Usage: python3 triage.py results.txt   (or pipe the lines on stdin)
"""
import sys
from collections import defaultdict
from pathlib import Path

# flaky.py lives with the test-first-development skill.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "test-first-development" / "scripts"))
from flaky import classify  # noqa: E402

INFRA_MARKERS = (
    "connection reset",
    "no space left on device",
    "oom-killed",
    "timed out waiting for runner",
    "rate limit",
)


def read_results(lines):
    outcomes, infra = defaultdict(list), []
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if any(marker in line.lower() for marker in INFRA_MARKERS):
            infra.append(line)
            continue
        parts = line.split()
        if len(parts) >= 2:
            outcomes[parts[0]].append(parts[-1])
    return outcomes, infra


def main(argv):
    if len(argv) > 1:
        with open(argv[1], encoding="utf-8") as handle:
            outcomes, infra = read_results(handle)
    else:
        outcomes, infra = read_results(sys.stdin)
    buckets = defaultdict(list)
    for test, runs in sorted(outcomes.items()):
        buckets[classify(runs)].append(f"{test} ({len(runs)} runs)")
    for title, key in (("REAL FAILURES", "stable-fail"), ("FLAKY", "flaky")):
        print(f"{title}: {len(buckets[key])}")
        for entry in buckets[key]:
            print(f"  - {entry}")
    print(f"INFRA: {len(infra)}")
    for line in infra:
        print(f"  - {line}")
    return 1 if buckets["stable-fail"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
