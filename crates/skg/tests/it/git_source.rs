//! A registry read from a git repository at a pinned revision.

use std::{path::Path, process::Command};

use crate::{rows, skg_json};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("git: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn pinned_rev_is_read_not_the_working_tree() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let repo = tmp.path().join("upstream");
    std::fs::create_dir_all(repo.join("skills/alpha")).expect("test setup: write the fixture");
    git(&repo, &["init", "-q"]);
    std::fs::write(
        repo.join("skills/alpha/SKILL.md"),
        "---\nname: alpha\ndescription: First version.\n---\n# Alpha\n",
    )
    .expect("test setup: write the fixture");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "one"]);
    let first = git(&repo, &["rev-parse", "HEAD"]);
    std::fs::write(
        repo.join("skills/alpha/SKILL.md"),
        "---\nname: alpha\ndescription: Second version.\n---\n# Alpha\n",
    )
    .expect("test setup: write the fixture");
    std::fs::create_dir_all(repo.join("skills/beta")).expect("test setup: write the fixture");
    std::fs::write(
        repo.join("skills/beta/SKILL.md"),
        "---\nname: beta\ndescription: Added later.\n---\n",
    )
    .expect("test setup: write the fixture");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "two"]);
    git(&repo, &["tag", "v2"]);

    let toml = format!(
        "[[registry]]\nname = \"up/old\"\ngit = \"upstream\"\nrev = \"{first}\"\npath = \"skills\"\nlicense = \"MIT\"\n\n[[registry]]\nname = \"up/new\"\ngit = \"upstream\"\nrev = \"v2\"\npath = \"skills\"\n"
    );
    std::fs::write(tmp.path().join("registries.toml"), toml)
        .expect("test setup: write the fixture");
    skg_json(tmp.path(), &["extract", "registries.toml", "-o", "out"]);
    let out = tmp.path().join("out");
    let skills = rows(&out, "skills");
    let got: Vec<(String, String)> = skills
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap_or_default().to_owned(),
                s["description"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("up/new:alpha".to_owned(), "Second version.".to_owned()),
            ("up/new:beta".to_owned(), "Added later.".to_owned()),
            ("up/old:alpha".to_owned(), "First version.".to_owned()),
        ]
    );
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("manifest.json")).expect("read a file the run wrote"),
    )
    .expect("read a file the run wrote");
    let second = git(&repo, &["rev-parse", "HEAD"]);
    assert_eq!(
        manifest["inputs"][0]["rev"],
        first.as_str(),
        "the pinned commit is recorded"
    );
    assert_eq!(
        manifest["inputs"][1]["rev"],
        second.as_str(),
        "a tag is resolved to its commit"
    );
    assert_eq!(manifest["inputs"][0]["license"], "MIT");

    // A rev that does not exist is a clear error, not a crash.
    std::fs::write(
        tmp.path().join("bad.toml"),
        "[[registry]]\nname = \"x\"\ngit = \"upstream\"\nrev = \"no-such-rev\"\n",
    )
    .expect("test setup: write the fixture");
    let o = crate::skg(tmp.path(), &["extract", "bad.toml", "-o", "out2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("revision no-such-rev not found"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
