//! `skg extract`: registries → `skills`, `documents`, `edges`, `diagnostics` tables.

use std::io::Write;

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
    super::emit(args.format, &report, |out| write!(out, "{report}"))?;
    Ok(ExitStatus::Success)
}
