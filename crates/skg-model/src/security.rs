//! Security findings and verdicts: the rows `skg scan` writes (`findings`, `verdicts`).

use serde::{Deserialize, Serialize};

use crate::SkillId;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Instructions that hijack the agent: override, role change, concealment, hidden text.
    PromptInjection,
    /// Secrets or data sent out (HTTP, DNS, sockets) or requested.
    Exfiltration,
    /// Credential stores read (SSH keys, cloud credentials, browser profiles, keychains, `.env`).
    CredentialAccess,
    /// Code fetched or decoded and run (download-and-execute, `eval` of decoded data).
    RemoteExecution,
    /// Interactive shells handed to a remote host.
    ReverseShell,
    /// Shell start-up files, cron, SSH authorized keys, services.
    Persistence,
    /// Security tools, logs or history switched off or wiped; destructive deletes.
    DefenseEvasion,
    /// setuid, sudoers, world-writable system paths.
    PrivilegeEscalation,
    /// Encoded or assembled code and text.
    Obfuscation,
    /// Cryptocurrency miners.
    CryptoMining,
    /// Names one edit away from a popular package, installs from other indexes.
    SupplyChain,
    /// What the skill says it is against what it does.
    Deception,
}

impl Category {
    /// The kebab-case name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::PromptInjection => "prompt-injection",
            Category::Exfiltration => "exfiltration",
            Category::CredentialAccess => "credential-access",
            Category::RemoteExecution => "remote-execution",
            Category::ReverseShell => "reverse-shell",
            Category::Persistence => "persistence",
            Category::DefenseEvasion => "defense-evasion",
            Category::PrivilegeEscalation => "privilege-escalation",
            Category::Obfuscation => "obfuscation",
            Category::CryptoMining => "crypto-mining",
            Category::SupplyChain => "supply-chain",
            Category::Deception => "deception",
        }
    }
}

/// How bad a finding is once its context is weighed. Ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; never a verdict on its own.
    Low,
    /// Risky; a few together make a skill unsafe.
    Medium,
    /// Dangerous: makes the skill unsafe at usual confidence.
    High,
    /// An attack in itself.
    Critical,
}

impl Severity {
    /// The lowercase name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// The weight of a finding of this severity in a skill's score (see [`Verdict`]).
    pub fn weight(self) -> f64 {
        match self {
            Severity::Low => 0.15,
            Severity::Medium => 0.5,
            Severity::High => 0.85,
            Severity::Critical => 0.97,
        }
    }

    /// One step less severe (low stays low).
    #[must_use]
    pub fn lower(self) -> Severity {
        match self {
            Severity::Critical => Severity::High,
            Severity::High => Severity::Medium,
            Severity::Medium | Severity::Low => Severity::Low,
        }
    }

    /// One step more severe (critical stays critical).
    #[must_use]
    pub fn raise(self) -> Severity {
        match self {
            Severity::Low => Severity::Medium,
            Severity::Medium => Severity::High,
            Severity::High | Severity::Critical => Severity::Critical,
        }
    }
}

/// One finding. One row of the `findings` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The package (`<registry>:<root>`; the skill's id when it is a skill).
    pub skill_id: SkillId,
    /// The rule (`SKG-…`, see [`RULES`]).
    pub rule: String,
    /// What it is about.
    pub category: Category,
    /// The severity after context.
    pub severity: Severity,
    /// The rule's own severity, before context.
    pub base_severity: Severity,
    /// How sure the rule is that the text does what it says (0–1).
    pub confidence: f64,
    /// The file, relative to the registry root.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// The evidence, one line, at most 200 characters.
    pub snippet: String,
    /// What was found, in one line.
    pub message: String,
    /// What in the context lowered or raised the severity (`lowered: …`, `raised: …`).
    pub context: Vec<String>,
    /// blake3 of the file's text (an acknowledgement holds while the file is unchanged).
    pub file_hash: String,
    /// Acknowledged in a reviewed allow file (same rule, path and file hash): kept, but left out
    /// of the verdict.
    #[serde(default)]
    pub acknowledged: bool,
    /// A catalog's tool: the catalog file's line where the tool's entry is, when known
    /// ([`crate::PackageText::entry_line`]); `line` is then a line of the tool's text as extract
    /// writes it (the path `<catalog file>#<tool>`). `None` for a package file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_line: Option<u32>,
    /// A catalog's tool in a JSON or YAML document: the column of its entry on
    /// [`Self::entry_line`] ([`crate::PackageText::entry_column`]); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_column: Option<u32>,
}

/// A skill's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictKind {
    /// No finding that matters.
    Safe,
    /// Something a reviewer should look at.
    Suspicious,
    /// Dangerous: quarantined from routing, risk tier `unsafe`, never a canonical.
    Unsafe,
}

impl VerdictKind {
    /// The lowercase name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Safe => "safe",
            VerdictKind::Suspicious => "suspicious",
            VerdictKind::Unsafe => "unsafe",
        }
    }
}

impl std::fmt::Display for VerdictKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One package's verdict. One row of the `verdicts` table.
///
/// `score = 1 − Π_rules (1 − max weight(severity) · confidence)`: a noisy-or over the rules that
/// fired, each counted once by its strongest finding (a rule repeated is one piece of evidence);
/// `unsafe` at `score ≥ unsafe_at`, `suspicious` at `score ≥ suspicious_at`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The package.
    pub skill_id: SkillId,
    /// Its registry.
    pub registry: String,
    /// The verdict.
    pub verdict: VerdictKind,
    /// The score (0–1).
    pub score: f64,
    /// Findings, all severities.
    pub findings: u32,
    /// The rules that fired, sorted, unique.
    pub rules: Vec<String>,
    /// The strongest finding's message (empty when none).
    pub top: String,
}
