"""Classify a test from the outcomes of repeated runs.

Usage: python3 flaky.py pass fail pass ...
"""
import sys

PASS_WORDS = {"pass", "passed", "ok", "1", "true"}
FAIL_WORDS = {"fail", "failed", "error", "0", "false"}


def classify(outcomes):
    """Return "stable-pass", "stable-fail", "flaky" or "unknown".

    `outcomes` is an iterable of strings or booleans, one per run.
    """
    results = []
    for item in outcomes:
        if isinstance(item, bool):
            results.append(item)
            continue
        word = str(item).strip().lower()
        if word in PASS_WORDS:
            results.append(True)
        elif word in FAIL_WORDS:
            results.append(False)
    if not results:
        return "unknown"
    if all(results):
        return "stable-pass"
    if not any(results):
        return "stable-fail"
    return "flaky"


def failure_count(outcomes):
    return sum(1 for o in outcomes if str(o).strip().lower() in FAIL_WORDS)


if __name__ == "__main__":
    runs = sys.argv[1:]
    verdict = classify(runs)
    if verdict == "flaky":
        print(f"flaky ({failure_count(runs)}/{len(runs)} failed)")
    else:
        print(verdict)
