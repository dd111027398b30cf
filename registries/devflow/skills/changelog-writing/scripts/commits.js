// Parse one-line git log output into conventional-commit records.
// Expected input: git log --format='%h%x09%s'  (hash, TAB, subject)

const HEADER = /^(?<type>[a-z]+)(?:\((?<scope>[^)]+)\))?(?<bang>!)?: (?<subject>.+)$/;

export function parseCommits(log) {
  const commits = [];
  for (const raw of String(log).split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "") continue;
    const tab = line.indexOf("\t");
    const hash = tab === -1 ? "" : line.slice(0, tab);
    const message = tab === -1 ? line : line.slice(tab + 1).trim();
    const match = HEADER.exec(message);
    if (!match) {
      commits.push({ hash, type: "other", scope: null, breaking: false, subject: message });
      continue;
    }
    const { type, scope, bang, subject } = match.groups;
    commits.push({
      hash,
      type,
      scope: scope ?? null,
      breaking: Boolean(bang) || subject.includes("BREAKING CHANGE"),
      subject,
    });
  }
  return commits;
}

// Map commit types to Keep a Changelog sections; unknown types are internal.
export const SECTION_FOR_TYPE = {
  feat: "Added",
  fix: "Fixed",
  perf: "Changed",
  revert: "Removed",
};
