"""Write a registries.toml that lists ../shared's skill registries and the MetaTool dev tool
catalog together: a catalog of both kinds (SKILL.md packages and tool-catalog entries), as a
gateway in front of both an MCP tool list and skill registries would index it.

    python3 scripts/mixed-catalog.py SHARED OUT.toml
    skg audit OUT.toml -o AUDIT && skg index build AUDIT -o INDEX

Every entry is copied as it is, its path made absolute (the registries' own file is relative to
its folder), so OUT.toml can live anywhere.
"""

import argparse
import pathlib
import tomllib


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("shared", type=pathlib.Path)
    p.add_argument("out", type=pathlib.Path)
    args = p.parse_args()
    shared = args.shared.resolve()
    toml = shared / "registries" / "registries.toml"
    registries = tomllib.loads(toml.read_text())["registry"]
    lines = []
    for r in registries:
        lines.append("[[registry]]")
        for key, value in r.items():
            if key == "path":
                value = str(toml.parent / value)
            lines.append(f"{key} = {literal(value)}")
        lines.append("")
    lines.append("[[registry]]")
    lines.append('name = "metatool"')
    lines.append(
        f"path = {quote(str(shared / 'bench' / 'metatool_dev' / 'tools.jsonl'))}"
    )
    lines.append('kind = "tool_catalog"')
    args.out.write_text("\n".join(lines) + "\n")


def quote(s: str) -> str:
    """A TOML basic string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def literal(value: object) -> str:
    """A TOML value: strings quoted, booleans and numbers as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return quote(str(value))


if __name__ == "__main__":
    main()
