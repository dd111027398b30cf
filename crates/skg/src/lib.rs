//! The `skg` command line: glue over the stage crates, no domain logic.
//!
//! The only crate that prints data to stdout, initialises logging and maps results to exit
//! codes (0 success, 1 a check failed, 2 error).

mod args;
mod commands;
pub mod logging;
mod progress;

pub use crate::args::{Cli, Command, GlobalArgs};

/// Exit status, as ruff: 0 success, 1 failure of a check (e.g. a gate), 2 error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Done.
    Success,
    /// Done, and a check failed.
    Failure,
    /// Could not do it.
    Error,
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(s: ExitStatus) -> Self {
        match s {
            ExitStatus::Success => std::process::ExitCode::SUCCESS,
            ExitStatus::Failure => std::process::ExitCode::from(1),
            ExitStatus::Error => std::process::ExitCode::from(2),
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    match cli.command {
        Command::Extract(args) => commands::extract::run(&args, &cli.global),
        Command::Canonicalize(args) => commands::canonicalize::run(&args, &cli.global),
        Command::Score(args) => commands::score::run(&args, &cli.global),
        Command::Measure(args) => commands::measure::run(&args, &cli.global),
        Command::Gate(args) => commands::measure::gate(&args),
        Command::Audit(args) => commands::audit::run(&args, &cli.global),
        Command::Index(args::IndexCommand::Build(args)) => {
            commands::index::build(&args, &cli.global)
        }
        Command::Eval(args) => commands::index::eval(&args),
        Command::Route(args) => commands::index::route(&args),
        Command::Serve(args) => commands::serve::serve(&args, &cli.global),
        Command::Mcp(args) => commands::serve::mcp(&args),
        Command::Keys(cmd) => commands::keys::run(&cmd),
        Command::Scan(args) => commands::scan::run(&args, &cli.global),
        Command::Schema(args) => commands::schema::run(&args),
    }
}
