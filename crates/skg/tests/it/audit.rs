//! `skg audit`: the whole pipeline into one folder, and which stages a change recomputes.

use std::path::Path;

use super::{clean_command, free_port, http_get, model_dir, repo, skg_json_env, wait_for_health};

/// A copy of the bundled demo registries in `dir/registries`.
pub(crate) fn demo_copy(dir: &Path) -> std::path::PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{e}"));
        for e in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{e}")) {
            let e = e.unwrap_or_else(|e| panic!("{e}"));
            let t = to.join(e.file_name());
            if e.path().is_dir() {
                copy(&e.path(), &t);
            } else {
                std::fs::copy(e.path(), &t).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
    let to = dir.join("registries");
    copy(&repo().join("registries"), &to);
    to
}

/// Runs `skg audit registries -o audit --format json` plus `extra`; returns the summary.
fn audit(dir: &Path, model: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["audit", "registries", "-o", "audit", "-q"];
    args.extend(extra);
    skg_json_env(dir, &args, &[("SKG_MODEL_DIR", model)])
}

fn statuses(s: &serde_json::Value) -> Vec<(String, String)> {
    s["stages"]
        .as_array()
        .unwrap_or_else(|| panic!("no stages: {s}"))
        .iter()
        .map(|r| {
            (
                r["stage"].as_str().unwrap_or_default().to_owned(),
                r["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn expect(s: &serde_json::Value, want: [&str; 5]) {
    let got = statuses(s);
    let stages = ["extract", "scan", "canonicalize", "score", "measure"];
    let want: Vec<(String, String)> = stages
        .iter()
        .zip(want)
        .map(|(a, b)| ((*a).to_owned(), b.to_owned()))
        .collect();
    assert_eq!(got, want);
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn audit_writes_report_and_tables_and_recomputes_only_what_changed() {
    let Some(model) = model_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    let registries = demo_copy(d);

    // Cold: every stage runs; the folder holds the report, every table and the stages.
    let first = audit(d, &model, &[]);
    expect(&first, ["computed"; 5]);
    let out = d.join("audit");
    let html = String::from_utf8(read(&out.join("index.html"))).expect("UTF-8");
    for id in [
        "summary",
        "registries",
        "duplicates",
        "slop",
        "graph",
        "security",
        "diagnostics",
    ] {
        assert!(html.contains(&format!("<section id=\"{id}\">")), "{id}");
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&read(&out.join("manifest.json"))).expect("parse JSON");
    assert_eq!(manifest["stage"], "audit");
    let tables: Vec<&str> = manifest["tables"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["name"].as_str()).collect())
        .expect("a JSON array");
    // Every table a stage declares is published (skills and edges rewritten, the rest linked).
    for t in skg_store::tables::STAGES
        .iter()
        .flat_map(|(_, ts)| ts.iter().map(|t| skg_store::TableSpec::name(*t)))
    {
        assert!(tables.contains(&t), "{t} in {tables:?}");
        assert!(out.join(format!("{t}.parquet")).is_file(), "{t}.parquet");
    }
    // The published skills carry the capability type canonicalize refined, one row each.
    let capabilities = crate::rows(&out, "capabilities");
    let skills = crate::rows(&out, "skills");
    assert_eq!(capabilities.len(), skills.len());
    for s in &skills {
        let c = capabilities
            .iter()
            .find(|c| c["id"] == s["id"])
            .unwrap_or_else(|| panic!("no capability row for {}", s["id"]));
        assert_eq!(s["capability"], c["capability"], "{}", s["id"]);
    }
    // The audit's edges = extract's relations + canonicalize's duplicate_of / variant_of.
    let n = |p: &Path| {
        std::fs::read_to_string(p)
            .expect("read a file the run wrote")
            .lines()
            .count()
    };
    assert_eq!(
        n(&out.join("edges.ndjson")),
        n(&out.join("stages/extract/edges.ndjson"))
            + n(&out.join("stages/canonicalize/edges.ndjson"))
    );
    let embedded = &first["stages"][2]["summary"]["embedding"];
    assert_eq!(embedded["embedded"], embedded["unique_texts"], "{embedded}");

    // Warm: nothing changed, nothing runs, same bytes.
    expect(&audit(d, &model, &[]), ["reused"; 5]);
    assert_eq!(read(&out.join("index.html")).len(), html.len());
    assert!(read(&out.join("index.html")) == html.as_bytes());

    // Touching a file (mtime only) changes no content: still fresh.
    let skill = registries.join("devflow/skills/executing-plans/SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&skill, &text).unwrap_or_else(|e| panic!("{e}"));
    expect(&audit(d, &model, &[]), ["reused"; 5]);

    // A file no skill owns: extract and the scan (which read the registries) re-read, write the
    // same tables, so nothing after them runs.
    std::fs::write(registries.join("devflow/NOTES.txt"), "not a skill\n")
        .unwrap_or_else(|e| panic!("{e}"));
    expect(
        &audit(d, &model, &[]),
        ["computed", "computed", "reused", "reused", "reused"],
    );

    // A skill's body changes: everything downstream of its rows runs, but its description is
    // unchanged, so no description is embedded again.
    std::fs::write(&skill, format!("{text}\nOne more line of instructions.\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    let s = audit(d, &model, &[]);
    expect(&s, ["computed"; 5]);
    assert_eq!(s["stages"][2]["summary"]["embedding"]["embedded"], 0, "{s}");

    // Options reach only the stages that read them.
    expect(
        &audit(d, &model, &["--threshold", "0.5"]),
        ["reused", "reused", "reused", "computed", "computed"],
    );
    expect(
        &audit(
            d,
            &model,
            &["--threshold", "0.5", "--min-confidence", "0.6"],
        ),
        ["reused", "reused", "reused", "reused", "computed"],
    );
    // A stage folder that lost its _SUCCESS is not trusted.
    std::fs::remove_file(out.join("stages/score/_SUCCESS")).unwrap_or_else(|e| panic!("{e}"));
    expect(
        &audit(
            d,
            &model,
            &["--threshold", "0.5", "--min-confidence", "0.6"],
        ),
        ["reused", "reused", "reused", "computed", "reused"],
    );
}

/// `skg index build` over an audit, then `skg eval` on judged queries written for the demo
/// (copies in the gold lists fold onto their canonical).
#[test]
fn index_build_and_eval_on_the_demo() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    demo_copy(d);
    let Some(model_folder) = model_dir() else {
        return;
    };
    let _ = audit(d, &model_folder, &[]);
    let run = |args: &[&str]| skg_json_env(d, args, &[("SKG_MODEL_DIR", &model_folder)]);
    let built = run(&["index", "build", "audit", "-o", "index", "-q"]);
    assert_eq!(built["counts"]["skills"], 35);
    // Every skill gets an L0 and an L1 vector, and each usage section one more: 23 of the demo's
    // SKILL.md files have a "## When to Use" section (`grep -rl '^## When to Use' registries`),
    // and no other heading of the demo says when to use a skill ("How to Use" does not).
    let usage = 23;
    assert_eq!(built["counts"]["vectors"], 70 + usage);
    assert!(d.join("index/_SUCCESS").is_file());
    // So few rows are scanned exactly: no graph is built by default…
    assert!(built["ann"].is_null(), "{built}");
    assert!(!d.join("index").join(skg_index::ann::CACHE_FILE).exists());
    let queries = repo().join("tests/fixtures/queries/demo.jsonl");
    let q = queries.to_str().expect("a UTF-8 path");
    // …but asked from one row on, the build leaves the graph in the folder, and an evaluation
    // with the graph reads it instead of building it.
    let build_with_graph = || {
        run(&[
            "index",
            "build",
            "audit",
            "-o",
            "index-ann",
            "--ann-min-rows",
            "1",
            "-q",
        ])
    };
    let graphed = build_with_graph();
    assert_eq!(graphed["ann"]["rows"], 70 + usage, "{graphed}");
    assert_eq!(graphed["ann"]["source"], "built", "{graphed}");
    assert!(
        d.join("index-ann")
            .join(skg_index::ann::CACHE_FILE)
            .is_file()
    );
    // Rebuilt over itself with the same content, the folder keeps its graph.
    let again = build_with_graph();
    assert_eq!(again["ann"]["source"], "cached", "{again}");
    assert_eq!(
        again["content_hash"], graphed["content_hash"],
        "{again} {graphed}"
    );
    let e = run(&[
        "eval",
        q,
        "--index",
        "index-ann",
        "--ann",
        "--mode",
        "dense",
    ]);
    assert_eq!(e["ann"]["source"], "cached", "{e}");
    let e = run(&["eval", q, "--index", "index"]);
    assert_eq!(e["queries"], 8);
    assert_eq!(e["gold_unresolved"], 0);
    let modes = e["modes"].as_array().cloned().expect("a JSON array");
    assert_eq!(modes.len(), 3);
    for m in &modes {
        let hit10 = m["metrics"]["hit"][3].as_f64().unwrap_or_default();
        let hit1 = m["metrics"]["hit"][0].as_f64().unwrap_or_default();
        assert!(hit1 <= hit10, "{m}");
        assert!(m["latency_ms"]["p50"].as_f64().unwrap_or_default() > 0.0);
    }
    // The fusion finds most of these eight needs among its first five.
    let hybrid = &modes[2];
    assert_eq!(hybrid["mode"], "hybrid");
    assert!(
        hybrid["metrics"]["hit"][2].as_f64().unwrap_or_default() >= 0.75,
        "{hybrid}"
    );
    // The candidates file lists each query's candidates in the order the hybrid ranking
    // judged above gives them: its first candidates find the gold as often as hybrid hit@1 says.
    let c = run(&[
        "eval",
        q,
        "--index",
        "index",
        "--mode",
        "hybrid",
        "--candidates",
        "cands.jsonl",
    ]);
    let text = std::fs::read_to_string(d.join("cands.jsonl")).expect("the candidates file");
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(records.len(), 8);
    let mut first_is_gold = 0;
    for r in &records {
        assert_eq!(r["mode"], "hybrid", "{r}");
        let cands = r["candidates"].as_array().cloned().expect("a JSON array");
        assert!(!cands.is_empty(), "{r}");
        // The second stage reorders the fused first 20 (each carries its MaxSim); the rest
        // stay in the fusion's order.
        let score = |c: &serde_json::Value| c["score"].as_f64().unwrap_or(f64::NAN);
        let staged = cands.iter().take_while(|c| c["late"].is_f64()).count();
        assert_eq!(staged, cands.len().min(20), "{r}");
        assert!(
            cands[staged..]
                .windows(2)
                .all(|p| score(&p[0]) >= score(&p[1])),
            "{r}"
        );
        let gold = r["gold"].as_array().cloned().expect("a JSON array");
        if gold.contains(&cands[0]["skill"]) {
            first_is_gold += 1;
        }
    }
    assert_eq!(
        c["modes"][0]["metrics"]["hit"][0].as_f64(),
        Some(f64::from(first_is_gold) / 8.0),
        "{c}"
    );
    // Few-shot: every gold id of an example adds one vector (10 gold ids in 8 queries) to the
    // 70 + usage of the index without them.
    let with = run(&[
        "index",
        "build",
        "audit",
        "-o",
        "index-ex",
        "--examples",
        q,
        "-q",
    ]);
    assert_eq!(with["counts"]["vectors"], 80 + usage);
    // Asked again with its own examples in the index, every query finds its gold first.
    let e = run(&["eval", q, "--index", "index-ex", "--mode", "dense"]);
    assert!(
        (e["modes"][0]["metrics"]["hit"][0]
            .as_f64()
            .unwrap_or_default()
            - 1.0)
            .abs()
            < 1e-9,
        "{e}"
    );
    // The second stage is on up to 30,000 cards (`auto`): the default index stores every
    // skill's card tokens (35 cards, at least a token each) and the token cache beside the
    // embedding cache; `--late-interaction on` builds the same content, `off` none.
    let tokens = built["counts"]["card_tokens"].as_u64().unwrap_or_default();
    assert!(tokens >= 35, "at least a token a card: {built}");
    assert!(d.join("index/tokens.bin").is_file());
    assert!(d.join("index").join(skg_embed::TOKEN_CACHE_FILE).is_file());
    let late = run(&[
        "index",
        "build",
        "audit",
        "-o",
        "index-late",
        "--late-interaction",
        "on",
        "-q",
    ]);
    assert_eq!(
        late["counts"]["card_tokens"],
        built["counts"]["card_tokens"]
    );
    assert_eq!(late["content_hash"], built["content_hash"]);
    let off = run(&[
        "index",
        "build",
        "audit",
        "-o",
        "index-off",
        "--late-interaction",
        "off",
        "-q",
    ]);
    assert!(off["counts"]["card_tokens"].is_null(), "{off}");
    assert!(!d.join("index-off/tokens.bin").exists());
    assert_ne!(off["content_hash"], built["content_hash"]);
    // Asked for token states without the model: refused, not silently built without them.
    let refused = super::skg_env(
        d,
        &[
            "index",
            "build",
            "audit",
            "-o",
            "index-refused",
            "--no-embeddings",
            "--late-interaction",
            "on",
        ],
        &[("SKG_MODEL_DIR", &model_folder)],
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--no-embeddings"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!d.join("index-refused").exists());
    // A build into a new folder from the caches embeds nothing and writes the same content.
    let warm = run(&[
        "index",
        "build",
        "audit",
        "-o",
        "index-late-2",
        "--late-interaction",
        "on",
        "--embedding-cache",
        "index-late",
        "-q",
    ]);
    assert_eq!(warm["embedding"]["embedded"], 0, "{warm}");
    assert_eq!(warm["content_hash"], late["content_hash"]);
    // Its hybrid answers carry each reordered candidate's MaxSim, in the second stage's order.
    run(&[
        "eval",
        q,
        "--index",
        "index-late",
        "--mode",
        "hybrid",
        "--candidates",
        "cands-late.jsonl",
    ]);
    let text = std::fs::read_to_string(d.join("cands-late.jsonl")).expect("the candidates file");
    let first: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("a line")).expect("a JSON line");
    assert!(first["candidates"][0]["late"].is_f64(), "{first}");
    // A route whose second stage never runs reads no card tokens, as the gateway: over a folder
    // whose tokens.bin is damaged (a byte short) it still answers, while the default route,
    // which reads them, refuses the folder and names the file.
    let tokens = d.join("index-late-2").join(skg_index::TOKENS_FILE);
    let bytes = std::fs::read(&tokens).expect("tokens.bin");
    std::fs::write(&tokens, &bytes[..bytes.len() - 1]).expect("a damaged tokens.bin");
    let route = |extra: &[&str]| {
        let mut args = vec!["route", "merge two PDF files", "--index", "index-late-2"];
        args.extend_from_slice(extra);
        super::skg_env(d, &args, &[("SKG_MODEL_DIR", &model_folder)])
    };
    let first_stage = route(&["--late-weight", "0"]);
    assert!(
        first_stage.status.success() && !first_stage.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&first_stage.stderr)
    );
    let with_stage = route(&[]);
    assert!(!with_stage.status.success());
    assert!(
        String::from_utf8_lossy(&with_stage.stderr).contains(skg_index::TOKENS_FILE),
        "{}",
        String::from_utf8_lossy(&with_stage.stderr)
    );
}

/// The five composition tasks of ../shared/bench/peers/asf/cli_tasks.json built as a registry:
/// each task's last skill says what the task says, every other one is a `depends_on` of the next.
/// Routing with k = 1 retrieves only the last; the closure brings the rest, dependencies first.
/// A pair of skills that need each other is reported as a cycle.
#[test]
fn routing_the_cli_tasks() {
    let Some(tasks_file) = skg_testkit::shared("bench/peers/asf/cli_tasks.json") else {
        return;
    };
    let text = std::fs::read_to_string(&tasks_file).unwrap_or_else(|e| panic!("{e}"));
    let tasks: serde_json::Value = serde_json::from_str(&text).expect("parse JSON");
    let tasks = tasks.as_array().cloned().expect("a JSON array");
    assert_eq!(tasks.len(), 5);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    let reg = d.join("cli-tasks");
    let write = |name: &str, description: &str, depends: &[&str]| {
        let folder = reg.join(name);
        std::fs::create_dir_all(&folder).unwrap_or_else(|e| panic!("{e}"));
        let deps = if depends.is_empty() {
            String::new()
        } else {
            format!("depends_on: [{}]\n", depends.join(", "))
        };
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n{deps}---\n\n# {name}\n\n{description}\n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    };
    let mut expected = Vec::new();
    for t in &tasks {
        let order: Vec<&str> = t["composition_order"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
            .expect("a JSON array");
        let task = t["task"].as_str().unwrap_or_default();
        for (i, name) in order.iter().enumerate() {
            let last = i + 1 == order.len();
            let description = if last {
                task.to_owned()
            } else {
                format!("Step {} of a composition: {name}.", i + 1)
            };
            let deps: Vec<&str> = if i > 0 { vec![order[i - 1]] } else { vec![] };
            write(name, &description, &deps);
        }
        expected.push((
            task.to_owned(),
            order
                .iter()
                .map(|n| format!("cli-tasks:{n}"))
                .collect::<Vec<_>>(),
        ));
    }
    write(
        "cycle-a",
        "Reconcile the ledger of the warehouse inventory.",
        &["cycle-b"],
    );
    write(
        "cycle-b",
        "Step of the reconciliation: cycle-b.",
        &["cycle-a"],
    );

    let run = |args: &[&str]| skg_json_env(d, args, &[]);
    run(&["audit", "cli-tasks", "-o", "audit", "--no-embeddings", "-q"]);
    run(&crate::LEXICAL_INDEX_BUILD);
    for (task, order) in &expected {
        let r = run(&[
            "route",
            task,
            "--index",
            "index",
            "-k",
            "1",
            "--include-quarantined",
            "--bm25",
        ]);
        let plan: Vec<String> = r["plan"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s["id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(&plan, order, "{task}: {r}");
        assert_eq!(
            r["plan"][0]["reason"]["kind"],
            if order.len() > 1 {
                "dependency"
            } else {
                "retrieved"
            }
        );
    }
    let r = run(&[
        "route",
        "reconcile the warehouse inventory ledger",
        "--index",
        "index",
        "-k",
        "1",
        "--include-quarantined",
        "--bm25",
    ]);
    assert_eq!(
        r["cycles"],
        serde_json::json!([["cli-tasks:cycle-a", "cli-tasks:cycle-b"]]),
        "{r}"
    );
    assert_eq!(r["plan"].as_array().map(Vec::len), Some(2));
}

/// `skg index build --incremental` after editing one skill, deleting one and adding one: the
/// package counts are exactly those, only the changed and added skills' vectors are computed, and
/// the folder equals a whole build of the new state. Then the bundle as host tools and as an
/// exported folder of skills.
#[test]
fn incremental_index_update_and_bundle_adapters() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    let registries = demo_copy(d);
    let Some(model_folder) = model_dir() else {
        return;
    };
    let _ = audit(d, &model_folder, &[]);
    let run = |args: &[&str]| skg_json_env(d, args, &[("SKG_MODEL_DIR", &model_folder)]);
    let first = run(&["index", "build", "audit", "-o", "index", "-q"]);
    assert_eq!(first["counts"]["skills"], 35);

    let edited = registries.join("devflow/skills/executing-plans/SKILL.md");
    let mut text = std::fs::read_to_string(&edited).expect("read a file the run wrote");
    text.push_str("\n## Afterwards\n\nRecord what each task changed in the plan file.\n");
    std::fs::write(&edited, text).unwrap_or_else(|e| panic!("{e}"));
    std::fs::remove_dir_all(registries.join("datalab/skills/notebook-hygiene"))
        .unwrap_or_else(|e| panic!("{e}"));
    let added = registries.join("devflow/skills/dependency-upgrades");
    std::fs::create_dir_all(&added).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        added.join("SKILL.md"),
        "---\nname: dependency-upgrades\ndescription: Use when bumping library versions. Upgrades one dependency at a time and runs the tests after each.\n---\n\n# Dependency upgrades\n\nBump one dependency, run the tests, commit, repeat.\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let _ = audit(d, &model_folder, &[]);

    let inc = run(&[
        "index",
        "build",
        "audit",
        "-o",
        "index",
        "--incremental",
        "-q",
    ]);
    let packages = &inc["incremental"]["packages"];
    assert_eq!(
        packages,
        &serde_json::json!({"kept": 33, "changed": 1, "added": 1, "deleted": 1}),
        "{inc}"
    );
    assert_eq!(
        inc["incremental"]["changed"][0],
        "demo/devflow:skills/executing-plans"
    );
    assert_eq!(
        inc["incremental"]["deleted"][0],
        "demo/datalab:skills/notebook-hygiene"
    );
    // Two vectors (abstract, overview) per kept skill are carried over, and the usage vectors of
    // the 23 skills with a "## When to Use" section, all kept (neither the edited, the deleted nor
    // the added skill has one); the changed and the added skill are embedded.
    assert_eq!(inc["incremental"]["vectors_reused"], 66 + 23, "{inc}");
    assert!(inc["incremental"]["texts_embedded"].as_u64().unwrap_or(99) <= 4);
    assert_eq!(inc["counts"]["skills"], 35);
    let whole = run(&["index", "build", "audit", "-o", "index-whole", "-q"]);
    assert_eq!(inc["content_hash"], whole["content_hash"]);
    // The incremental build's cache holds every vector it carried over, under the text it was
    // embedded as: a whole build into the same folder embeds nothing.
    let rebuilt = run(&["index", "build", "audit", "-o", "index", "-q"]);
    assert_eq!(rebuilt["embedding"]["embedded"], 0, "{rebuilt}");
    assert_eq!(rebuilt["content_hash"], whole["content_hash"]);

    // Other model files under the same MODEL_ID (here a tokenizer file with one more byte, which
    // doesn't change a vector): nothing is carried over from the previous index or the cache,
    // and a query embedded by the first model is not compared with the new index's vectors.
    let other_model = d.join("other-model");
    std::fs::create_dir_all(&other_model).unwrap_or_else(|e| panic!("{e}"));
    for name in skg_embed::FILES {
        let mut bytes = std::fs::read(model_folder.join(name)).unwrap_or_else(|e| panic!("{e}"));
        if name == "tokenizer_config.json" {
            bytes.push(b'\n');
        }
        std::fs::write(other_model.join(name), bytes).unwrap_or_else(|e| panic!("{e}"));
    }
    let again = skg_json_env(
        d,
        &[
            "index",
            "build",
            "audit",
            "-o",
            "index-whole",
            "--incremental",
            "-q",
        ],
        &[("SKG_MODEL_DIR", &other_model)],
    );
    assert_eq!(again["incremental"]["vectors_reused"], 0, "{again}");
    let e = &again["embedding"];
    assert_eq!(e["from_cache"], 0, "{again}");
    assert_eq!(e["embedded"], e["unique_texts"], "{again}");
    assert_ne!(again["model"], whole["model"]);
    // The same vectors, bit for bit (the byte changed nothing the model computes): the content
    // hash is the same, the identity is not — which is why a gateway reload compares both.
    assert_eq!(again["content_hash"], whole["content_hash"]);
    let m = whole["model"].as_str().unwrap_or_default();
    assert!(m.starts_with(skg_embed::MODEL_ID), "{m}");
    let routed = run(&[
        "route",
        "merge the finished feature branch",
        "--index",
        "index-whole",
    ]);
    let degraded = routed["degraded"].to_string();
    assert!(degraded.contains("rebuild the index"), "{routed}");
    let queries = repo().join("tests/fixtures/queries/demo.jsonl");
    let q = queries.to_str().expect("a UTF-8 path");
    let refused = super::skg_env(
        d,
        &["eval", q, "--index", "index-whole", "--mode", "dense"],
        &[("SKG_MODEL_DIR", &model_folder)],
    );
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("rebuild the index"), "{stderr}");

    // The bundle as Anthropic tools, and as a folder of skills.
    let out = super::skg_env(
        d,
        &[
            "route",
            "merge the finished feature branch",
            "--index",
            "index",
            "-k",
            "1",
            "--tools",
            "anthropic",
            "--export",
            "bundle",
        ],
        &[("SKG_MODEL_DIR", &model_folder)],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).expect("parse JSON");
    let tools = tools.as_array().cloned().expect("a JSON array");
    assert!(!tools.is_empty());
    let plan: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("bundle/bundle.json")).expect("read a file the run wrote"),
    )
    .expect("read a file the run wrote");
    let steps = plan["plan"].as_array().cloned().expect("a JSON array");
    assert_eq!(steps.len(), tools.len());
    for (t, s) in tools.iter().zip(&steps) {
        assert_eq!(t["name"], s["folder"]);
        let folder = s["folder"].as_str().unwrap_or_default();
        assert!(d.join("bundle").join(folder).join("SKILL.md").is_file());
    }

    // `skg mcp`: the MCP server on stdio answers the handshake, lists its tools and routes; its
    // stdout carries JSON-RPC lines only.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skg"))
        .args(["mcp", "--index", "index", "--bm25"])
        .current_dir(d)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        for msg in [
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "0"}}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "route_task", "arguments": {"task": "merge the finished feature branch", "k": 1}}}),
        ] {
            writeln!(stdin, "{msg}").unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["result"]["serverInfo"]["name"], "skg");
    assert_eq!(
        lines[1]["result"]["tools"].as_array().map(Vec::len),
        Some(3)
    );
    let plan = &lines[2]["result"]["structuredContent"]["plan"];
    assert_eq!(plan.as_array().map(Vec::len), Some(steps.len()));
}

/// `skg serve --watch`: adding a skill to a watched registry re-audits, updates the index and
/// swaps it in while the server keeps answering.
#[test]
fn serve_watch_picks_up_a_new_skill() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    let registries = demo_copy(d);
    // Lexical: no model needed.
    super::lexical_index(d, "registries");
    let port = free_port();
    let mut child = clean_command(env!("CARGO_BIN_EXE_skg"), d)
        .args([
            "serve",
            "--index",
            "index",
            "--bm25",
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--watch",
            "registries",
            "--watch-audit",
            "audit",
            "--poll-seconds",
            "0.3",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let first = wait_for_health(port, "the server", &|h| h["index"]["loaded"] == true);
    assert_eq!(first["index"]["counts"]["skills"], 35);
    let added = registries.join("devflow/skills/dependency-upgrades");
    std::fs::create_dir_all(&added).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        added.join("SKILL.md"),
        "---\nname: dependency-upgrades\ndescription: Use when bumping library versions one at a time.\n---\n\n# Upgrades\n\nBump, test, commit.\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let after = wait_for_health(port, "the rebuilt index", &|h| {
        h["index"]["counts"]["skills"] == 36
    });
    assert_ne!(after["index"]["revision"], first["index"]["revision"]);
    let skill = http_get(port, "/v1/skills/demo/devflow:skills/dependency-upgrades");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        skill.map(|s| s["name"].clone()),
        Some(serde_json::json!("dependency-upgrades"))
    );
}
