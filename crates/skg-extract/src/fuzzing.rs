//! Entry points for the fuzz targets (`fuzz/`) and the hostile-input tests: the same code paths
//! `extract` runs, fed from memory instead of the disk. Not a stable API.

use std::{collections::BTreeMap, path::PathBuf};

use skg_model::{RegistryKind, RegistryName};

use crate::{Extraction, Limits, NoProgress, RegistrySource, catalog, load, read, walk};

fn source(kind: RegistryKind) -> RegistrySource {
    RegistrySource {
        name: RegistryName::from("fuzz"),
        display_path: "fuzz".into(),
        local_path: PathBuf::from("/nonexistent/fuzz"),
        kind,
        git: None,
        rev: None,
        source: None,
        license: None,
    }
}

/// Extracts a registry held in memory (registry-relative path → bytes): packages grouped as
/// the walk groups them, then read, parsed, related and split into documents as `extract` does.
pub fn extract_files(files: &[(String, Vec<u8>)], limits: &Limits) -> Extraction {
    let memory = read::Memory(
        files
            .iter()
            .filter(|(p, _)| {
                !p.is_empty()
                    && !p.starts_with('/')
                    && !p.split('/').any(|c| c.is_empty() || c == ".." || c == ".")
            })
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect::<BTreeMap<_, _>>(),
    );
    let packages = walk::group(memory.0.keys().cloned().collect());
    let src = source(RegistryKind::Skills);
    let mut loaded = Vec::new();
    let mut diagnostics = Vec::new();
    for pkg in &packages {
        let (l, d) = load::load_package(&src.name, 0, &src.local_path, &memory, pkg, limits);
        loaded.extend(l);
        diagnostics.extend(d);
    }
    let n = loaded.len();
    crate::finish(
        &[src],
        loaded,
        &[(0, n)],
        diagnostics,
        &[&memory],
        &NoProgress,
    )
}

/// Parses a tool catalog (JSON / JSONL in any host's shape) from bytes, and builds the text the
/// security scan reads of each tool; returns (tools, diagnostics).
pub fn catalog_bytes(bytes: &[u8], limits: &Limits) -> (usize, usize) {
    let size = bytes.len() as u64;
    let n = usize::try_from(limits.max_catalog_bytes)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let text = read::text_from_bytes(
        bytes[..n].to_vec(),
        size,
        limits.max_catalog_bytes,
        catalog::CATALOG_FLAG,
    );
    let (tools, diags) = catalog::parse(&RegistryName::from("fuzz"), 0, "tools.json", text);
    for t in &tools {
        let (scan, _) = catalog::scan_text(t, limits.max_file_bytes);
        assert!(
            scan.len() as u64 <= limits.max_file_bytes,
            "a tool's scan text over the file limit"
        );
    }
    (tools.len(), diags.len())
}

/// Frontmatter parsing (strict, then the repair pass) of a `SKILL.md` text; returns the number of
/// keys read and of issues.
pub fn frontmatter(text: &str) -> (usize, usize) {
    let p = crate::frontmatter::parse(text);
    assert!(p.body_offset <= text.len(), "body offset past the end");
    assert!(
        text.is_char_boundary(p.body_offset),
        "body offset inside a character"
    );
    (p.map.len(), p.issues.len())
}

/// Markdown outline and sections of a text; returns the number of sections.
pub fn markdown(text: &str) -> usize {
    let outline = crate::markdown::outline(text);
    let sections = crate::markdown::sections(text, &outline);
    let _ = crate::markdown::first_paragraph(text);
    sections.len()
}
