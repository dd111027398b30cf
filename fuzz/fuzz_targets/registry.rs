//! A whole registry from memory: two skills with scripts and references, so frontmatter,
//! markdown, relations (frontmatter fields, prose, mentions, links, script imports) and documents
//! all run on fuzzed bytes.
#![no_main]
use arbitrary::Arbitrary;

#[derive(Debug, Arbitrary)]
enum Path {
    SkillA,
    SkillB,
    NestedSkill,
    ScriptJs,
    ScriptTs,
    ScriptPy,
    Reference,
    Readme,
    Other(String),
}

impl Path {
    fn as_str(&self) -> String {
        match self {
            Path::SkillA => "skills/alpha/SKILL.md".into(),
            Path::SkillB => "skills/beta-tool/SKILL.md".into(),
            Path::NestedSkill => "skills/alpha/inner/SKILL.md".into(),
            Path::ScriptJs => "skills/alpha/scripts/run.js".into(),
            Path::ScriptTs => "skills/beta-tool/scripts/main.ts".into(),
            Path::ScriptPy => "skills/alpha/scripts/tool.py".into(),
            Path::Reference => "skills/beta-tool/references/guide.md".into(),
            Path::Readme => "README.md".into(),
            Path::Other(s) => s.clone(),
        }
    }
}

libfuzzer_sys::fuzz_target!(|files: Vec<(Path, Vec<u8>)>| {
    let files: Vec<(String, Vec<u8>)> =
        files.into_iter().take(8).map(|(p, b)| (p.as_str(), b)).collect();
    let limits = skg_extract::Limits {
        max_file_bytes: 64 * 1024,
        max_files: 64,
        ..skg_extract::Limits::default()
    };
    let ex = skg_extract::fuzzing::extract_files(&files, &limits);
    for e in &ex.edges {
        assert!((0.0..=1.0).contains(&e.confidence), "confidence {}", e.confidence);
    }
    for d in &ex.documents {
        assert!(d.line_start <= d.line_end, "{}: lines {}..{}", d.id, d.line_start, d.line_end);
    }
});
