//! The `skg` binary: parses the command line and hands over to [`skg::run`].

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of glibc's allocator: a route allocates many small, short-lived values
/// (candidate maps, hits, JSON), and under load glibc's malloc and free were 5 % of the gateway's
/// CPU; the route bench's search and bundle part fell 13 % (docs/retrieval.md, stop 38).
/// Allocation never changes an output.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = skg::Cli::parse();
    let telemetry = skg::logging::init(&cli.global);
    let outcome = skg::run(cli);
    // Flush the spans before exiting.
    drop(telemetry);
    match outcome {
        Ok(status) => status.into(),
        Err(err) => {
            // A closed pipe (`skg … | head`) is not an error.
            if err.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            #[expect(clippy::print_stderr, reason = "the one place a fatal error is shown")]
            {
                eprintln!("skg: error: {err}");
                for cause in err.chain().skip(1) {
                    eprintln!("  caused by: {cause}");
                }
            }
            skg::ExitStatus::Error.into()
        }
    }
}
