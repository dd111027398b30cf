//! The shared development corpus (../shared/registries), when present: every SKILL.md becomes a
//! skill or a diagnostic; the known YAML failures are all reported; obra/superpowers' relations
//! are found.

use std::{collections::BTreeSet, path::Path};

use skg_extract::{NoProgress, Options, extract, resolve_inputs};
use skg_model::{EdgeKind, FrontmatterStatus};

fn skill_files(root: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let child = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() && name != ".git" {
            skill_files(root, &child, out);
        } else if ft.is_file() && name.eq_ignore_ascii_case("skill.md") {
            out.push(child);
        }
    }
}

#[test]
fn shared_registries_every_skill_file_is_accounted_for() {
    let Some(root) = skg_testkit::shared("registries") else {
        return;
    };
    let sources = resolve_inputs(std::slice::from_ref(&root)).unwrap_or_else(|e| panic!("{e}"));
    let x = extract(&sources, &Options::default(), &NoProgress);
    let mut expected = 0;
    for src in &sources {
        let mut files = Vec::new();
        skill_files(&src.local_path, "", &mut files);
        expected += files.len();
        let skills: BTreeSet<&str> = x
            .skills
            .iter()
            .filter(|s| s.registry == src.name)
            .map(|s| s.path.as_str())
            .collect();
        let diagnosed: BTreeSet<&str> = x
            .diagnostics
            .iter()
            .filter(|d| d.registry == src.name)
            .map(|d| d.path.as_str())
            .collect();
        for f in &files {
            assert!(
                skills.contains(f.as_str()) || diagnosed.contains(f.as_str()),
                "{}/{f} is neither a skill nor a diagnostic",
                src.name
            );
        }
    }
    assert!(
        expected > 6000,
        "the corpus has ~6,750 SKILL.md, found {expected}"
    );

    // openclaw: frontmatter that strict YAML rejects is reported and kept.
    let broken: Vec<_> = x
        .skills
        .iter()
        .filter(|s| s.registry.as_str() == "openclaw/skills")
        .filter(|s| {
            matches!(
                s.frontmatter.status,
                FrontmatterStatus::Repaired | FrontmatterStatus::Salvaged
            )
        })
        .collect();
    assert!(
        broken.len() >= 53,
        "the 53 known failures (and unclosed blocks) are reported: {}",
        broken.len()
    );
    for s in &broken {
        assert!(
            x.diagnostics
                .iter()
                .any(|d| d.path == s.path && d.line.is_some()),
            "{} has no located diagnostic",
            s.path
        );
        assert!(
            !s.description.is_empty() || s.frontmatter.keys.iter().all(|k| k != "description"),
            "{}: description lost",
            s.path
        );
    }

    // obra/superpowers: REQUIRED SUB-SKILL lines become depends_on edges.
    let obra_deps = x
        .edges
        .iter()
        .filter(|e| {
            e.src.as_str().starts_with("obra/superpowers:")
                && e.dst.as_str().starts_with("obra/superpowers:")
        })
        .filter(|e| e.kind == EdgeKind::DependsOn && e.extractor == "required-prose")
        .count();
    assert!(
        obra_deps >= 3,
        "obra/superpowers REQUIRED SUB-SKILL edges: {obra_deps}"
    );
}
