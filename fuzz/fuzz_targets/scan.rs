//! The security scan on any package: a `SKILL.md`, an MCP config and a script made from the
//! input (shell read by tree-sitter-bash, Python and JavaScript by their grammars, blobs decoded,
//! markdown cut into segments). Nothing may panic; every finding points into a file it was given.
#![no_main]
use skg_model::{FileText, NoProgress, PackageText, RegistryName, SkillId};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The same bytes as each kind of file, and the shell facts of them directly.
    let registry = RegistryName::from("fuzz");
    let files = ["p/SKILL.md", "p/.mcp.json", "p/scripts/run.sh", "p/scripts/x.py", "p/scripts/x.js"]
        .iter()
        .map(|path| FileText {
            path: (*path).to_owned(),
            text: text.clone().into_owned(),
        })
        .collect();
    let package = PackageText {
        id: SkillId::new(&registry, "p"),
        registry,
        root: "p".to_owned(),
        files,
        name: Some(text.lines().next().unwrap_or("").to_owned()),
        description: text.lines().nth(1).map(str::to_owned),
    };
    let scan = skg_scan::scan(&[package], &skg_scan::Options::default(), &NoProgress);
    assert_eq!(scan.verdicts.len(), 1);
    let lines = text.lines().count().max(1) as u32;
    for f in &scan.findings {
        assert!(f.path.starts_with("p/"), "{f:?}");
        assert!(f.line >= 1 && f.line <= lines + 1, "{f:?} of {lines} lines");
        assert!(f.snippet.chars().count() <= 200);
    }
    let v = &scan.verdicts[0];
    assert!((0.0..=1.0).contains(&v.score));
    let _ = skg_syntax::shell_commands(&text);
});
