//! `skg schema`: the output tables, documented from their declarations.

use std::io::Write;

use crate::{ExitStatus, args::SchemaArgs};

pub(crate) fn run(_args: &SchemaArgs) -> anyhow::Result<ExitStatus> {
    let md = skg_store::tables::markdown(skg_store::tables::STAGES);
    std::io::stdout().lock().write_all(md.as_bytes())?;
    Ok(ExitStatus::Success)
}
