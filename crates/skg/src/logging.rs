//! tracing subscriber on stderr; `-v`/`-q` pick the level, `RUST_LOG` overrides.

use tracing_subscriber::EnvFilter;

use crate::GlobalArgs;

/// Installs the stderr subscriber.
pub fn init(global: &GlobalArgs) {
    let level = match (global.quiet, global.verbose) {
        (q, _) if q >= 2 => "error",
        (1, _) | (_, 0) => "warn",
        (_, 1) => "info",
        (_, 2) => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
