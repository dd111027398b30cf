//! The security scan on any package: a `SKILL.md`, an MCP config and a script made from the
//! input (shell read by tree-sitter-bash, Python and JavaScript by their grammars, blobs decoded,
//! markdown cut into segments), and as a catalog's tool. Nothing may panic; every finding points into a file it was given.
#![no_main]
use skg_model::{FileText, NoProgress, PackageText, RegistryName, SkillId, SkillKind};

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
        registry: registry.clone(),
        root: "p".to_owned(),
        files,
        name: Some(text.lines().next().unwrap_or("").to_owned()),
        description: text.lines().nth(1).map(str::to_owned),
        kind: SkillKind::Skill,
        entry_line: None,
        entry_column: None,
        parameters: Vec::new(),
    };
    // The same bytes as a catalog's tool (its text is read as markdown whatever its path).
    let tool = PackageText {
        id: SkillId::new(&registry, "t"),
        registry,
        root: "t".to_owned(),
        files: vec![FileText {
            path: skg_model::tool_path("tools.json", "t"),
            text: text.clone().into_owned(),
        }],
        name: Some("t".to_owned()),
        description: text.lines().next().map(str::to_owned),
        kind: SkillKind::Tool,
        entry_line: Some(1),
        entry_column: None,
        parameters: Vec::new(),
    };
    let scan = skg_scan::scan(&[package, tool], &skg_scan::Options::default(), &NoProgress);
    assert_eq!(scan.verdicts.len(), 2);
    let lines = text.lines().count().max(1) as u32;
    for f in &scan.findings {
        assert!(f.path.starts_with("p/") || f.path == "tools.json#t", "{f:?}");
        assert!(f.line >= 1 && f.line <= lines + 1, "{f:?} of {lines} lines");
        assert!(f.snippet.chars().count() <= 200);
    }
    for v in &scan.verdicts {
        assert!((0.0..=1.0).contains(&v.score));
    }
    let _ = skg_syntax::shell_commands(&text);
});
