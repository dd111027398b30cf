// Turn the commits since the last tag into draft release notes.
// Usage: git log --format='%h%x09%s' v1.4.0..HEAD | node scripts/collect.js 1.5.0
import { readFileSync } from "node:fs";
import { parseCommits } from "../../changelog-writing/scripts/commits.js";

const GROUPS = [
  ["Breaking changes", (c) => c.breaking],
  ["New features", (c) => c.type === "feat" && !c.breaking],
  ["Bug fixes", (c) => c.type === "fix" && !c.breaking],
  ["Performance", (c) => c.type === "perf" && !c.breaking],
];

function render(version, commits) {
  const lines = [`# Release ${version}`, ""];
  let listed = 0;
  for (const [title, wanted] of GROUPS) {
    const picked = commits.filter(wanted);
    if (picked.length === 0) continue;
    lines.push(`## ${title}`, "");
    for (const c of picked) {
      const scope = c.scope ? `**${c.scope}:** ` : "";
      lines.push(`- ${scope}${c.subject}${c.hash ? ` (${c.hash})` : ""}`);
    }
    lines.push("");
    listed += picked.length;
  }
  const internal = commits.length - listed;
  if (internal > 0) lines.push(`_${internal} internal change(s) not listed._`, "");
  return lines.join("\n");
}

const version = process.argv[2] ?? "unreleased";
const log = readFileSync(0, "utf8");
process.stdout.write(render(version, parseCommits(log)));
