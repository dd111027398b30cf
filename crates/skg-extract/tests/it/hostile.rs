//! Hostile registries (issue 8): inputs built to hurt a parser or a walker. Each must end as data
//! plus located diagnostics — no panic, no hang, no unbounded memory, nothing read from outside the
//! registry — and the good skill next to it must come through untouched.

use std::{
    fmt::Write as _,
    time::{Duration, Instant},
};

use skg_extract::{Limits, Options};
use skg_model::DiagnosticCode as C;

use crate::{GOOD, run, write};

fn good_is_intact(x: &skg_extract::Extraction) {
    let good = x
        .skills
        .iter()
        .find(|s| s.path == "good/SKILL.md")
        .unwrap_or_else(|| panic!("the good skill was lost"));
    assert_eq!(good.name, "good");
}

fn has(x: &skg_extract::Extraction, path: &str, code: C) -> bool {
    x.diagnostics
        .iter()
        .any(|d| d.path == path && d.code == code)
}

/// "Billion laughs": nine levels of aliases, each doubling ten times. serde-saphyr's budget stops
/// the expansion; the frontmatter is reported, the skill kept with what could be salvaged.
#[test]
fn yaml_alias_bomb_is_refused_quickly() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut fm = String::from(
        "---\nname: bomb\ndescription: laughs\na0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..10 {
        let p = i - 1;
        let _ = writeln!(
            fm,
            "a{i}: &a{i} [*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p}]"
        );
    }
    fm.push_str("---\n# Body\n");
    write(dir.path(), "bomb/SKILL.md", fm.as_bytes());
    write(dir.path(), "good/SKILL.md", GOOD.as_bytes());
    let t = Instant::now();
    let x = run(dir.path(), &Options::default());
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    good_is_intact(&x);
    let bomb = x
        .skills
        .iter()
        .find(|s| s.path == "bomb/SKILL.md")
        .unwrap_or_else(|| panic!("the bomb's package was dropped"));
    assert!(
        bomb.frontmatter.json.len() < 1_000_000,
        "expanded: {} bytes",
        bomb.frontmatter.json.len()
    );
    assert!(
        x.diagnostics
            .iter()
            .any(|d| d.path == "bomb/SKILL.md" && d.code.is_yaml_failure()),
        "{:?}",
        x.diagnostics
    );
}

/// 100,000 levels of YAML flow nesting and of JSON nesting in a catalog: a diagnostic, no stack
/// overflow.
#[test]
fn deep_nesting_in_yaml_and_json() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let depth = 100_000;
    let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    write(
        dir.path(),
        "deep/SKILL.md",
        format!("---\nname: deep\ndescription: nested\nx: {deep}\n---\n# Body\n").as_bytes(),
    );
    write(dir.path(), "good/SKILL.md", GOOD.as_bytes());
    let x = run(dir.path(), &Options::default());
    good_is_intact(&x);
    assert!(x.skills.iter().any(|s| s.path == "deep/SKILL.md"));
    assert!(
        x.diagnostics.iter().any(|d| d.path == "deep/SKILL.md"),
        "the nesting is reported"
    );
    // A catalog that is one deep array.
    let (tools, diags) = skg_extract::fuzzing::catalog_bytes(deep.as_bytes(), &Limits::default());
    assert_eq!(tools, 0);
    assert!(diags >= 1);
    let obj = format!("{}{}", "{\"a\":".repeat(depth), "}".repeat(depth));
    let (tools, diags) = skg_extract::fuzzing::catalog_bytes(obj.as_bytes(), &Limits::default());
    assert_eq!(tools, 0);
    assert!(diags >= 1);
}

/// A 100 MB SKILL.md (sparse: no disk used) and a 100 MB script: read up to the limit, the rest
/// reported; memory stays bounded by the limit, not the file.
#[test]
fn hundred_megabyte_files_are_cut_at_the_limit() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // The first 8 KiB are text (the binary probe), the sparse rest NUL bytes.
    let mut head = b"---\nname: huge\ndescription: big\n---\n# Body\n".to_vec();
    head.extend(std::iter::repeat_n(b'a', 9000));
    head.push(b'\n');
    write(dir.path(), "huge/SKILL.md", &head);
    let f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("huge/SKILL.md"))
        .unwrap_or_else(|e| panic!("{e}"));
    f.set_len(100 * 1024 * 1024)
        .unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), "huge/scripts/big.js", b"const a = 1;\n");
    let g = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("huge/scripts/big.js"))
        .unwrap_or_else(|e| panic!("{e}"));
    g.set_len(100 * 1024 * 1024)
        .unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), "good/SKILL.md", GOOD.as_bytes());
    let x = run(
        dir.path(),
        &Options {
            limits: Limits {
                max_file_bytes: 1024 * 1024,
                ..Limits::default()
            },
        },
    );
    good_is_intact(&x);
    let huge = x
        .skills
        .iter()
        .find(|s| s.path == "huge/SKILL.md")
        .unwrap_or_else(|| panic!("huge lost"));
    assert_eq!(huge.bytes, 100 * 1024 * 1024);
    assert!(has(&x, "huge/SKILL.md", C::FileTooLarge));
    // The sparse tail is NUL bytes: past the first 8 KiB probe, they are text, so the script is
    // cut at the limit and flagged too.
    assert!(
        has(&x, "huge/scripts/big.js", C::FileTooLarge)
            || has(&x, "huge/scripts/big.js", C::BinaryFile)
    );
}

/// 20,000 tiny files in one folder with a 5,000-file limit: the walk stops at the limit with one
/// diagnostic, and what was read before it is kept.
#[test]
fn a_folder_of_many_tiny_files_is_bounded_by_the_file_limit() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(
        dir.path(),
        "a-good/SKILL.md",
        GOOD.replace("name: good", "name: a-good").as_bytes(),
    );
    for i in 0..20_000 {
        write(dir.path(), &format!("z-noise/f{i:05}.txt"), b"x");
    }
    let t = Instant::now();
    let x = run(
        dir.path(),
        &Options {
            limits: Limits {
                max_files: 5_000,
                ..Limits::default()
            },
        },
    );
    assert!(t.elapsed() < Duration::from_mins(1));
    assert!(x.skills.iter().any(|s| s.name == "a-good"));
    assert_eq!(
        x.diagnostics
            .iter()
            .filter(|d| d.code == C::TooManyFiles)
            .count(),
        1
    );
}

/// Names that are not UTF-8, NUL bytes inside text, a FIFO named SKILL.md (reading it would
/// block forever), and a path with `..` in a relative link.
#[test]
fn odd_names_nul_bytes_fifos_and_dot_dot_links() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    // A skill folder whose name is not UTF-8.
    let odd = root.join(std::ffi::OsStr::from_bytes(b"odd-\xff\xfe"));
    std::fs::create_dir_all(&odd).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        odd.join("SKILL.md"),
        "---\nname: odd\ndescription: odd folder\n---\n# Body\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // NUL bytes after the probe window: text with NULs.
    let mut nul = b"---\nname: nul\ndescription: has NULs\n---\n".to_vec();
    nul.extend(std::iter::repeat_n(b'a', 9000));
    nul.extend(b"\0\0\0 after\n");
    write(root, "nul/SKILL.md", &nul);
    // A FIFO where a SKILL.md should be.
    std::fs::create_dir_all(root.join("fifo")).unwrap_or_else(|e| panic!("{e}"));
    let status = std::process::Command::new("mkfifo")
        .arg(root.join("fifo/SKILL.md"))
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success());
    // Links that climb out of the registry.
    write(
        root,
        "climb/SKILL.md",
        b"---\nname: climb\ndescription: links out\n---\nSee [secrets](../../../../etc/passwd) and [up](../good/SKILL.md).\n",
    );
    write(root, "good/SKILL.md", GOOD.as_bytes());
    let t = Instant::now();
    let x = run(root, &Options::default());
    assert!(t.elapsed() < Duration::from_secs(20), "no hang on the FIFO");
    good_is_intact(&x);
    assert!(
        x.skills.iter().any(|s| s.name == "odd"),
        "non-UTF-8 folder read"
    );
    assert!(x.skills.iter().any(|s| s.name == "nul"));
    assert!(
        !x.skills.iter().any(|s| s.path == "fifo/SKILL.md"),
        "a FIFO is not read"
    );
    // `..` that stays inside the registry resolves; the one climbing out of it resolves to
    // nothing (no edge, nothing read from /etc).
    let from_climb: Vec<&str> = x
        .edges
        .iter()
        .filter(|e| e.src.as_str().ends_with(":climb"))
        .map(|e| e.dst.as_str())
        .collect();
    assert_eq!(from_climb.len(), 1, "{from_climb:?}");
    assert!(from_climb[0].ends_with(":good"), "{from_climb:?}");
    assert!(x.documents.iter().all(|d| !d.file.contains("passwd")));
}

/// Scripts built to make tree-sitter slow or deep: 200,000 nested parentheses / brackets, and a
/// script parsed with a 1 ms budget gets a `script-timeout` diagnostic instead of facts.
#[test]
fn slow_and_deep_scripts_are_bounded() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let depth = 200_000;
    write(
        dir.path(),
        "deep/SKILL.md",
        b"---\nname: deep\ndescription: deep scripts\n---\n# Body\n",
    );
    write(
        dir.path(),
        "deep/scripts/parens.js",
        format!(
            "const x = {}1{};\nrequire('./a');\n",
            "(".repeat(depth),
            ")".repeat(depth)
        )
        .as_bytes(),
    );
    write(
        dir.path(),
        "deep/scripts/lists.py",
        format!(
            "x = {}{}\nimport os\n",
            "[".repeat(depth),
            "]".repeat(depth)
        )
        .as_bytes(),
    );
    let mut long = String::new();
    for i in 0..40_000 {
        let _ = writeln!(
            long,
            "function f{i}(a) {{ return g{i}(a) + h(a, [1, 2, {{k: `${{a}}`}}]); }}"
        );
    }
    write(dir.path(), "deep/scripts/long.ts", long.as_bytes());
    write(dir.path(), "good/SKILL.md", GOOD.as_bytes());
    let t = Instant::now();
    let x = run(dir.path(), &Options::default());
    assert!(t.elapsed() < Duration::from_mins(1), "{:?}", t.elapsed());
    good_is_intact(&x);
    // With a 1 ms budget, the 40,000-function file cannot be parsed in time: reported, no facts.
    let x = run(
        dir.path(),
        &Options {
            limits: Limits {
                parse_budget: Duration::from_millis(1),
                ..Limits::default()
            },
        },
    );
    good_is_intact(&x);
    assert!(
        has(&x, "deep/scripts/long.ts", C::ScriptTimeout),
        "{:?}",
        x.diagnostics
    );
}

/// A file that grows while it is read (a writer appends in a loop): the read is bounded by the
/// size limit and the run finishes.
#[test]
fn a_file_growing_while_read_is_bounded() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(
        dir.path(),
        "grow/SKILL.md",
        b"---\nname: grow\ndescription: grows\n---\n# Body\n",
    );
    write(dir.path(), "good/SKILL.md", GOOD.as_bytes());
    let path = dir.path().join("grow/SKILL.md");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap_or_else(|e| panic!("{e}"));
            let line = "more text appended while the file is read\n".repeat(100);
            let mut written = 0usize;
            // At most 32 MB: enough to outgrow the limit many times, bounded on disk.
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && written < 32 << 20 {
                let _ = f.write_all(line.as_bytes());
                written += line.len();
            }
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    let x = run(
        dir.path(),
        &Options {
            limits: Limits {
                max_file_bytes: 256 * 1024,
                ..Limits::default()
            },
        },
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = writer.join();
    good_is_intact(&x);
    let grow = x
        .skills
        .iter()
        .find(|s| s.path == "grow/SKILL.md")
        .unwrap_or_else(|| panic!("grow lost"));
    assert!(grow.body.len() <= 256 * 1024);
}
