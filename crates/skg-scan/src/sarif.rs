//! Findings as a SARIF 2.1.0 log (what GitHub code scanning and other SARIF viewers read).

use serde_sarif::sarif::{
    ArtifactLocation, Location, LogicalLocation, Message, MultiformatMessageString,
    PhysicalLocation, PropertyBag, Region, ReportingConfiguration, ReportingDescriptor,
    Result as SarifResult, ResultLevel, Run, Sarif, Suppression, Tool, ToolComponent,
};

use crate::{Allow, Finding, Severity, rules::RULES};

/// The SARIF log of `findings`. Paths are given relative to `uri_base` (the registry root a
/// finding's path is relative to: `%SRCROOT%` when scanning a repository's own registry).
/// Only findings of at least `min` severity are included. A catalog tool's finding (its path
/// `<catalog file>#<tool>`, [`skg_model::tool_path`]) is located in the catalog file at the
/// tool's entry ([`Finding::entry_line`]; line 1 when extract could not tell where it is; the
/// column too when extract knows it, [`Finding::entry_column`], as one-line documents need), with
/// the tool as its logical location (kind `function`) and named in its message. A finding the
/// allow file acknowledges ([`Finding::acknowledged`]) is kept with a suppression (SARIF 3.35:
/// kind `external` — the allow file —, status `accepted`, the entry's reason as its
/// justification), so a viewer that reads suppressions shows it as reviewed rather than open or
/// gone (GitHub code scanning does not: docs/scan.md, "Allow files").
pub fn sarif(findings: &[Finding], allow: &[Allow], min: Severity, version: &str) -> Sarif {
    let rules: Vec<ReportingDescriptor> = RULES
        .iter()
        .map(|r| {
            let mut props = PropertyBag::builder()
                .tags(vec!["security".to_owned(), r.category.as_str().to_owned()])
                .build();
            props.additional_properties.insert(
                "security-severity".into(),
                serde_json::Value::String(security_severity(r.severity).into()),
            );
            ReportingDescriptor::builder()
                .id(r.id)
                .name(r.name)
                .short_description(MultiformatMessageString::builder().text(r.name).build())
                .full_description(MultiformatMessageString::builder().text(r.help).build())
                .help(MultiformatMessageString::builder().text(r.help).build())
                .default_configuration(
                    ReportingConfiguration::builder()
                        .level(serde_json::to_value(level(r.severity)).unwrap_or_default())
                        .build(),
                )
                .properties(props)
                .build()
        })
        .collect();
    let results: Vec<SarifResult> = findings
        .iter()
        .filter(|f| f.severity >= min)
        .map(|f| {
            let rule_index = RULES.iter().position(|r| r.id == f.rule).unwrap_or(0);
            let tool = tool_of(f);
            let mut text = format!("{} — {}", f.message, f.snippet);
            if let Some((_, t)) = tool {
                text = format!("tool `{t}`: {text}");
            }
            if !f.context.is_empty() {
                text = format!("{text} ({})", f.context.join("; "));
            }
            let mut props = PropertyBag::builder().build();
            for (k, v) in [
                ("skill", f.skill_id.as_str().to_owned()),
                ("severity", f.severity.as_str().to_owned()),
                ("confidence", format!("{:.2}", f.confidence)),
            ] {
                props
                    .additional_properties
                    .insert(k.into(), serde_json::Value::String(v));
            }
            let mut fingerprints = std::collections::BTreeMap::new();
            fingerprints.insert(
                "skgFinding/v1".to_owned(),
                blake3::hash(format!("{}\0{}\0{}", f.rule, f.path, f.snippet).as_bytes()).to_hex()
                    [..32]
                    .to_owned(),
            );
            let result = SarifResult::builder()
                .rule_id(f.rule.clone())
                .rule_index(i64::try_from(rule_index).unwrap_or(0))
                .level(level(f.severity))
                .message(Message::builder().text(text).build())
                .locations(vec![location(f, tool)])
                .partial_fingerprints(fingerprints)
                .properties(props);
            if !f.acknowledged {
                return result.build();
            }
            let reason = allow
                .iter()
                .find(|a| a.rule == f.rule && a.path == f.path && a.file_hash == f.file_hash)
                .map(|a| a.reason.trim())
                .filter(|r| !r.is_empty())
                .unwrap_or("acknowledged in the allow file");
            result
                .suppressions(vec![
                    Suppression::builder()
                        .kind(serde_json::Value::String("external".into()))
                        .status(serde_json::Value::String("accepted".into()))
                        .justification(reason)
                        .build(),
                ])
                .build()
        })
        .collect();
    let driver = ToolComponent::builder()
        .name("skg scan")
        .semantic_version(version)
        .information_uri("https://github.com/skg-dev/skg/blob/main/SECURITY.md")
        .rules(rules)
        .build();
    Sarif::builder()
        .schema(serde_sarif::sarif::SCHEMA_URL)
        .version(serde_json::Value::String("2.1.0".into()))
        .runs(vec![
            Run::builder()
                .tool(Tool::builder().driver(driver).build())
                .results(results)
                .column_kind(serde_json::Value::String("unicodeCodePoints".into()))
                .build(),
        ])
        .build()
}

/// (catalog file, tool) when `f` is about a catalog's tool: its path is the tool's path and its
/// package is that tool (a package file's path starts with the package folder).
fn tool_of(f: &Finding) -> Option<(&str, &str)> {
    skg_model::split_tool_path(&f.path)
        .filter(|(_, tool)| f.skill_id.as_str().ends_with(&format!(":{tool}")))
}

fn location(f: &Finding, tool: Option<(&str, &str)>) -> Location {
    // A tool's entry line (0 is no line), and its column with it: a one-line document's tools
    // differ only there.
    let entry_line = f.entry_line.filter(|&l| l > 0);
    let (file, line) = match tool {
        Some((file, _)) => (file, entry_line.unwrap_or(1)),
        None => (f.path.as_str(), f.line.max(1)),
    };
    let column = tool.and(entry_line).and(f.entry_column).filter(|&c| c > 0);
    let region = match column {
        Some(column) => Region::builder()
            .start_line(i64::from(line))
            .start_column(i64::from(column))
            .build(),
        None => Region::builder().start_line(i64::from(line)).build(),
    };
    let physical = PhysicalLocation::builder()
        .artifact_location(
            ArtifactLocation::builder()
                .uri(uri(file))
                .uri_base_id("%SRCROOT%")
                .build(),
        )
        .region(region)
        .build();
    match tool {
        Some((_, name)) => Location::builder()
            .physical_location(physical)
            .logical_locations(vec![
                LogicalLocation::builder()
                    .name(name)
                    .kind("function")
                    .build(),
            ])
            .build(),
        None => Location::builder().physical_location(physical).build(),
    }
}

fn level(s: Severity) -> ResultLevel {
    match s {
        Severity::Low => ResultLevel::Note,
        Severity::Medium => ResultLevel::Warning,
        Severity::High | Severity::Critical => ResultLevel::Error,
    }
}

/// GitHub's `security-severity` (CVSS-like 0–10) by severity.
fn security_severity(s: Severity) -> &'static str {
    match s {
        Severity::Low => "3.0",
        Severity::Medium => "5.5",
        Severity::High => "8.0",
        Severity::Critical => "9.5",
    }
}

/// A relative path as a URI reference (percent-encoding what a URI may not hold).
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char);
            }
            _ => {
                use std::fmt::Write as _;
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}
