//! `skg scan`: registries → `findings`, `verdicts` (and a SARIF log).

use std::io::Write;

use anyhow::Context as _;

use crate::{ExitStatus, GlobalArgs, args::ScanArgs, progress::Bar};

pub(crate) fn run(args: &ScanArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let labels = match &args.labels {
        Some(p) => Some(
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
        None => None,
    };
    let job = skg_pipeline::scan::Job {
        inputs: &args.inputs,
        out: &args.out,
        options: skg_scan::Options {
            unsafe_at: args.unsafe_at,
            suspicious_at: args.suspicious_at,
            allow: match &args.allow {
                Some(p) => read_allow(p)?.allow,
                None => Vec::new(),
            },
        },
        limits: args.limits.options().limits,
        sarif: args
            .sarif
            .as_deref()
            .map(|p| (p, args.sarif_min_severity.into())),
        labels: labels.as_deref(),
    };
    let bar = Bar::new(global.quiet > 0);
    let (report, scan) = skg_pipeline::scan::execute(&job, &bar)?;
    bar.finish();
    if args.show_findings {
        let mut err = std::io::stderr().lock();
        // Paths, headings in the context and messages come from the registry: a control
        // character in them (an ESC) must not reach the terminal.
        let shown = skg_scan::printable;
        for f in &scan.findings {
            let context = if f.context.is_empty() {
                String::new()
            } else {
                format!(" [{}]", shown(&f.context.join("; ")))
            };
            writeln!(
                err,
                "{}:{}: {} {} ({:.2}) {}: {}{context}\n    {}",
                shown(&f.path),
                f.line,
                f.severity.as_str(),
                f.rule,
                f.confidence,
                f.category.as_str(),
                shown(&f.message),
                shown(&f.snippet)
            )?;
        }
    }
    if let Some(path) = &args.write_allow {
        let current: Vec<skg_scan::Finding> = scan
            .findings
            .iter()
            .filter(|f| !f.acknowledged)
            .cloned()
            .collect();
        let mut file = skg_scan::AllowFile::of(
            &current,
            args.sarif_min_severity.into(),
            "baseline: acknowledged when the allow file was written",
        );
        if let Some(p) = &args.allow {
            file.allow.extend(read_allow(p)?.allow);
            file.allow.sort();
            file.allow.dedup();
        }
        let text = toml::to_string(&file).context("cannot write the allow file")?;
        skg_artifact::write_file(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        tracing::info!(
            entries = file.allow.len(),
            "allow file written to {}",
            path.display()
        );
    }
    super::emit(args.format, &report, |out| write!(out, "{report}"))?;
    // A security check fails closed: a catalog it could not read was not checked.
    Ok(if report.complete() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// An allow file (TOML), with its path in any error.
pub(crate) fn read_allow(path: &std::path::Path) -> anyhow::Result<skg_scan::AllowFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("{}: not an allow file", path.display()))
}
