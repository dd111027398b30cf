//! Names and copies: typosquats of popular names, and copies of a package that add dangerous code.

use super::{BACKDOOR, Ctx, Place, TYPO, name_parts};
use crate::{Category, Finding, Severity};
use skg_model::PackageText;
use std::collections::BTreeMap;

/// A package's name, or a word of it, one edit away from a popular name ([`NameIndex::near`]),
/// unless it is a word the scan's packages use ([`NameIndex::is_common`]: `slack-bolt-events`
/// is no misspelling of `black`).
pub(super) fn typosquat_rule(ctx: &mut Ctx<'_>, name: &str) {
    let lower = name.to_ascii_lowercase();
    let candidates = std::iter::once(lower.clone()).chain(name_parts(&lower));
    for word in candidates {
        if ctx.names.is_common(&word) {
            continue;
        }
        if let Some(near) = ctx.names.near(&word) {
            let near = near.to_owned();
            ctx.emit(
                TYPO,
                0.6,
                1,
                name,
                format!("the name `{word}` is one edit away from the popular `{near}`"),
                Vec::new(),
                Place::Script,
                0,
            );
            return;
        }
    }
}

/// Categories whose findings make a copy "backdoored" when its twin lacks them.
pub(super) const ADDED_DANGER: &[Category] = &[
    Category::RemoteExecution,
    Category::ReverseShell,
    Category::Exfiltration,
    Category::Persistence,
    Category::DefenseEvasion,
    Category::PrivilegeEscalation,
    Category::CryptoMining,
    Category::Obfuscation,
    Category::CredentialAccess,
];

/// Packages that share a name and a description (copies, across registries or within one): a
/// copy with a dangerous finding (medium or worse) whose rule never fires on another copy gets a
/// `SKG-DECEPT-002` finding naming that copy — the classic backdoored fork of a popular skill.
pub(crate) fn backdoored_copies(packages: &[PackageText], findings: &mut [Vec<Finding>]) {
    let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, p) in packages.iter().enumerate() {
        if let (Some(n), Some(d)) = (&p.name, &p.description)
            && d.len() >= 20
        {
            let norm = |s: &str| {
                s.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase()
            };
            groups.entry((norm(n), norm(d))).or_default().push(i);
        }
    }
    for members in groups.values().filter(|m| m.len() >= 2) {
        let rules_of = |i: usize| -> std::collections::BTreeSet<String> {
            findings[i]
                .iter()
                .filter(|f| ADDED_DANGER.contains(&f.category) && f.severity >= Severity::Medium)
                .map(|f| f.rule.clone())
                .collect()
        };
        let sets: Vec<(usize, std::collections::BTreeSet<String>)> =
            members.iter().map(|&i| (i, rules_of(i))).collect();
        // The clean copies: those with no dangerous rule at all.
        let clean: Vec<usize> = sets
            .iter()
            .filter(|(_, r)| r.is_empty())
            .map(|(i, _)| *i)
            .collect();
        let Some(&twin) = clean.first() else {
            continue;
        };
        for (i, rules) in &sets {
            if rules.is_empty() {
                continue;
            }
            let Some(worst) = findings[*i]
                .iter()
                .filter(|f| rules.contains(&f.rule))
                .max_by(|a, b| a.severity.cmp(&b.severity).then(b.rule.cmp(&a.rule)))
                .cloned()
            else {
                continue;
            };
            let message = format!(
                "a copy of {} (same name and description, {} clean cop{}) that adds {}: {}",
                packages[twin].id,
                clean.len(),
                if clean.len() == 1 { "y" } else { "ies" },
                rules.iter().cloned().collect::<Vec<_>>().join(", "),
                worst.message
            );
            findings[*i].push(Finding {
                skill_id: packages[*i].id.clone(),
                rule: BACKDOOR.id.to_owned(),
                category: BACKDOOR.category,
                severity: BACKDOOR.severity,
                base_severity: BACKDOOR.severity,
                confidence: 0.7,
                path: worst.path.clone(),
                line: worst.line,
                snippet: worst.snippet.clone(),
                message,
                context: vec![format!(
                    "raised: what this copy adds is the dangerous part (`{}` has none of it)",
                    packages[twin].id
                )],
                file_hash: worst.file_hash.clone(),
                acknowledged: false,
                entry_line: worst.entry_line,
                entry_column: worst.entry_column,
            });
        }
    }
}
