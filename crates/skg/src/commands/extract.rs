//! `skg extract`: registries → `skills`, `documents`, `edges`, `diagnostics` tables.

use std::io::Write;

use anyhow::Context as _;

use crate::{ExitStatus, GlobalArgs, args::ExtractArgs, progress::Bar};

pub(crate) fn run(args: &ExtractArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let bar = Bar::new(global.quiet > 0);
    let (report, x) =
        skg_pipeline::extract::execute(&args.inputs, &args.out, &args.limits.options(), &bar)?;
    bar.finish();
    if args.show_diagnostics {
        let mut err = std::io::stderr().lock();
        for d in &x.diagnostics {
            writeln!(err, "{d}")?;
        }
    }
    if let Some(file) = &args.capability_labels {
        let labels = read_capability_labels(file)?;
        let eval = skg_extract::capability::evaluate(&x.skills, &labels);
        return super::emit(
            args.format,
            &serde_json::json!({"extract": &report, "capabilities": &eval}),
            |out| write!(out, "{report}{eval}"),
        )
        .map(|()| ExitStatus::Success);
    }
    super::emit(args.format, &report, |out| write!(out, "{report}"))?;
    Ok(ExitStatus::Success)
}

/// `--capability-labels`: a CSV `registry,path,type[,also]`.
pub(crate) fn read_capability_labels(
    file: &std::path::Path,
) -> anyhow::Result<Vec<skg_extract::capability::CapabilityLabel>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    skg_extract::capability::CapabilityLabel::parse_csv(&text, &file.display().to_string())
        .map_err(anyhow::Error::msg)
}
