//! A progress bar on stderr when it is a terminal; nothing when piped or quiet.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress for the stage crates.
#[derive(Debug)]
pub(crate) struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    pub(crate) fn new(quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Self { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix}{spinner} {msg:<32} [{bar:30}] {human_pos}/{human_len} ({elapsed})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        Self { bar: Some(bar) }
    }

    pub(crate) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl skg_extract::Progress for Bar {
    fn phase(&self, name: &str, total: u64) {
        if let Some(b) = &self.bar {
            b.set_message(name.to_owned());
            b.set_length(total);
            b.set_position(0);
        }
    }

    fn advance(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// Names the stage the next phases belong to (`[2/4 canonicalize] `).
    fn stage(&self, label: &str) {
        if let Some(b) = &self.bar {
            b.set_prefix(format!("[{label}] "));
        }
    }
}
