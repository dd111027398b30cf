//! Hostile and broken registries: every problem is a located diagnostic, nothing else is lost,
//! nothing aborts.

use skg_extract::{Limits, Options};
use skg_model::{DiagnosticCode as C, FrontmatterStatus as S, Severity};

use crate::{GOOD, run, write};

fn codes_for(x: &skg_extract::Extraction, path: &str) -> Vec<(C, Option<u32>)> {
    x.diagnostics
        .iter()
        .filter(|d| d.path == path)
        .map(|d| (d.code, d.line))
        .collect()
}

/// Each real-world frontmatter failure as a file of its own, read together with a good skill.
#[test]
fn every_frontmatter_failure_kind_is_reported_and_salvaged() {
    let cases: &[(&str, &str, C, S)] = &[
        (
            "colon",
            "---\nname: colon\ndescription: Use when: (1) a, (2) b\n---\nx\n",
            C::YamlUnquotedColon,
            S::Repaired,
        ),
        (
            "unclosed",
            "---\nname: unclosed\ndescription: never closed\n# Body\ntext\n",
            C::FrontmatterUnclosed,
            S::Repaired,
        ),
        (
            "json",
            "---\nname: json\nmetadata: {\"a\":{\"b\":[1]}\n---\nx\n",
            C::YamlBrokenFlow,
            S::Repaired,
        ),
        (
            "hint",
            "---\nname: hint\nargument-hint: [a] [b]\n---\nx\n",
            C::YamlBrokenFlow,
            S::Repaired,
        ),
        (
            "conflict",
            "---\nname: conflict\n<<<<<<< HEAD\ndescription: a\n=======\ndescription: b\n>>>>>>> x\n---\n",
            C::YamlMergeConflict,
            S::Repaired,
        ),
        (
            "control",
            "---\nname: control\ndescription: bad\u{0007}char\n---\n",
            C::YamlControlCharacter,
            S::Repaired,
        ),
        (
            "crlf",
            "---\r\nname: crlf\r\ndescription: windows\r\n---\r\n# Body\r\n",
            C::Io,
            S::Ok,
        ),
        (
            "bom",
            "\u{FEFF}---\nname: bom\ndescription: with a BOM\n---\n",
            C::Io,
            S::Ok,
        ),
        (
            "nofm",
            "# No frontmatter\n\nJust text.\n",
            C::FrontmatterMissing,
            S::Missing,
        ),
        (
            "bare",
            "name: bare\ndescription: no dashes\n\n# Body\n",
            C::FrontmatterUndelimited,
            S::Repaired,
        ),
        ("empty", "", C::FrontmatterMissing, S::Missing),
    ];
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), "good/SKILL.md", GOOD.as_bytes());
    for (folder, text, _, _) in cases {
        write(dir.path(), &format!("{folder}/SKILL.md"), text.as_bytes());
    }
    let x = run(dir.path(), &Options::default());
    assert_eq!(x.skills.len(), cases.len() + 1, "every SKILL.md is a skill");
    for (folder, _, code, status) in cases {
        let path = format!("{folder}/SKILL.md");
        let skill = x
            .skills
            .iter()
            .find(|s| s.path == path)
            .unwrap_or_else(|| panic!("{path} lost"));
        assert_eq!(skill.frontmatter.status, *status, "{path}");
        let codes = codes_for(&x, &path);
        if *code == C::Io {
            assert!(
                codes.iter().all(|(c, _)| !c.is_yaml_failure()),
                "{path}: clean input, no YAML diagnostic: {codes:?}"
            );
        } else {
            assert!(
                codes.iter().any(|(c, line)| c == code && line.is_some()),
                "{path}: expected {code} with a line, got {codes:?}"
            );
        }
        if *status != S::Missing {
            assert_eq!(skill.name, *folder, "{path}: name salvaged");
        }
    }
    let crlf = x
        .skills
        .iter()
        .find(|s| s.path == "crlf/SKILL.md")
        .map(|s| s.body.clone())
        .unwrap_or_default();
    assert_eq!(crlf, "# Body\n");
}

#[test]
fn binary_skill_file_is_a_diagnostic_and_the_rest_is_read() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), "good/SKILL.md", GOOD.as_bytes());
    write(
        dir.path(),
        "bin/SKILL.md",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0",
    );
    let x = run(dir.path(), &Options::default());
    assert_eq!(
        x.skills.iter().map(|s| s.path.as_str()).collect::<Vec<_>>(),
        vec!["good/SKILL.md"]
    );
    let d = x
        .diagnostics
        .iter()
        .find(|d| d.path == "bin/SKILL.md")
        .unwrap_or_else(|| panic!("no diagnostic"));
    assert_eq!((d.code, d.severity), (C::BinaryFile, Severity::Error));
}

#[test]
fn ten_megabyte_skill_is_read_up_to_the_limit() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut big = String::from("---\nname: big\ndescription: Huge.\n---\n# Big\n\n");
    let line = "All work and no play makes a very long skill file. ".repeat(2) + "\n";
    while big.len() < 10 * 1024 * 1024 {
        big.push_str(&line);
    }
    write(dir.path(), "big/SKILL.md", big.as_bytes());
    write(dir.path(), "good/SKILL.md", GOOD.as_bytes());
    let limit = 4 * 1024 * 1024;
    let x = run(
        dir.path(),
        &Options {
            limits: Limits {
                max_file_bytes: limit,
                ..Limits::default()
            },
        },
    );
    assert_eq!(x.skills.len(), 2);
    let s = x
        .skills
        .iter()
        .find(|s| s.path == "big/SKILL.md")
        .unwrap_or_else(|| panic!("big lost"));
    assert_eq!(s.name, "big");
    assert_eq!(s.bytes, big.len() as u64, "the real size is recorded");
    assert!(
        s.body.len() as u64 <= limit && s.body.len() as u64 > limit - 200,
        "read up to the limit: {}",
        s.body.len()
    );
    assert!(s.body.ends_with('\n'), "cut at a line end");
    assert_eq!(codes_for(&x, "big/SKILL.md"), vec![(C::FileTooLarge, None)]);
    // With a limit above its size it is read whole.
    let x = run(
        dir.path(),
        &Options {
            limits: Limits {
                max_file_bytes: 16 * 1024 * 1024,
                ..Limits::default()
            },
        },
    );
    let s = x
        .skills
        .iter()
        .find(|s| s.path == "big/SKILL.md")
        .unwrap_or_else(|| panic!("big lost"));
    assert_eq!(
        s.body.len(),
        big.len() - "---\nname: big\ndescription: Huge.\n---\n".len()
    );
}

#[test]
fn non_utf8_bytes_are_replaced_with_a_located_warning() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(
        dir.path(),
        "latin/SKILL.md",
        b"---\nname: latin\ndescription: caf\xe9 cr\xe8me\n---\n# Body\n",
    );
    let x = run(dir.path(), &Options::default());
    let s = &x.skills[0];
    assert_eq!(s.description, "caf\u{FFFD} cr\u{FFFD}me");
    assert_eq!(
        codes_for(&x, "latin/SKILL.md"),
        vec![(C::InvalidUtf8, Some(3))]
    );
}

#[cfg(unix)]
#[test]
fn symlink_loops_and_escapes_are_not_followed() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(
        outside.path(),
        "secret/SKILL.md",
        b"---\nname: secret\ndescription: outside the registry\n---\n",
    );
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), "good/SKILL.md", GOOD.as_bytes());
    symlink(dir.path(), dir.path().join("good/loop")).unwrap_or_else(|e| panic!("{e}"));
    symlink(outside.path(), dir.path().join("escape")).unwrap_or_else(|e| panic!("{e}"));
    symlink(
        outside.path().join("secret/SKILL.md"),
        dir.path().join("good/leak.md"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    symlink(dir.path().join("good"), dir.path().join("alias")).unwrap_or_else(|e| panic!("{e}"));
    let x = run(dir.path(), &Options::default());
    let paths: Vec<&str> = x.skills.iter().map(|s| s.path.as_str()).collect();
    // `alias` points inside the root: followed (a second view of `good`); `escape` is not.
    assert_eq!(paths, vec!["alias/SKILL.md", "good/SKILL.md"]);
    assert!(
        x.skills
            .iter()
            .all(|s| !s.body.contains("outside") && !s.description.contains("outside"))
    );
    let mut got: Vec<(String, C)> = x
        .diagnostics
        .iter()
        .filter(|d| d.code != C::NameFolderMismatch)
        .map(|d| (d.path.clone(), d.code))
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            ("alias/leak.md".to_owned(), C::SymlinkEscape),
            ("alias/loop".to_owned(), C::SymlinkLoop),
            ("escape".to_owned(), C::SymlinkEscape),
            ("good/leak.md".to_owned(), C::SymlinkEscape),
            ("good/loop".to_owned(), C::SymlinkLoop),
        ]
    );
}

#[test]
fn file_count_limit_is_a_diagnostic() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for i in 0..5 {
        write(
            dir.path(),
            &format!("s{i}/SKILL.md"),
            GOOD.replace("name: good", &format!("name: s{i}"))
                .as_bytes(),
        );
    }
    let x = run(
        dir.path(),
        &Options {
            limits: Limits {
                max_files: 3,
                ..Limits::default()
            },
        },
    );
    assert_eq!(x.skills.len(), 3);
    assert!(x.diagnostics.iter().any(|d| d.code == C::TooManyFiles));
}
