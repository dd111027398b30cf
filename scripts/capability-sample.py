#!/usr/bin/env python3
"""Draws the capability-type labelling sample: N skill folders uniformly at random over the
SKILL.md files of a registries folder (every registry pooled), with a fixed seed.

Prints `registry,path` rows (registry: its name in registries.toml; path: the skill folder relative to its registry, `/`-separated),
sorted by draw order, to stdout. Usage: scripts/capability-sample.py REGISTRIES [--n 200] [--seed S]
"""

import argparse
import random
import sys
import tomllib
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("registries", type=Path)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20261201)
    args = ap.parse_args()
    # Registries are named as extract names them: by registries.toml when the folder has one.
    names = {}
    toml_file = args.registries / "registries.toml"
    if toml_file.is_file():
        with toml_file.open("rb") as f:
            names = {r["path"]: r["name"] for r in tomllib.load(f).get("registry", [])}
    found = []
    for registry in sorted(p for p in args.registries.iterdir() if p.is_dir()):
        for skill in sorted(registry.rglob("SKILL.md")):
            if any(part.startswith(".") for part in skill.relative_to(registry).parts):
                continue
            name = names.get(registry.name, registry.name)
            found.append((name, skill.parent.relative_to(registry).as_posix()))
    rng = random.Random(args.seed)
    print("registry,path")
    for registry, path in rng.sample(found, args.n):
        print(f"{registry},{path}")
    print(
        f"{len(found)} skill folders, {args.n} drawn, seed {args.seed}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
