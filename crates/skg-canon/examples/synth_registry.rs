//! Writes the synthetic registry union of [`skg_canon::synth::generate`] as `SKILL.md` folders,
//! plus judged queries over it, for scaling measurements of the whole pipeline
//! (`scripts/index-scale.sh`: audit → index build → eval). Nothing here is real registry text.
//!
//! usage: `cargo run --profile fast -p skg-canon --example synth_registry -- N OUT [SEED]`
//! writes `OUT/registries/synth-<k>/<path>/SKILL.md`, `OUT/registries/registries.toml` naming the
//! registries, and `OUT/queries.jsonl` (one query per 50th original: its description's purpose,
//! gold the original).
#![allow(
    clippy::print_stderr,
    reason = "a command-line example reports on stderr"
)]
#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark fixture generator writing a throwaway folder of inputs, not an skg output"
)]

use std::{fmt::Write as _, path::PathBuf, process::ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(n), Some(out)) = (
        args.first().and_then(|a| a.parse::<usize>().ok()),
        args.get(1).map(PathBuf::from),
    ) else {
        eprintln!("usage: synth_registry N OUT [SEED]");
        return ExitCode::from(2);
    };
    let seed = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(skg_canon::synth::DEFAULT_SEED);
    match write(n, &out, seed) {
        Ok((skills, queries)) => {
            eprintln!(
                "{skills} skills and {queries} queries written under {}",
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("synth_registry: {e}");
            ExitCode::FAILURE
        }
    }
}

fn write(n: usize, out: &std::path::Path, seed: u64) -> Result<(usize, usize), String> {
    let root = out.join("registries");
    if root.exists() {
        return Err(format!("{} exists: give a new folder", root.display()));
    }
    let registries = (n / 2_000).clamp(3, 20);
    let (skills, origins) = skg_canon::synth::generate(n, registries, seed);
    let mut queries = String::new();
    let mut originals = 0usize;
    for (s, origin) in skills.iter().zip(&origins) {
        let dir = root.join(s.registry.as_str()).join(&s.root);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let text = format!(
            "---\nname: {}\ndescription: \"{}\"\n---\n{}",
            s.name, s.description, s.body
        );
        let path = dir.join("SKILL.md");
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        if matches!(origin, skg_canon::synth::Origin::Original(_)) {
            originals += 1;
            if originals % 50 == 1 {
                let purpose = s
                    .description
                    .trim_start_matches("Use when you need to ")
                    .trim_end_matches('.');
                let _ = writeln!(
                    queries,
                    "{}",
                    serde_json::json!({
                        "id": format!("s{originals}"),
                        "query": purpose,
                        "gold": [format!("{}/{}", s.registry, s.path)],
                    })
                );
            }
        }
    }
    let mut toml = String::from("# Synthetic registries (skg_canon::synth; no real text).\n");
    for k in 0..registries {
        let _ = write!(
            toml,
            "\n[[registry]]\nname = \"synth-{k}\"\npath = \"synth-{k}\"\n"
        );
    }
    let t = root.join("registries.toml");
    std::fs::write(&t, toml).map_err(|e| format!("{}: {e}", t.display()))?;
    let q = out.join("queries.jsonl");
    std::fs::write(&q, &queries).map_err(|e| format!("{}: {e}", q.display()))?;
    Ok((skills.len(), queries.lines().count()))
}
