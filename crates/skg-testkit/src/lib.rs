//! Test inputs that live outside the repository — `../shared` (the development sets, beside the
//! checkout) and the embedding model (installed by `scripts/fetch-model.sh`) — found the same way
//! in every crate's tests.
//!
//! On a developer's machine a missing input skips the part of a test that needs it, and says so
//! on stderr. When [`REQUIRE_VAR`] is `1` (CI sets it in `.ci/run`, after installing the model),
//! a missing input fails the test instead: nothing passes in CI by not running. Tests never
//! download anything themselves.

#![allow(clippy::disallowed_methods, reason = "tests find their inputs on disk")]

use std::path::{Path, PathBuf};

/// The environment variable that turns a missing input into a failure.
pub const REQUIRE_VAR: &str = "SKG_REQUIRE_TEST_INPUTS";
/// The environment variable naming the shared development sets' folder when it is not
/// `../shared` beside the checkout.
pub const SHARED_VAR: &str = "SKG_SHARED_DIR";

/// Whether every input must be present (CI).
pub fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1")
}

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `found`, or — when it is `None` — a skip (said on stderr) on a developer's machine and a
/// failure in CI. `what` names the input and how to get it.
pub fn found<T>(what: &str, found: Option<T>) -> Option<T> {
    if found.is_none() {
        assert!(
            !required(),
            "{what} is missing and {REQUIRE_VAR}=1: this run must not skip it"
        );
        #[expect(clippy::print_stderr, reason = "a skipped test says why")]
        {
            eprintln!("skipped: {what} is missing (set {REQUIRE_VAR}=1 to fail instead)");
        }
    }
    found
}

/// `<shared>/<rel>`, when it is there (see [`found`]); `<shared>` is `$SKG_SHARED_DIR`, else
/// `../shared` beside the checkout.
pub fn shared(rel: &str) -> Option<PathBuf> {
    let root = std::env::var_os(SHARED_VAR).map_or_else(|| repo().join("../shared"), PathBuf::from);
    let p = root.join(rel);
    found(
        &format!("{}/{rel} (the shared development sets)", root.display()),
        p.exists().then_some(p),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_present_input_is_returned_and_a_missing_one_is_none_unless_required() {
        assert_eq!(found("x", Some(3)), Some(3));
        if !required() {
            assert_eq!(found::<u8>("nothing", None), None);
        }
        assert!(repo().join("Cargo.toml").is_file());
    }
}
