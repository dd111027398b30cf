//! `skg scan`: malicious and unsafe skills, found in what a package says and does.
//!
//! ```text
//! PackageText ──markdown──▶ segments (prose, headings, code blocks, inline code, HTML comments)
//!             ──rules────▶ Finding (rule, category, severity, confidence, path:line, evidence)
//!                              ▲ context: who is told to run it, from which host, hidden or shown,
//!                              │          the skill's own purpose, run on MCP server start
//!             ──verdict──▶ Verdict (safe | suspicious | unsafe, score, the findings that made it)
//! ```
//!
//! Scanning reads text only: nothing from a package is executed, fetched, imported or decoded
//! into anything but a string that is read again (SECURITY.md). Shell is parsed with
//! tree-sitter-bash and scripts with the JavaScript/TypeScript/Python grammars (skg-syntax):
//! `curl … | sh` is a pipeline whose output flows from a downloader into an interpreter, not a
//! string a regular expression happens to match. The output is deterministic: findings sorted by
//! (skill, path, line, rule), verdicts by skill.

mod eval;
mod markdown;
mod rules;
mod sarif;

use serde::{Deserialize, Serialize};
pub use skg_model::security::{Category, Finding, Severity, Verdict, VerdictKind};
use skg_model::{PackageText, Progress};

pub use crate::{
    eval::{Evaluation, LabelError, TypeRecall, evaluate, read_labels},
    rules::{RULES, Rule},
    sarif::sarif,
};

/// Scan options (what `skg scan` writes into its manifest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Score from which a package is `unsafe`.
    pub unsafe_at: f64,
    /// Score from which a package is `suspicious`.
    pub suspicious_at: f64,
    /// Reviewed findings (an allow file): acknowledged, left out of the verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<Allow>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            unsafe_at: 0.75,
            suspicious_at: 0.35,
            allow: Vec::new(),
        }
    }
}

/// One reviewed finding: the rule, the file (registry-relative path) and the file's content hash
/// when it was reviewed. A changed file has another hash, so its findings are raised again.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allow {
    /// The rule (`SKG-…`).
    pub rule: String,
    /// The file, relative to the registry folder.
    pub path: String,
    /// blake3 of the file's text (the `file_hash` column of `findings`).
    pub file_hash: String,
    /// Why it is acceptable (who reviewed it, when).
    #[serde(default)]
    pub reason: String,
}

/// An allow file: `[[allow]]` entries (TOML).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowFile {
    /// The reviewed findings.
    #[serde(default)]
    pub allow: Vec<Allow>,
}

impl AllowFile {
    /// An allow file acknowledging every finding of at least `min` severity not already
    /// acknowledged (a registry's baseline: later scans then fail only on what is new), sorted.
    pub fn of(findings: &[Finding], min: Severity, reason: &str) -> AllowFile {
        let mut allow: Vec<Allow> = findings
            .iter()
            .filter(|f| f.severity >= min)
            .map(|f| Allow {
                rule: f.rule.clone(),
                path: f.path.clone(),
                file_hash: f.file_hash.clone(),
                reason: reason.to_owned(),
            })
            .collect();
        allow.sort();
        allow.dedup();
        AllowFile { allow }
    }
}

/// Everything a scan finds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    /// Findings by (skill, path, line, rule).
    pub findings: Vec<Finding>,
    /// One verdict per package scanned, by skill.
    pub verdicts: Vec<Verdict>,
}

impl Scan {
    /// Packages per verdict: (safe, suspicious, unsafe).
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |k| self.verdicts.iter().filter(|v| v.verdict == k).count();
        (
            n(VerdictKind::Safe),
            n(VerdictKind::Suspicious),
            n(VerdictKind::Unsafe),
        )
    }
}

/// Scans every package. Names shared across the packages (popular names for the typosquat rule)
/// are taken from the whole set, so scan a registry together with the ones it copies from.
/// `s` with every control character shown as U+FFFD: registry text (a path, a heading, a
/// snippet) fit to print on a terminal, which an ESC in it could otherwise drive.
pub fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect()
}

pub fn scan(packages: &[PackageText], options: &Options, progress: &dyn Progress) -> Scan {
    use rayon::prelude::*;
    progress.phase("scan", packages.len() as u64);
    let names = rules::NameIndex::new(packages);
    let mut per: Vec<Vec<Finding>> = packages
        .par_iter()
        .map(|p| {
            let f = rules::scan_package(p, &names);
            progress.advance(1);
            f
        })
        .collect();
    rules::backdoored_copies(packages, &mut per);
    let per: Vec<(Vec<Finding>, Verdict)> = packages
        .iter()
        .zip(per)
        .map(|(p, mut f)| {
            for x in &mut f {
                x.acknowledged = options
                    .allow
                    .iter()
                    .any(|a| a.rule == x.rule && a.path == x.path && a.file_hash == x.file_hash);
            }
            // One finding per rule and line: the strongest (then the first by snippet), so a
            // weak look-alike on the line cannot hide a strong one.
            f.sort_by(|a, b| {
                (&a.path, a.line, &a.rule)
                    .cmp(&(&b.path, b.line, &b.rule))
                    .then_with(|| strength(b).total_cmp(&strength(a)))
                    .then_with(|| a.snippet.cmp(&b.snippet))
            });
            f.dedup_by(|a, b| a.path == b.path && a.line == b.line && a.rule == b.rule);
            let v = verdict(p, &f, options);
            (f, v)
        })
        .collect();
    let mut findings = Vec::new();
    let mut verdicts = Vec::new();
    for (f, v) in per {
        findings.extend(f);
        verdicts.push(v);
    }
    verdicts.sort_by(|a, b| a.skill_id.cmp(&b.skill_id));
    findings.sort_by(|a, b| {
        (&a.skill_id, &a.path, a.line, &a.rule).cmp(&(&b.skill_id, &b.path, b.line, &b.rule))
    });
    Scan { findings, verdicts }
}

/// What a finding weighs in a verdict.
fn strength(f: &Finding) -> f64 {
    f.severity.weight() * f.confidence.clamp(0.0, 1.0)
}

fn verdict(p: &PackageText, findings: &[Finding], options: &Options) -> Verdict {
    // A rule that fires many times is one piece of evidence: its strongest finding counts.
    let mut strongest: std::collections::BTreeMap<&str, f64> = std::collections::BTreeMap::new();
    let findings: Vec<&Finding> = findings.iter().filter(|f| !f.acknowledged).collect();
    for f in &findings {
        let s = f.severity.weight() * f.confidence.clamp(0.0, 1.0);
        let e = strongest.entry(f.rule.as_str()).or_insert(0.0);
        *e = e.max(s);
    }
    let mut keep = 1.0;
    for s in strongest.values() {
        keep *= 1.0 - s;
    }
    let score = ((1.0 - keep) * 1e6).round() / 1e6;
    let verdict = if score >= options.unsafe_at {
        VerdictKind::Unsafe
    } else if score >= options.suspicious_at {
        VerdictKind::Suspicious
    } else {
        VerdictKind::Safe
    };
    let mut rules: Vec<String> = findings.iter().map(|f| f.rule.clone()).collect();
    rules.sort();
    rules.dedup();
    let top = findings
        .iter()
        .max_by(|a, b| {
            (a.severity.weight() * a.confidence)
                .total_cmp(&(b.severity.weight() * b.confidence))
                .then_with(|| b.rule.cmp(&a.rule))
        })
        .map(|f| format!("{} {}: {}", f.rule, f.severity.as_str(), f.message))
        .unwrap_or_default();
    Verdict {
        skill_id: p.id.clone(),
        registry: p.registry.to_string(),
        verdict,
        score,
        findings: u32::try_from(findings.len()).unwrap_or(u32::MAX),
        rules,
        top,
    }
}

/// What a scan did, per registry: one line each and a total.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Per registry: (name, packages, suspicious, unsafe, findings).
    pub registries: Vec<RegistryCounts>,
    /// Findings per category, sorted by category.
    pub categories: Vec<(String, usize)>,
}

/// One registry's counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RegistryCounts {
    /// The registry.
    pub registry: String,
    /// Packages scanned.
    pub packages: usize,
    /// `suspicious` verdicts.
    pub suspicious: usize,
    /// `unsafe` verdicts.
    pub r#unsafe: usize,
    /// Findings (all severities).
    pub findings: usize,
}

impl Summary {
    /// Counts of a scan.
    pub fn of(scan: &Scan) -> Summary {
        use std::collections::BTreeMap;
        let mut regs: BTreeMap<&str, RegistryCounts> = BTreeMap::new();
        for v in &scan.verdicts {
            let r = regs.entry(&v.registry).or_insert_with(|| RegistryCounts {
                registry: v.registry.clone(),
                ..RegistryCounts::default()
            });
            r.packages += 1;
            r.findings += v.findings as usize;
            match v.verdict {
                VerdictKind::Suspicious => r.suspicious += 1,
                VerdictKind::Unsafe => r.r#unsafe += 1,
                VerdictKind::Safe => {}
            }
        }
        let mut cats: BTreeMap<&str, usize> = BTreeMap::new();
        for f in &scan.findings {
            *cats.entry(f.category.as_str()).or_default() += 1;
        }
        Summary {
            registries: regs.into_values().collect(),
            categories: cats.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{:<40} {:>8} {:>10} {:>7} {:>8}",
            "registry", "packages", "suspicious", "unsafe", "findings"
        )?;
        let (mut packages, mut suspicious, mut unsafe_, mut findings) = (0, 0, 0, 0);
        for r in &self.registries {
            writeln!(
                f,
                "{:<40} {:>8} {:>10} {:>7} {:>8}",
                r.registry, r.packages, r.suspicious, r.r#unsafe, r.findings
            )?;
            packages += r.packages;
            suspicious += r.suspicious;
            unsafe_ += r.r#unsafe;
            findings += r.findings;
        }
        writeln!(
            f,
            "{:<40} {packages:>8} {suspicious:>10} {unsafe_:>7} {findings:>8}",
            "total"
        )?;
        if !self.categories.is_empty() {
            let cats: Vec<String> = self
                .categories
                .iter()
                .map(|(c, n)| format!("{c} {n}"))
                .collect();
            writeln!(f, "findings by category: {}", cats.join(", "))?;
        }
        Ok(())
    }
}
