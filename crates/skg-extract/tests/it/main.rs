//! Integration tests of `skg-extract` through its public API.
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files on disk"
)]
#![allow(
    clippy::print_stderr,
    reason = "tests say on stderr which parts they skipped and why"
)]

mod bad_inputs;
mod hostile;
mod roles;
mod shared_corpus;

use std::path::Path;

use skg_extract::{Extraction, NoProgress, Options, RegistrySource, extract};
use skg_model::{RegistryKind, RegistryName};

pub(crate) fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(p, bytes).unwrap_or_else(|e| panic!("{e}"));
}

pub(crate) fn run(root: &Path, options: &Options) -> Extraction {
    let src = RegistrySource {
        name: RegistryName("t".into()),
        display_path: "t".into(),
        local_path: root.to_path_buf(),
        kind: RegistryKind::Skills,
        git: None,
        rev: None,
        source: None,
        license: None,
    };
    extract(&[src], options, &NoProgress)
}

pub(crate) const GOOD: &str =
    "---\nname: good\ndescription: A good skill.\n---\n# Good\n\nDo the thing.\n";
