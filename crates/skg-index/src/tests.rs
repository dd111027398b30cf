#![allow(
    clippy::unwrap_used,
    clippy::float_cmp,
    clippy::many_single_char_names,
    reason = "a panic is the test failure; exact values are exact fractions; short fixture names"
)]

use std::{collections::HashMap, path::Path};

use serde_json::json;
use skg_model::{DocId, Document, Edge, Level, Member, Score, SectionRole, Skill};

use crate::{
    BuildInput, Error, Fusion, Index, Judged, Mode, Query, Vectors, build, judge, summarize,
};

fn doc(s: &Skill, level: Level, ordinal: u32, title: &str, text: &str) -> Document {
    let id = match level {
        Level::L0 => format!("{}#L0", s.id),
        Level::L1 => format!("{}#L1", s.id),
        Level::L2 => format!("{}#L2:SKILL.md:{ordinal}", s.id),
    };
    Document {
        id: DocId::from(id.as_str()),
        skill: s.id.clone(),
        registry: s.registry.clone(),
        level,
        file: "SKILL.md".into(),
        heading_path: if level == Level::L2 {
            vec![title.to_owned()]
        } else {
            vec![]
        },
        ordinal,
        chunk: 0,
        line_start: 1,
        line_end: 5,
        title: title.into(),
        text: text.into(),
        role: SectionRole::Body,
    }
}

fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

struct Fixture {
    skills: Vec<Skill>,
    docs: Vec<Document>,
    edges: Vec<Edge>,
    members: Vec<Member>,
    scores: Vec<Score>,
}

/// Four skills: `pdf` (forms in a section), `pdf-copy` (its alias), `csv` (quarantined, says
/// when not to use it), `charts`.
fn fixture() -> Fixture {
    let mut pdf = Skill::from_text("r", "pdf", "pdf-tools", "Read and merge PDF files.", "body");
    pdf.when_not_to_use = None;
    let copy = Skill::from_text(
        "r",
        "pdf-copy",
        "pdf-tools",
        "Read and merge PDF files.",
        "body",
    );
    let mut csv = Skill::from_text("r", "csv", "csv-cleaner", "Clean CSV tables.", "body");
    csv.when_not_to_use = Some("spreadsheets with charts".into());
    let charts = Skill::from_text(
        "r",
        "charts",
        "chart-maker",
        "Draw charts from tables.",
        "body",
    );
    let docs = vec![
        doc(
            &pdf,
            Level::L0,
            0,
            "pdf-tools",
            "pdf-tools\nRead and merge PDF files.",
        ),
        doc(
            &pdf,
            Level::L2,
            0,
            "Forms",
            "Fill interactive form fields and flatten the form.",
        ),
        doc(
            &pdf,
            Level::L2,
            1,
            "Merge",
            "Merge several documents into one.",
        ),
        doc(
            &copy,
            Level::L0,
            0,
            "pdf-tools",
            "pdf-tools\nRead and merge PDF files.",
        ),
        doc(
            &csv,
            Level::L0,
            0,
            "csv-cleaner",
            "csv-cleaner\nClean CSV tables.",
        ),
        doc(
            &charts,
            Level::L0,
            0,
            "chart-maker",
            "chart-maker\nDraw charts from tables.",
        ),
        doc(
            &charts,
            Level::L1,
            0,
            "chart-maker",
            "chart-maker: Draw charts from tables. Spreadsheets too.",
        ),
    ];
    let member = |id: &str, cluster: &str, role: &str| -> Member {
        from(
            json!({"id": id, "registry": "r", "path": "x/SKILL.md", "name": id, "cluster_id": cluster,
            "role": role, "variant_of": null, "quality": 0.5, "quality_source": "completeness",
            "nearest_description": 0.0, "reason": ""}),
        )
    };
    let score = |id: &str, q: bool| -> Score {
        from(
            json!({"id": id, "registry": "r", "path": "x/SKILL.md", "slop_score": if q { 0.1 } else { 0.9 },
            "quarantined": q, "threshold": 0.4, "reasons": [], "contributions": [], "features": []}),
        )
    };
    let edges = vec![from(
        json!({"src": "r:charts", "dst": "r:pdf-copy", "kind": "depends_on",
        "confidence": 0.8, "source": "INFERRED", "extractor": "required-prose", "evidence": []}),
    )];
    Fixture {
        members: vec![
            member("r:pdf", "r:pdf", "canonical"),
            member("r:pdf-copy", "r:pdf", "duplicate"),
            member("r:csv", "r:csv", "canonical"),
            member("r:charts", "r:charts", "canonical"),
        ],
        scores: vec![
            score("r:pdf", false),
            score("r:pdf-copy", false),
            score("r:csv", true),
            score("r:charts", false),
        ],
        skills: vec![pdf, copy, csv, charts],
        docs,
        edges,
    }
}

fn built(dir: &Path, f: &Fixture, vectors: Option<&Vectors>) -> Index {
    let input = BuildInput {
        skills: &f.skills,
        documents: &f.docs,
        edges: &f.edges,
        members: Some(&f.members),
        scores: Some(&f.scores),
        registries: &[],
        vectors: vectors.cloned(),
        min_confidence: 0.5,
    };
    build(input, &dir.join("index"), json!({})).unwrap();
    Index::open(&dir.join("index")).unwrap()
}

fn names(index: &Index, hits: &[crate::Hit]) -> Vec<String> {
    hits.iter()
        .map(|h| index.skills[h.skill as usize].id.to_string())
        .collect()
}

#[test]
fn bm25_finds_a_section_and_returns_one_hit_per_skill() {
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &fixture(), None);
    let a = index
        .search(&Query::new("fill a form and merge it", None, 5))
        .unwrap();
    // pdf matches in two sections and L0; it appears once; its alias never.
    assert_eq!(names(&index, &a.hits), vec!["r:pdf"]);
    let best = &index.docs[a.hits[0].doc as usize];
    assert_eq!(
        best.title, "Forms",
        "the best section is the hit's document"
    );
    assert_eq!(a.mode, Mode::Bm25);
}

/// The filters, with every BM25 field weighted 1: under the packages' default weights (body 3,
/// card 0.25) chart-maker's overview, its only body text, says "tables" and outranks
/// csv-cleaner's card — the weights are another test's subject.
#[test]
fn quarantined_and_aliases_are_left_out_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &fixture(), None);
    let mut q = Query::new("clean csv tables", None, 5);
    q.weights = Some(crate::FieldWeights([1.0; 6]));
    assert!(!names(&index, &index.search(&q).unwrap().hits).contains(&"r:csv".to_owned()));
    q.include_quarantined = true;
    assert_eq!(names(&index, &index.search(&q).unwrap().hits)[0], "r:csv");
    let mut q = Query::new("merge pdf", None, 5);
    q.include_aliases = true;
    let got = names(&index, &index.search(&q).unwrap().hits);
    assert!(got.contains(&"r:pdf".to_owned()) && got.contains(&"r:pdf-copy".to_owned()));
    // The alias is reachable by id, with its canonical.
    let (_, copy) = index.skill("r:pdf-copy").unwrap();
    assert_eq!(
        copy.alias_of.as_ref().map(ToString::to_string).as_deref(),
        Some("r:pdf")
    );
    // Relations point at canonicals: charts depends on pdf (through its copy).
    let (_, charts) = index.skill("r:charts").unwrap();
    assert_eq!(
        charts
            .depends_on
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        vec!["r:pdf"]
    );
}

#[test]
fn an_unsafe_skill_is_never_found_nor_routed_whatever_the_request_asks() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = fixture();
    for s in &mut f.skills {
        if s.id.as_str() == "r:charts" {
            s.risk_tier = skg_model::RiskTier::Unsafe;
        }
    }
    let index = built(dir.path(), &f, None);
    let (_, charts) = index.skill("r:charts").unwrap();
    assert!(charts.r#unsafe && !charts.routable());
    let mut q = Query::new("draw charts from tables", None, 5);
    q.include_quarantined = true;
    q.include_aliases = true;
    let hits = names(&index, &index.search(&q).unwrap().hits);
    assert!(!hits.contains(&"r:charts".to_owned()), "{hits:?}");
    // A route to a skill that depends on it gets it as missing, not in the bundle: deploy needs
    // build (unsafe here), which needs fetch.
    let mut f = chain_fixture(false);
    f.skills[1].risk_tier = skg_model::RiskTier::Unsafe;
    let dir2 = tempfile::tempdir().unwrap();
    let chain = index_of_chain(dir2.path(), &f);
    let a = chain
        .search(&Query::new("deploy the release to production", None, 1))
        .unwrap();
    let b = crate::route(&chain, &a, None);
    assert_eq!(plan_ids(&b), vec!["r:deploy"]);
    assert_eq!(b.missing, vec!["r:build".to_owned()]);
    // A safe skill of the same index is still found by the same words.
    let q = Query::new("clean csv tables", None, 5);
    let mut q = q;
    q.include_quarantined = true;
    assert_eq!(names(&index, &index.search(&q).unwrap().hits)[0], "r:csv");
}

#[test]
fn when_not_to_use_is_negative_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &fixture(), None);
    let mut q = Query::new("tables spreadsheets charts", None, 5);
    q.include_quarantined = true;
    q.negative_weight = 0.0;
    let plain = index.search(&q).unwrap();
    q.negative_weight = 0.5;
    let penalized = index.search(&q).unwrap();
    let score = |a: &crate::Answer| {
        a.hits
            .iter()
            .chain(&a.rejected)
            .find(|h| index.skills[h.skill as usize].id.as_str() == "r:csv")
            .map(|h| h.bm25)
    };
    assert!(score(&penalized).unwrap() < score(&plain).unwrap());
}

#[test]
fn floor_moves_weak_hits_to_rejected_and_an_empty_answer_is_possible() {
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &fixture(), None);
    let mut q = Query::new("merge pdf charts", None, 5);
    q.min_score = 1e9;
    let a = index.search(&q).unwrap();
    assert!(a.hits.is_empty());
    assert!(!a.rejected.is_empty());
    assert!(
        a.rejected.windows(2).all(|w| w[0].score >= w[1].score),
        "rejected best first"
    );
    let none = index.search(&Query::new("zzzz qqqq", None, 5)).unwrap();
    assert!(none.hits.is_empty() && none.rejected.is_empty());
}

/// 2-d vectors of the fixture: pdf's L0 points at x, charts' L0 at y, charts' L1 in between.
fn plane_vectors() -> Vectors {
    Vectors {
        tokens: Vec::new(),
        token_directions: 0,
        model: "test".into(),
        dim: 2,
        rows: vec![
            (0, vec![1.0, 0.0]),
            (5, vec![0.0, 1.0]),
            (6, vec![0.6, 0.8]),
        ],
    }
}

#[test]
fn dense_and_fusions_rank_by_their_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture();
    let v = plane_vectors();
    let index = built(dir.path(), &f, Some(&v));
    let qv = [0.8_f32, 0.6];
    let mut q = Query::new("nothing lexical here", Some(&qv), 5);
    q.mode = Mode::Dense;
    let a = index.search(&q).unwrap();
    // cos(pdf) = 0.8; cos(charts) = max(0.6, 0.96) = 0.96.
    assert_eq!(names(&index, &a.hits), vec!["r:charts", "r:pdf"]);
    assert!((a.hits[0].dense - 0.96).abs() < 1e-6);
    assert_eq!(index.docs[a.hits[0].doc as usize].level, Level::L1);
    // Hybrid without lexical evidence: the adaptive weight is 0, so dense decides.
    q.mode = Mode::Hybrid;
    let h = index.search(&q).unwrap();
    assert_eq!(h.bm25_weight, Some(0.0));
    assert_eq!(names(&index, &h.hits), vec!["r:charts", "r:pdf"]);
    // RRF with k = 60: pdf is first by BM25 and second by dense: 1/61 + 1/62;
    // charts is first by dense only: 1/61.
    q.text = "merge pdf";
    q.fusion = Fusion::Rrf { k: 60.0 };
    let r = index.search(&q).unwrap();
    assert_eq!(names(&index, &r.hits)[0], "r:pdf");
    assert!((r.hits[0].score - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-6);
    // Without a vector, hybrid degrades to BM25 and says so.
    let mut nq = Query::new("merge pdf", None, 5);
    nq.mode = Mode::Hybrid;
    assert_eq!(index.search(&nq).unwrap().mode, Mode::Bm25);
}

/// Card token codes of 2-d token states.
fn token_codes(states: &[f32]) -> crate::TokenCodes {
    let mut c = crate::TokenCodes::default();
    for t in states.chunks_exact(2) {
        c.scales.push(crate::quant::code(t, &mut c.codes).unwrap());
    }
    c
}

#[test]
fn card_tokens_reorder_the_fused_first_by_late_interaction() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture();
    let mut v = plane_vectors();
    // pdf's card: one token along y; charts' card: one along x; charts' overview (document 6,
    // not a card) is not stored.
    v.tokens = vec![
        (0, token_codes(&[0.0, 1.0])),
        (5, token_codes(&[1.0, 0.0])),
        (6, token_codes(&[0.6, 0.8])),
    ];
    let index = built(dir.path(), &f, Some(&v));
    assert_eq!(index.manifest.counts.get("card_tokens"), Some(&2));
    let qv = [0.8_f32, 0.6];
    // One query token along y: MaxSim 1 with pdf's card, 0 with charts'.
    let tokens = [0.0_f32, 1.0];
    let mut q = Query::new("nothing lexical here", Some(&qv), 5);
    q.tokens = Some(&tokens);
    // Fused (dense alone here): charts 0.96, pdf 0.8 — z 1 and −1; MaxSim z −1 and 1. At
    // weight 0.3: 0.7 and −0.7, the fused order; at 2: −1 and 1, pdf first.
    let a = index.search(&q).unwrap();
    assert_eq!(names(&index, &a.hits), vec!["r:charts", "r:pdf"]);
    let late: Vec<f32> = a.hits.iter().map(|h| h.late.unwrap()).collect();
    assert!(
        late[0].abs() < 0.01 && (late[1] - 1.0).abs() < 0.01,
        "{late:?}"
    );
    q.late.weight = 2.0;
    let b = index.search(&q).unwrap();
    assert_eq!(names(&index, &b.hits), vec!["r:pdf", "r:charts"]);
    assert!(
        (b.hits[0].score - 0.8).abs() < 1e-6,
        "the score stays the fusion's"
    );
    // Off, without query tokens, or dense alone: the first stage's answer, no MaxSim.
    for (weight, with_tokens, mode) in [
        (0.0, true, Mode::Hybrid),
        (2.0, false, Mode::Hybrid),
        (2.0, true, Mode::Dense),
    ] {
        let mut q = q.clone();
        q.late.weight = weight;
        q.tokens = with_tokens.then_some(&tokens[..]);
        q.mode = mode;
        let a = index.search(&q).unwrap();
        assert_eq!(names(&index, &a.hits), vec!["r:charts", "r:pdf"]);
        assert!(a.hits.iter().all(|h| h.late.is_none()));
    }
    // The embedding path hands the stage the embedding's tokens.
    let embedded = crate::QueryEmbedding {
        vector: qv.to_vec(),
        tokens: tokens.to_vec(),
    };
    let mut without = q.clone();
    without.tokens = None;
    let (c, _) = index
        .search_embedding(&without, || Some(embedded.clone()))
        .unwrap();
    assert_eq!(c, b);
    // Without card tokens the build stores none and the stage does nothing.
    let plain = built(&dir.path().join("plain"), &f, Some(&plane_vectors()));
    assert!(!plain.manifest.counts.contains_key("card_tokens"));
    assert_eq!(
        names(&plain, &plain.search(&q).unwrap().hits),
        vec!["r:charts", "r:pdf"]
    );
    // A process whose stage cannot run opens without the card tokens: a zero weight, or
    // fewer than two candidates to reorder. The default stage needs them.
    let needs = |late: crate::Late| crate::OpenOptions::for_stage(&late).card_tokens;
    assert!(needs(crate::Late::default()));
    assert!(!needs(crate::Late::OFF));
    assert!(!needs(crate::Late {
        weight: 0.3,
        depth: 1
    }));
    assert!(!needs(crate::Late {
        weight: 0.0,
        depth: 20
    }));
    // Opened without them: the stage has nothing to match, the first stage answers.
    let without = Index::open_with(
        &dir.path().join("index"),
        crate::OpenOptions::for_stage(&crate::Late::OFF),
    )
    .unwrap();
    assert!(index.has_card_tokens() && !without.has_card_tokens());
    let a = without.search(&q).unwrap();
    assert_eq!(names(&without, &a.hits), vec!["r:charts", "r:pdf"]);
    assert!(a.hits.iter().all(|h| h.late.is_none()));
    // A damaged token file is refused with its name.
    let path = dir.path().join("index").join("tokens.bin");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let err = Index::open(&dir.path().join("index"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("tokens.bin"), "{err}");
}

#[test]
fn adaptive_weight_follows_its_formula() {
    assert!((Fusion::adaptive_weight(0.5, 4.0, 4.0, 2) - 0.25).abs() < 1e-6);
    assert!((Fusion::adaptive_weight(0.5, 4.0, 100.0, 2) - 0.5).abs() < 1e-6);
    assert!(Fusion::adaptive_weight(0.5, 4.0, 0.0, 2).abs() < 1e-9);
    assert!(Fusion::adaptive_weight(0.5, 4.0, 3.0, 0).abs() < 1e-9);
}

#[test]
fn unfinished_or_corrupt_folders_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _ = built(dir.path(), &fixture(), None);
    let p = dir.path().join("index");
    std::fs::remove_file(p.join("_SUCCESS")).unwrap();
    assert!(matches!(Index::open(&p), Err(Error::Unfinished(_))));
    std::fs::write(p.join("_SUCCESS"), b"").unwrap();
    let text = std::fs::read_to_string(p.join("skills.ndjson")).unwrap();
    let first = text.lines().next().unwrap();
    std::fs::write(p.join("skills.ndjson"), format!("{first}\n")).unwrap();
    assert!(matches!(Index::open(&p), Err(Error::Corrupt { .. })));
}

#[test]
fn metrics_by_hand() {
    // Ranking 5, 2, 7: gold {2}, acceptable {7}.
    let j = Judged {
        gold: [2].into(),
        acceptable: [7].into(),
    };
    let o = judge(&[5, 2, 7], &j);
    assert_eq!(o.first_gold, Some(2));
    assert_eq!(o.hit, [false, true, true, true]);
    assert_eq!(o.recall, [0.0, 1.0, 1.0, 1.0]);
    // DCG = 3/log2(3) + 1/log2(4); IDCG = 3/log2(2) + 1/log2(3).
    let dcg = 3.0 / 3f64.log2() + 1.0 / 2.0;
    let idcg = 3.0 + 1.0 / 3f64.log2();
    assert!((o.ndcg10 - dcg / idcg).abs() < 1e-12);
    let m = summarize(&[o, judge(&[], &j)]);
    assert_eq!(m.queries, 2);
    assert!((m.mrr10 - 0.25).abs() < 1e-12);
    assert_eq!(m.hit[0], 0.0);
    assert_eq!(m.empty, 1);
}

fn chain_fixture(cycle: bool) -> Fixture {
    // deploy → build → fetch (depends_on), deploy complements notify; with `cycle`, fetch → deploy.
    let mk = |root: &str, desc: &str| Skill::from_text("r", root, root, desc, "body");
    let mut fetch = mk("fetch", "Fetch the sources.");
    fetch.outputs = vec!["source-tree".into()];
    let mut build = mk("build", "Build the artifact.");
    build.inputs = vec!["source-tree".into()];
    build.outputs = vec!["artifact".into()];
    let mut deploy = mk("deploy", "Deploy the release to production servers.");
    deploy.inputs = vec!["container-image".into()];
    let notify = mk("notify", "Notify the team.");
    let skills = vec![fetch, build, deploy, notify];
    let docs = skills
        .iter()
        .map(|s| {
            doc(
                s,
                Level::L0,
                0,
                &s.name,
                &format!("{}\n{}", s.name, s.description),
            )
        })
        .collect();
    let edge = |a: &str, b: &str, kind: &str| -> Edge {
        from(
            json!({"src": format!("r:{a}"), "dst": format!("r:{b}"), "kind": kind,
            "confidence": 1.0, "source": "EXTRACTED", "extractor": "frontmatter", "evidence": []}),
        )
    };
    let mut edges = vec![
        edge("deploy", "build", "depends_on"),
        edge("build", "fetch", "depends_on"),
        edge("deploy", "notify", "complements"),
    ];
    if cycle {
        edges.push(edge("fetch", "deploy", "depends_on"));
    }
    Fixture {
        skills,
        docs,
        edges,
        members: Vec::new(),
        scores: Vec::new(),
    }
}

fn chain_index(dir: &Path, cycle: bool) -> Index {
    index_of_chain(dir, &chain_fixture(cycle))
}

/// The index of a chain fixture (no members, scores or vectors).
fn index_of_chain(dir: &Path, f: &Fixture) -> Index {
    let input = BuildInput {
        skills: &f.skills,
        documents: &f.docs,
        edges: &f.edges,
        members: None,
        scores: None,
        registries: &[],
        vectors: None,
        min_confidence: 0.5,
    };
    build(input, &dir.join("i"), json!({})).unwrap();
    Index::open(&dir.join("i")).unwrap()
}

fn plan_ids(b: &crate::Bundle) -> Vec<&str> {
    b.plan.iter().map(|s| s.id.as_str()).collect()
}

#[test]
fn route_adds_dependencies_below_the_cutoff_and_orders_them_first() {
    let dir = tempfile::tempdir().unwrap();
    let index = chain_index(dir.path(), false);
    // k = 1: only deploy is retrieved; build and fetch come from the closure.
    let a = index
        .search(&Query::new("deploy the release to production", None, 1))
        .unwrap();
    assert_eq!(names(&index, &a.hits), vec!["r:deploy"]);
    // Without a budget the bundle is minimal: no complements.
    let minimal = crate::route(&index, &a, None);
    assert_eq!(plan_ids(&minimal), vec!["r:fetch", "r:build", "r:deploy"]);
    let b = crate::route(&index, &a, Some(1_000_000));
    assert_eq!(
        plan_ids(&b),
        vec!["r:fetch", "r:build", "r:deploy", "r:notify"]
    );
    assert!(b.cycles.is_empty());
    // deploy needs `container-image`; the earlier steps output source-tree and artifact.
    assert_eq!(b.type_errors.len(), 1, "{:?}", b.type_errors);
    assert!(b.type_errors[0].contains("r:deploy needs `container-image`"));
    // Token accounting: every skill's tokens, and a budget below the chain keeps the chain,
    // drops the complement and reports the overrun.
    let chain: u64 = b
        .plan
        .iter()
        .filter(|s| s.id != "r:notify")
        .map(|s| u64::from(s.tokens))
        .sum();
    assert_eq!(
        b.tokens,
        chain
            + b.plan
                .iter()
                .find(|s| s.id == "r:notify")
                .map_or(0, |s| u64::from(s.tokens))
    );
    let tight = crate::route(&index, &a, Some(1));
    assert_eq!(plan_ids(&tight), vec!["r:fetch", "r:build", "r:deploy"]);
    assert_eq!(tight.overrun, chain - 1);
}

#[test]
fn route_reports_a_cycle_instead_of_looping() {
    let dir = tempfile::tempdir().unwrap();
    let index = chain_index(dir.path(), true);
    let a = index
        .search(&Query::new("deploy the release to production", None, 1))
        .unwrap();
    let b = crate::route(&index, &a, Some(1_000_000));
    assert_eq!(
        b.cycles,
        vec![vec![
            "r:build".to_owned(),
            "r:deploy".to_owned(),
            "r:fetch".to_owned()
        ]]
    );
    // Every skill once; the cycle's members together, the complement after them.
    let ids = plan_ids(&b);
    assert_eq!(ids.len(), 4);
    assert_eq!(ids[3], "r:notify");
}

#[test]
fn a_scoped_query_and_route_stay_inside_the_scope() {
    // deploy → build → fetch; deploy complements notify.
    let dir = tempfile::tempdir().unwrap();
    let index = chain_index(dir.path(), false);
    // The caller sees deploy, fetch and notify, not build.
    let scope = crate::Scope::new(&index, |s| s.id.as_str() != "r:build");
    assert_eq!(scope.len(), 3);
    let mut q = Query::new("build the artifact and deploy the release", None, 4);
    q.scope = Some(&scope);
    let a = index.search(&q).unwrap();
    let found = names(&index, &a.hits);
    assert!(!found.contains(&"r:build".to_owned()), "{found:?}");
    assert!(
        a.rejected
            .iter()
            .all(|h| index.skills[h.skill as usize].id.as_str() != "r:build")
    );
    assert!(found.contains(&"r:deploy".to_owned()), "{found:?}");
    // deploy's dependency build is withheld, not named; the closure stops there (fetch came only
    // through build); the complement is added within the budget.
    let only_deploy = crate::Answer {
        hits: a
            .hits
            .iter()
            .filter(|h| index.skills[h.skill as usize].id.as_str() == "r:deploy")
            .cloned()
            .collect(),
        ..a.clone()
    };
    let b = crate::route_within(&index, &only_deploy, Some(1_000_000), Some(&scope));
    assert_eq!(plan_ids(&b), vec!["r:deploy", "r:notify"]);
    assert_eq!(b.withheld, 1);
    assert!(b.missing.is_empty(), "{:?}", b.missing);
    // Unscoped, the same answer routes the whole chain.
    let full = crate::route(&index, &only_deploy, Some(1_000_000));
    assert_eq!(
        plan_ids(&full),
        vec!["r:fetch", "r:build", "r:deploy", "r:notify"]
    );
    assert_eq!(full.withheld, 0);
}

#[test]
fn an_unsafe_dependency_outside_the_scope_is_withheld_not_named() {
    // deploy → build → fetch, with build unsafe (skills are fetch, build, deploy, notify).
    let mut f = chain_fixture(false);
    assert_eq!(f.skills[1].id.as_str(), "r:build");
    f.skills[1].risk_tier = skg_model::RiskTier::Unsafe;
    let dir = tempfile::tempdir().unwrap();
    let index = index_of_chain(dir.path(), &f);
    let a = index
        .search(&Query::new("deploy the release to production", None, 1))
        .unwrap();
    assert_eq!(names(&index, &a.hits), vec!["r:deploy"]);
    // Open: the unsafe dependency is named as missing.
    let open = crate::route(&index, &a, None);
    assert_eq!(open.missing, vec!["r:build".to_owned()]);
    assert_eq!(open.withheld, 0);
    // A caller who cannot see build learns only that one dependency is withheld.
    let scope = crate::Scope::new(&index, |s| s.id.as_str() != "r:build");
    let b = crate::route_within(&index, &a, None, Some(&scope));
    assert!(b.missing.is_empty(), "{:?}", b.missing);
    assert_eq!(b.withheld, 1);
    assert_eq!(plan_ids(&b), vec!["r:deploy"]);
}

#[test]
fn a_complement_whose_dependency_is_unsafe_or_hidden_is_left_out() {
    // notify (the complement of deploy) depends on fetch; with `unsafe_fetch`, fetch is unsafe.
    let make = |unsafe_fetch: bool| {
        let mut f = chain_fixture(false);
        let edge = |a: &str, b: &str, kind: &str| -> Edge {
            from(json!({"src": a, "dst": b, "kind": kind, "confidence": 1.0,
                "source": "EXTRACTED", "extractor": "frontmatter", "evidence": []}))
        };
        f.edges = vec![
            edge("r:notify", "r:fetch", "depends_on"),
            edge("r:deploy", "r:notify", "complements"),
        ];
        if unsafe_fetch {
            f.skills[0].risk_tier = skg_model::RiskTier::Unsafe;
        }
        f
    };
    let dir = tempfile::tempdir().unwrap();
    let index = index_of_chain(dir.path(), &make(true));
    let a = index
        .search(&Query::new("deploy the release to production", None, 1))
        .unwrap();
    assert_eq!(names(&index, &a.hits), vec!["r:deploy"]);
    let b = crate::route(&index, &a, Some(1_000_000));
    assert_eq!(
        plan_ids(&b),
        vec!["r:deploy"],
        "the unsafe fetch must not ride in with notify"
    );
    // Safe, but hidden from the caller: the same.
    let dir2 = tempfile::tempdir().unwrap();
    let index2 = index_of_chain(dir2.path(), &make(false));
    let a = index2
        .search(&Query::new("deploy the release to production", None, 1))
        .unwrap();
    let scope = crate::Scope::new(&index2, |s| s.id.as_str() != "r:fetch");
    let b = crate::route_within(&index2, &a, Some(1_000_000), Some(&scope));
    assert_eq!(plan_ids(&b), vec!["r:deploy"]);
    let open = crate::route(&index2, &a, Some(1_000_000));
    // deploy (retrieved) first; notify after fetch, which it depends on.
    assert_eq!(plan_ids(&open), vec!["r:deploy", "r:fetch", "r:notify"]);
}

/// Stand-in vectors that depend on the text only, so a carried-over vector equals a recomputed one.
fn vec_of(text: &str) -> Vec<f32> {
    let h = blake3::hash(text.as_bytes());
    let v: Vec<f32> = h.as_bytes()[..8]
        .iter()
        .map(|&b| f32::from(b) + 1.0)
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn vectors_for(docs: &[Document], model: &str) -> Vectors {
    Vectors {
        tokens: Vec::new(),
        token_directions: 0,
        model: model.into(),
        dim: 8,
        rows: crate::dense_targets(docs)
            .into_iter()
            .map(|i| (i, vec_of(&docs[i].text)))
            .collect(),
    }
}

fn hashed(mut f: Fixture) -> Fixture {
    for s in &mut f.skills {
        s.content_hash = format!("hash-of-{}", s.id);
    }
    f
}

fn input<'a>(f: &'a Fixture, vectors: Option<&Vectors>) -> BuildInput<'a> {
    BuildInput {
        skills: &f.skills,
        documents: &f.docs,
        edges: &f.edges,
        members: Some(&f.members),
        scores: Some(&f.scores),
        registries: &[],
        vectors: vectors.cloned(),
        min_confidence: 0.5,
    }
}

#[test]
fn incremental_update_holds_exactly_the_new_state() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("index");
    let old_state = hashed(fixture());
    let v = vectors_for(&old_state.docs, "m");
    build(input(&old_state, Some(&v)), &dest, json!({})).unwrap();

    // New state: `charts` edited (new hash, new overview text), `csv` deleted, `svg` added.
    let mut new = hashed(fixture());
    let charts = new
        .skills
        .iter_mut()
        .find(|s| s.id.as_str() == "r:charts")
        .unwrap();
    charts.content_hash = "hash-of-charts-v2".into();
    for d in new
        .docs
        .iter_mut()
        .filter(|d| d.skill.as_str() == "r:charts" && d.level == Level::L1)
    {
        d.text = "chart-maker: Draw bar and line charts as SVG.".into();
    }
    new.skills.retain(|s| s.id.as_str() != "r:csv");
    new.docs.retain(|d| d.skill.as_str() != "r:csv");
    new.scores.retain(|s| s.id.as_str() != "r:csv");
    new.members.retain(|m| m.id.as_str() != "r:csv");
    let mut svg = Skill::from_text("r", "svg", "svg-writer", "Write SVG images.", "body");
    svg.content_hash = "hash-of-svg".into();
    new.docs.push(doc(
        &svg,
        Level::L0,
        0,
        "svg-writer",
        "svg-writer\nWrite SVG images.",
    ));
    new.skills.push(svg);

    let old = Index::open(&dest).unwrap();
    let diff = crate::diff_packages(&old, &new.skills);
    assert_eq!(diff.kept, ["r:pdf", "r:pdf-copy"]);
    assert_eq!(diff.changed, ["r:charts"]);
    assert_eq!(diff.added, ["r:svg"]);
    assert_eq!(diff.deleted, ["r:csv"]);

    let targets = crate::dense_targets(&new.docs);
    let (reused, todo) = crate::reuse_vectors(&old, &diff, &new.docs, &targets, "m");
    assert_eq!(reused.len() + todo.len(), targets.len());
    for (i, v) in &reused {
        let d = &new.docs[*i];
        assert!(diff.kept.contains(&d.skill.to_string()), "{}", d.id);
        assert_eq!(*v, vec_of(&d.text), "the carried vector is this document's");
    }
    let todo_skills: std::collections::BTreeSet<&str> =
        todo.iter().map(|&i| new.docs[i].skill.as_str()).collect();
    assert_eq!(
        todo_skills.into_iter().collect::<Vec<_>>(),
        ["r:charts", "r:svg"]
    );
    // Another model: nothing can be carried over.
    let (none, all) = crate::reuse_vectors(&old, &diff, &new.docs, &targets, "other-model");
    assert!(none.is_empty() && all.len() == targets.len());
    drop(old);

    // The update = reused + freshly embedded rows, written whole over the old folder …
    let mut rows = reused;
    rows.extend(todo.iter().map(|&i| (i, vec_of(&new.docs[i].text))));
    let updated = Vectors {
        tokens: Vec::new(),
        token_directions: 0,
        model: "m".into(),
        dim: 8,
        rows,
    };
    let m_inc = build(input(&new, Some(&updated)), &dest, json!({})).unwrap();
    // … is byte for byte the index a whole build of the new state writes.
    let fresh = dir.path().join("fresh");
    let whole = vectors_for(&new.docs, "m");
    let m_full = build(input(&new, Some(&whole)), &fresh, json!({})).unwrap();
    assert_eq!(m_inc.content_hash, m_full.content_hash);
    let ix = Index::open(&dest).unwrap();
    assert!(ix.skill("r:csv").is_none());
    assert!(ix.docs.iter().all(|d| !d.id.as_str().starts_with("r:csv#")));
    let overview: Vec<&str> = ix
        .docs
        .iter()
        .filter(|d| ix.skills[d.skill as usize].id.as_str() == "r:charts" && d.level == Level::L1)
        .map(|d| d.snippet.as_str())
        .collect();
    assert_eq!(overview, ["chart-maker: Draw bar and line charts as SVG."]);
    assert!(ix.skill("r:svg").is_some());
}

#[test]
fn a_failed_build_keeps_the_previous_index() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("index");
    let f = hashed(fixture());
    let first = build(input(&f, None), &dest, json!({})).unwrap();
    let mut g = hashed(fixture());
    g.skills.retain(|s| s.id.as_str() != "r:charts");
    // The last file cannot be written (a folder stands where the manifest goes): everything
    // before it was, into a folder the caller staged.
    let staged = skg_artifact::Staged::beside(&dest).unwrap();
    std::fs::create_dir(staged.path().join(skg_artifact::MANIFEST_FILE)).unwrap();
    let err = crate::build_staged(input(&g, None), staged, json!({}));
    assert!(err.is_err());
    let ix = Index::open(&dest).unwrap();
    assert_eq!(ix.manifest.content_hash, first.content_hash);
    assert!(ix.skill("r:charts").is_some());
    let leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "index")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn tool_names_are_valid_for_every_host_and_unique() {
    use crate::adapt::tool_name;
    let mut taken = std::collections::HashSet::new();
    assert_eq!(tool_name("pdf-tools", &mut taken), "pdf-tools");
    assert_eq!(tool_name("pdf-tools", &mut taken), "pdf-tools_2");
    assert_eq!(tool_name("PDF Tools (v2)", &mut taken), "PDF_Tools__v2");
    assert_eq!(tool_name("3d-print", &mut taken), "skill_3d-print");
    assert_eq!(
        tool_name("ünï", &mut taken),
        "n",
        "non-ASCII → `_`, trimmed"
    );
    assert_eq!(tool_name("ééé", &mut taken), "skill_");
    let long = "a".repeat(100);
    assert_eq!(tool_name(&long, &mut taken), "a".repeat(64));
    let second = tool_name(&long, &mut taken);
    assert_eq!(second.len(), 64);
    assert!(second.ends_with("_2"));
}

#[test]
fn export_writes_skill_folders_in_plan_order_and_refuses_foreign_folders() {
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &fixture(), None);
    let a = index.search(&Query::new("draw charts", None, 1)).unwrap();
    let bundle = crate::route(&index, &a, None);
    // charts depends on pdf-copy, which folds to its canonical pdf: two skills, pdf first.
    let ids: Vec<&str> = bundle.plan.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["r:pdf", "r:charts"]);
    let out = dir.path().join("bundle");
    let written = crate::adapt::export(&index, &bundle, &out).unwrap();
    assert_eq!(
        written,
        [
            out.join("pdf-tools/SKILL.md"),
            out.join("chart-maker/SKILL.md")
        ]
    );
    let md = std::fs::read_to_string(&written[1]).unwrap();
    assert!(md.starts_with("---\n"));
    assert!(md.contains("Draw charts from tables."), "{md}");
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bundle.json")).unwrap()).unwrap();
    assert_eq!(plan["plan"][0]["folder"], "pdf-tools");
    assert_eq!(plan["plan"][1]["step"], 2);
    // An earlier export is replaced; a folder that is not one is left alone.
    crate::adapt::export(&index, &bundle, &out).unwrap();
    let foreign = dir.path().join("mine");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "keep me").unwrap();
    assert!(crate::adapt::export(&index, &bundle, &foreign).is_err());
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "keep me"
    );
}

#[test]
fn skill_markdown_round_trips_as_yaml_frontmatter() {
    let mut s = Skill::from_text("r", "x", "x-tool", "Says: \"hi\" #tag", "# Body\ntext\n");
    s.frontmatter.json =
        r#"{"description":"Says: \"hi\" #tag","metadata":{"tags":["a","b"]},"name":"x-tool"}"#
            .into();
    let md = crate::skill_markdown(&s);
    assert_eq!(
        md,
        "---\ndescription: \"Says: \\\"hi\\\" #tag\"\nmetadata: {\"tags\":[\"a\",\"b\"]}\nname: \"x-tool\"\n---\n# Body\ntext\n"
    );
}

/// The pruned one-pass search for the best distinct skills gives what scoring every document and
/// keeping each skill's best would: the same scores for the top `n` (ties may swap skills).
#[test]
fn pruned_group_search_equals_exhaustive_grouping() {
    let words = [
        "pdf", "merge", "form", "chart", "table", "csv", "clean", "plot", "deploy", "test",
        "review", "branch", "release", "notes", "debug",
    ];
    let mut skills = Vec::new();
    let mut docs = Vec::new();
    let mut x: u64 = 7;
    let mut next = |m: usize| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(x >> 33).unwrap() % m
    };
    for i in 0..120 {
        let text = |n: usize, next: &mut dyn FnMut(usize) -> usize| {
            (0..n)
                .map(|_| words[next(words.len())])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let desc = text(6, &mut next);
        let s = Skill::from_text(
            "r",
            &format!("s{i:03}"),
            &format!("skill-{i}"),
            &desc,
            "body",
        );
        docs.push(doc(&s, Level::L0, 0, &s.name.clone(), &desc));
        for o in 0..3 {
            let body = text(12, &mut next);
            docs.push(doc(&s, Level::L2, o, "Section", &body));
        }
        skills.push(s);
    }
    let f = Fixture {
        skills,
        docs,
        edges: vec![],
        members: vec![],
        scores: vec![],
    };
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &f, None);
    let w = crate::FieldWeights::DOCUMENT;
    for query in [
        "merge pdf form",
        "deploy release notes",
        "debug test branch review",
        "csv",
    ] {
        let terms = index.bm25.terms(query);
        for n in [1, 5, 20] {
            for pass in [crate::bm25::Pass::Pruned, crate::bm25::Pass::Exhaustive] {
                let pruned = index
                    .bm25
                    .search_groups(&terms, &w, n, &|d| Some(index.docs[d as usize].skill), pass)
                    .unwrap();
                let all = index.bm25.search(&terms, &w, index.docs.len()).unwrap();
                let mut best: HashMap<u32, f32> = HashMap::new();
                for (d, s) in all {
                    let e = best.entry(index.docs[d as usize].skill).or_insert(s);
                    *e = e.max(s);
                }
                let mut want: Vec<f32> = best.into_values().collect();
                want.sort_by(|a, b| b.total_cmp(a));
                want.truncate(n);
                let mut got: Vec<f32> = pruned.iter().map(|p| p.1).collect();
                got.sort_by(|a, b| b.total_cmp(a));
                // The buffered union adds a document's term scores in another order than block
                // WAND: equal to float rounding.
                assert_eq!(got.len(), want.len(), "{query} n={n} {pass:?}");
                for (g, w) in got.iter().zip(&want) {
                    assert!(
                        (g - w).abs() <= 1e-5 * w.abs(),
                        "{query} n={n} {pass:?}: {got:?} {want:?}"
                    );
                }
                for (skill, score, d) in pruned {
                    assert_eq!(
                        index.docs[d as usize].skill, skill,
                        "the doc is the skill's"
                    );
                    assert!(score > 0.0);
                }
            }
        }
    }
}

#[test]
fn candidate_records_are_the_fusion_by_its_definition() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture();
    // With the query (0.8, 0.6): cos(pdf) = 0.8, cos(charts) = max(0.6, 0.96) = 0.96.
    let v = plane_vectors();
    let index = built(dir.path(), &f, Some(&v));
    let queries = [crate::JudgedQuery {
        id: Some("q1".into()),
        query: "merge pdf".into(),
        gold: vec!["r/pdf/SKILL.md".into()],
        acceptable: vec!["r/charts/SKILL.md".into()],
    }];
    let options = crate::EvalOptions {
        include_quarantined: true,
        ..crate::EvalOptions::default()
    };
    let mut embed =
        |_: &str| -> Result<crate::QueryEmbedding, String> { Ok(vec![0.8, 0.6].into()) };
    let records = crate::candidate_records(&index, &queries, &options, &mut embed).unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!((r.id.as_deref(), r.mode), (Some("q1"), Mode::Hybrid));
    assert_eq!(
        (r.gold.as_slice(), r.acceptable.as_slice()),
        (&["r:pdf".to_owned()][..], &["r:charts".to_owned()][..])
    );
    let cosine = |id: &str| {
        r.candidates
            .iter()
            .find(|c| c.skill == id)
            .map(|c| c.cosine)
    };
    assert!((cosine("r:pdf").unwrap() - 0.8).abs() < 1e-6);
    assert!((cosine("r:charts").unwrap() - 0.96).abs() < 1e-6);
    // The weight is the adaptive one of the best BM25 score, and every candidate's score is
    // w · its share of the best BM25 + (1 − w) · its cosine (no cut: the fixture has few skills).
    let best = r.candidates.iter().map(|c| c.bm25).fold(0.0f32, f32::max);
    assert!(best > 0.0);
    let w = Fusion::default().weight(best, r.terms).unwrap();
    assert!((r.bm25_weight.unwrap() - w).abs() < 1e-6);
    for c in &r.candidates {
        assert_eq!(c.bm25_counted, c.bm25);
        let want = w * (c.bm25 / best) + (1.0 - w) * c.cosine;
        assert!((c.score - want).abs() < 1e-6, "{c:?}: {want}");
    }
    // Best first, and in the order a ten-hit hybrid query ranks them.
    assert!(r.candidates.windows(2).all(|p| p[0].score >= p[1].score));
    let qv = [0.8f32, 0.6];
    let mut q = Query::new("merge pdf", Some(&qv), 10);
    q.include_quarantined = true;
    q.min_score = f32::NEG_INFINITY;
    let hits = names(&index, &index.search(&q).unwrap().hits);
    let listed: Vec<String> = r.candidates.iter().map(|c| c.skill.clone()).collect();
    assert_eq!(listed[..hits.len()], hits[..]);
}

#[test]
fn misses_are_classified_by_what_the_rankings_show() {
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &fixture(), None);
    let q = |id: &str, query: &str, gold: &str, acceptable: &[&str]| crate::JudgedQuery {
        id: Some(id.into()),
        query: query.into(),
        gold: vec![gold.into()],
        acceptable: acceptable.iter().map(|s| (*s).to_owned()).collect(),
    };
    let queries = [
        // Found first: not a miss.
        q("hit", "merge several documents", "r/pdf/SKILL.md", &[]),
        // No word of the query is in the gold's documents (and no vectors): never a candidate.
        q("never", "merge several documents", "r/charts/SKILL.md", &[]),
        // csv-cleaner is quarantined.
        q("quarantined", "clean csv tables", "r/csv/SKILL.md", &[]),
    ];
    let mut no_embed =
        |_: &str| -> Result<crate::QueryEmbedding, String> { Err("no model".into()) };
    let r = crate::misses(
        &index,
        &queries,
        &crate::EvalOptions::default(),
        &mut no_embed,
    )
    .unwrap();
    let got: Vec<(&str, crate::MissClass)> = r
        .misses
        .iter()
        .map(|m| (m.query.as_str(), m.class))
        .collect();
    assert_eq!(
        got,
        [
            ("never", crate::MissClass::NeverACandidate),
            ("quarantined", crate::MissClass::GoldQuarantined),
        ]
    );
    // With the quarantine off and every field weighted 1, csv-cleaner answers "clean csv
    // tables" first (three words in its card): charts ("tables") is a candidate ranked low,
    // unless csv-cleaner is an acceptable answer. (Under the packages' default weights, body 3
    // and card 0.25, charts' overview — its only body text — says "tables" and ranks first.)
    let options = crate::EvalOptions {
        include_quarantined: true,
        field_weights: Some([1.0; 6]),
        ..crate::EvalOptions::default()
    };
    let queries = [
        q("low", "clean csv tables", "r/charts/SKILL.md", &[]),
        q(
            "acceptable",
            "clean csv tables",
            "r/charts/SKILL.md",
            &["r/csv/SKILL.md"],
        ),
    ];
    let r = crate::misses(&index, &queries, &options, &mut no_embed).unwrap();
    let got: Vec<(&str, crate::MissClass, Option<usize>)> = r
        .misses
        .iter()
        .map(|m| (m.query.as_str(), m.class, m.ranks[2]))
        .collect();
    assert_eq!(
        got,
        [
            ("low", crate::MissClass::RankedLow, Some(2)),
            ("acceptable", crate::MissClass::AcceptableAbove, Some(2)),
        ]
    );
    assert_eq!(r.by_class.values().sum::<usize>(), 2);
}

#[test]
fn ranker_features_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &fixture(), None);
    let q = Query::new("merge several documents", None, crate::rerank::CANDIDATES);
    let answer = crate::rerank::candidates(&index, &q).unwrap();
    assert_eq!(names(&index, &answer.hits)[0], "r:pdf");
    let x = crate::rerank::features(&index, "merge several documents", None, &answer);
    // pdf-tools: no vectors (dense, sections and their gaps 0), the best BM25 (relative 1), fused
    // rank 1; its name words {pdf, tools} are not in the query (0); of the query's words {merge,
    // several, documents} its description "Read and merge PDF files." holds one (1/3).
    let want = [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0 / 3.0];
    assert_eq!(x[0].len(), crate::rerank::RANK_FEATURES.len());
    for (got, want) in x[0].iter().zip(want) {
        assert!((got - want).abs() < 1e-9, "{:?}", x[0]);
    }
    // A ranker whose only weight is against the fused rank reverses the first stage's order.
    let ranker = crate::rerank::Ranker {
        format: crate::rerank::RANKER_FORMAT,
        features: crate::rerank::RANK_FEATURES
            .iter()
            .map(|f| f.0.to_owned())
            .collect(),
        mean: vec![0.0; 8],
        scale: vec![1.0; 8],
        coefficients: vec![0.0, 0.0, 0.0, 0.0, 0.0, -5.0, 0.0, 0.0],
        intercept: 0.0,
        training: json!({}),
    };
    let mut q = Query::new(
        "clean the tables into charts",
        None,
        crate::rerank::CANDIDATES,
    );
    q.include_quarantined = true;
    let answer = crate::rerank::candidates(&index, &q).unwrap();
    assert!(answer.hits.len() >= 2, "{:?}", names(&index, &answer.hits));
    let order = crate::rerank::rerank(
        &index,
        "clean the tables into charts",
        None,
        &answer,
        &ranker,
    );
    let first: Vec<u32> = answer.hits.iter().rev().map(|h| h.skill).collect();
    assert_eq!(order, first);
    assert!(crate::rerank::Ranker::from_json(&serde_json::to_string(&ranker).unwrap()).is_ok());
    let mut other = ranker.clone();
    other.features.pop();
    assert!(crate::rerank::Ranker::from_json(&serde_json::to_string(&other).unwrap()).is_err());
}

#[test]
fn section_vectors_are_the_first_sections_cut_to_their_opening() {
    let f = fixture();
    let sections = |n: usize| {
        crate::DenseTexts {
            sections: n,
            usage_chars: 0,
            usage_rule: 0,
            overview_chars: None,
        }
        .targets(&f.docs)
    };
    // Without sections: the L0 and L1 documents only.
    let base = crate::dense_targets(&f.docs);
    assert_eq!(sections(0), base);
    // pdf-tools has two L2 sections (Forms, Merge): one → the first, two or more → both.
    let l2 = |targets: &[usize]| -> Vec<&str> {
        targets
            .iter()
            .filter(|&&i| f.docs[i].level == Level::L2)
            .map(|&i| f.docs[i].title.as_str())
            .collect()
    };
    assert_eq!(l2(&sections(1)), ["Forms"]);
    assert_eq!(l2(&sections(5)), ["Forms", "Merge"]);
    // An abstract is embedded whole; a section as title + text, cut at SECTION_CHARS characters.
    assert_eq!(crate::dense_text(&f.docs[0]), f.docs[0].text);
    assert_eq!(
        crate::dense_text(&f.docs[1]),
        "Forms\nFill interactive form fields and flatten the form."
    );
    let mut long = f.docs[1].clone();
    long.text = "é".repeat(1000);
    assert_eq!(
        crate::dense_text(&long).chars().count(),
        crate::SECTION_CHARS
    );
}

#[test]
fn overview_vectors_are_cut_or_left_out_and_recorded_in_the_manifest() {
    let f = fixture();
    let levels = |d: &crate::DenseTexts| -> Vec<Level> {
        d.targets(&f.docs)
            .iter()
            .map(|&i| f.docs[i].level)
            .collect()
    };
    let whole = crate::DenseTexts {
        sections: 0,
        usage_chars: 0,
        usage_rule: 0,
        overview_chars: None,
    };
    let none = crate::DenseTexts {
        sections: 0,
        usage_chars: 0,
        usage_rule: 0,
        overview_chars: Some(0),
    };
    let cut = crate::DenseTexts {
        sections: 0,
        usage_chars: 0,
        usage_rule: 0,
        overview_chars: Some(4),
    };
    // Whole and cut overviews embed the same documents; 0 drops every L1 and nothing else.
    assert_eq!(whole.targets(&f.docs), crate::dense_targets(&f.docs));
    assert_eq!(cut.targets(&f.docs), whole.targets(&f.docs));
    let l1 = levels(&whole).iter().filter(|l| **l == Level::L1).count();
    assert!(l1 > 0);
    assert_eq!(levels(&none).len(), levels(&whole).len() - l1);
    assert!(levels(&none).iter().all(|l| *l != Level::L1));
    // The cut applies to overviews only, by characters (not bytes).
    let mut overview = f
        .docs
        .iter()
        .find(|d| d.level == Level::L1)
        .unwrap()
        .clone();
    overview.text = "éèêëx".into();
    assert_eq!(cut.text(&overview), "éèêë");
    assert_eq!(whole.text(&overview), "éèêëx");
    let abstract_ = f.docs.iter().find(|d| d.level == Level::L0).unwrap();
    assert_eq!(cut.text(abstract_), abstract_.text);
    // The default cuts overviews at DEFAULT_OVERVIEW_CHARS characters.
    let default = crate::DenseTexts::default();
    assert_eq!(default.overview_chars, Some(crate::DEFAULT_OVERVIEW_CHARS));
    overview.text = "é".repeat(crate::DEFAULT_OVERVIEW_CHARS + 10);
    assert_eq!(
        default.text(&overview).chars().count(),
        crate::DEFAULT_OVERVIEW_CHARS
    );
    // The manifest records the cut and the sections, and reads back what it recorded.
    for d in [
        default,
        whole,
        none,
        cut,
        crate::DenseTexts {
            sections: 3,
            usage_chars: 0,
            usage_rule: 0,
            overview_chars: None,
        },
    ] {
        let mut options = json!({});
        d.record(&mut options);
        assert_eq!(crate::DenseTexts::recorded(&options), d);
    }
    // A whole-overview index records nothing, as every index before the cut: they read alike.
    let mut options = json!({});
    whole.record(&mut options);
    assert_eq!(options, json!({}));
    let mut options = json!({});
    default.record(&mut options);
    assert_eq!(
        options,
        json!({"overview_chars": crate::DEFAULT_OVERVIEW_CHARS, "usage_chars": crate::USAGE_CHARS, "usage_rule": crate::USAGE_RULE})
    );
}

#[test]
fn usage_sections_get_a_vector_of_their_own_cut_at_usage_chars() {
    let mut f = fixture();
    // pdf-tools' second section says when to use it; its first does not.
    f.docs[2].title = "When to use".into();
    f.docs[2].heading_path = vec!["When to use".into()];
    f.docs[2].role = SectionRole::WhenToUse;
    f.docs[2].text = format!("## When to use\n\n{}", "é".repeat(2 * crate::USAGE_CHARS));
    let on = crate::DenseTexts::default();
    let off = crate::DenseTexts {
        usage_chars: 0,
        ..on
    };
    let l2 = |d: &crate::DenseTexts, docs: &[Document]| -> Vec<usize> {
        d.targets(docs)
            .into_iter()
            .filter(|&i| docs[i].level == Level::L2)
            .collect()
    };
    assert_eq!(l2(&on, &f.docs), [2]);
    assert!(l2(&off, &f.docs).is_empty());
    // Embedded as the title, then the text without its heading line, cut at USAGE_CHARS
    // characters (not SECTION_CHARS).
    let text = on.text(&f.docs[2]);
    assert!(text.starts_with("When to use\né"), "{text}");
    assert_eq!(text.chars().count(), crate::USAGE_CHARS);
    // With first-N sections as well, a usage section is one target, embedded as a usage section.
    let both = crate::DenseTexts { sections: 2, ..on };
    assert_eq!(l2(&both, &f.docs), [1, 2]);
    assert_eq!(both.text(&f.docs[2]), text);
    assert_eq!(both.text(&f.docs[1]), crate::dense_text(&f.docs[1]));
    // Another cut embeds another text.
    let short = crate::DenseTexts {
        usage_chars: 5,
        ..on
    };
    assert_eq!(short.text(&f.docs[2]), "When ");
    // Only the sections extract marked as saying when to use the skill count (which ones it
    // marks is skg-extract's `roles` rule, tested there): not one titled so but marked body,
    // nor one that says when not to use it.
    for role in [SectionRole::Body, SectionRole::WhenNotToUse] {
        let mut other = f.docs.clone();
        other[2].role = role;
        assert!(l2(&on, &other).is_empty(), "{role:?}");
    }
    // At most USAGE_PER_SKILL per skill, the first ones.
    let mut many = f.docs.clone();
    for k in 0..crate::USAGE_PER_SKILL + 2 {
        let mut d = f.docs[2].clone();
        d.title = format!("Use cases {k}");
        d.heading_path = vec![d.title.clone()];
        d.role = SectionRole::WhenToUse;
        many.push(d);
    }
    let chosen = l2(&on, &many);
    assert_eq!(chosen.len(), crate::USAGE_PER_SKILL);
    assert_eq!(chosen[0], 2);
    // Indexes with and without usage vectors, cut otherwise or chosen by another rule, do not
    // embed the same texts: no vector carries over.
    let older_rule = crate::DenseTexts {
        usage_rule: crate::USAGE_RULE - 1,
        ..on
    };
    assert!(on.same_texts(&on) && !on.same_texts(&off) && !on.same_texts(&short));
    assert!(!on.same_texts(&older_rule));
    // Without usage vectors the rule does not matter.
    assert!(off.same_texts(&crate::DenseTexts {
        usage_rule: 0,
        ..off
    }));
    for d in [on, short] {
        let mut options = json!({});
        d.record(&mut options);
        assert_eq!(crate::DenseTexts::recorded(&options), d);
    }
    let mut options = json!({});
    off.record(&mut options);
    assert!(crate::DenseTexts::recorded(&options).same_texts(&off));
}

/// A previous index made with another usage rule or cut carries no vector over.
#[test]
fn vectors_are_carried_over_only_under_the_same_usage_rule() {
    let mut f = hashed(fixture());
    f.docs[2].title = "When to use".into();
    f.docs[2].heading_path = vec!["When to use".into()];
    f.docs[2].role = SectionRole::WhenToUse;
    let on = crate::DenseTexts::default();
    let targets = on.targets(&f.docs);
    let vectors = crate::Vectors {
        tokens: Vec::new(),
        token_directions: 0,
        rows: targets
            .iter()
            .map(|&i| (i, vec_of(&f.docs[i].text)))
            .collect(),
        ..vectors_for(&f.docs, "m")
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, old) in [
        ("same", on),
        (
            "older",
            crate::DenseTexts {
                usage_rule: 0,
                ..on
            },
        ),
        (
            "none",
            crate::DenseTexts {
                usage_chars: 0,
                ..on
            },
        ),
    ] {
        let mut options = json!({});
        old.record(&mut options);
        build(input(&f, Some(&vectors)), &dir.path().join(name), options).unwrap();
        let index = Index::open(&dir.path().join(name)).unwrap();
        let diff = crate::diff_packages(&index, &f.skills);
        let plan = crate::VectorPlan::new(&f.docs, &on, Some((&index, &diff)), &[], "m");
        if name == "same" {
            assert_eq!(plan.reused.len(), targets.len(), "{name}");
            assert!(plan.texts.is_empty(), "{name}");
        } else {
            assert!(plan.reused.is_empty(), "{name}");
            assert_eq!(plan.texts.len(), targets.len(), "{name}");
        }
    }
}

/// A vector is carried over from the previous index only when that index cut overviews the
/// same way: its document was embedded as the same text.
#[test]
fn vectors_are_carried_over_only_under_the_same_overview_cut() {
    let f = hashed(fixture());
    let vectors = vectors_for(&f.docs, "m");
    let dir = tempfile::tempdir().unwrap();
    let cut = crate::DenseTexts {
        sections: 0,
        usage_chars: 0,
        usage_rule: 0,
        overview_chars: Some(4),
    };
    let mut options = json!({});
    cut.record(&mut options);
    build(input(&f, Some(&vectors)), &dir.path().join("old"), options).unwrap();
    let old = Index::open(&dir.path().join("old")).unwrap();
    let diff = crate::diff_packages(&old, &f.skills);
    let same = crate::VectorPlan::new(&f.docs, &cut, Some((&old, &diff)), &[], "m");
    assert_eq!(same.reused.len(), vectors.rows.len());
    assert!(same.texts.is_empty());
    let other = crate::VectorPlan::new(
        &f.docs,
        &crate::DenseTexts::default(),
        Some((&old, &diff)),
        &[],
        "m",
    );
    assert!(other.reused.is_empty());
    assert_eq!(other.texts.len(), vectors.rows.len());
}

#[test]
fn cross_validation_with_a_flat_model_keeps_the_first_stage_order() {
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &fixture(), None);
    let q = |query: &str, gold: &str| crate::JudgedQuery {
        id: None,
        query: query.into(),
        gold: vec![gold.into()],
        acceptable: Vec::new(),
    };
    let queries = [
        q("merge several documents", "r/pdf/SKILL.md"),
        q("draw charts from tables", "r/charts/SKILL.md"),
        q("clean csv tables", "r/csv/SKILL.md"),
    ];
    let options = crate::EvalOptions {
        include_quarantined: true,
        ..crate::EvalOptions::default()
    };
    let mut no_embed =
        |_: &str| -> Result<crate::QueryEmbedding, String> { Err("no model".into()) };
    let cands = crate::rerank::collect(&index, &queries, &options, &mut no_embed).unwrap();
    // A model with no weights scores every candidate alike: ties keep the first stage's order.
    let flat = |x: &[Vec<f64>], _: &[bool]| -> Result<crate::rerank::Fitted, String> {
        let k = x[0].len();
        Ok(crate::rerank::Fitted {
            mean: vec![0.0; k],
            scale: vec![1.0; k],
            coefficients: vec![0.0; k],
            intercept: 0.0,
        })
    };
    let cv = crate::rerank::cross_validate(&cands, 3, &flat).unwrap();
    let first = crate::summarize(&crate::rerank::outcomes(&cands, None));
    assert_eq!(cv, first);
    let r =
        crate::rerank::train(&cands.iter().collect::<Vec<_>>(), &flat, json!({"x": 1})).unwrap();
    assert_eq!(r.training["judged_queries"], 3);
    assert_eq!(r.training["x"], 1);
    let (x, y) = crate::rerank::rows(&cands);
    assert_eq!(r.training["rows"], x.len());
    assert_eq!(r.training["data_hash"], crate::rerank::data_hash(&x, &y));
}

/// `n` skills with an L0 and an L1 each, every other one quarantined, and unit vectors drawn
/// from `seed` (dimension 8) for both documents.
fn random_dense(n: usize, seed: u64) -> (Fixture, Vectors) {
    let mut x = seed | 1;
    let mut next = move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((x >> 40) as f32 / (1u64 << 24) as f32) - 0.5
    };
    let mut skills = Vec::new();
    let mut docs = Vec::new();
    let mut scores = Vec::new();
    for i in 0..n {
        let s = Skill::from_text(
            "r",
            &format!("s{i:03}"),
            &format!("skill-{i}"),
            "words",
            "body",
        );
        docs.push(doc(&s, Level::L0, 0, &s.name.clone(), "words"));
        docs.push(doc(&s, Level::L1, 0, "Overview", "more words"));
        scores.push(from::<Score>(json!({
            "id": s.id, "registry": "r", "path": "x/SKILL.md",
            "slop_score": if i % 2 == 0 { 0.9 } else { 0.1 }, "quarantined": i % 2 == 1,
            "threshold": 0.4, "reasons": [], "contributions": [], "features": []
        })));
        skills.push(s);
    }
    let rows = (0..docs.len())
        .map(|i| {
            let v: Vec<f32> = (0..8).map(|_| next()).collect();
            let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt().max(1e-6);
            (i, v.into_iter().map(|a| a / norm).collect())
        })
        .collect();
    let f = Fixture {
        skills,
        docs,
        edges: vec![],
        members: vec![],
        scores,
    };
    (
        f,
        Vectors {
            tokens: Vec::new(),
            token_directions: 0,
            model: "random".into(),
            dim: 8,
            rows,
        },
    )
}

fn unit(seed: u64) -> Vec<f32> {
    random_dense(1, seed).1.rows.swap_remove(0).1
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

    /// With a search wide enough to reach every row, the graph proposes every skill, so dense
    /// and hybrid answers equal the exact scan's exactly (the graph only proposes; scoring is
    /// exact either way), with the quarantine on and off.
    #[test]
    fn ann_answers_equal_the_exact_scan_on_a_small_index(n in 5usize..60, seed in 0u64..1_000_000, qseed in 0u64..1_000_000) {
        let (f, vectors) = random_dense(n, seed);
        let dir = tempfile::tempdir().unwrap();
        let mut index = built(dir.path(), &f, Some(&vectors));
        let v = unit(qseed);
        let answers = |index: &Index| {
            let mut out = Vec::new();
            for mode in [Mode::Dense, Mode::Hybrid] {
                for include_quarantined in [false, true] {
                    let mut q = Query::new("words", Some(&v), 10);
                    q.mode = mode;
                    q.include_quarantined = include_quarantined;
                    out.push(index.search(&q).unwrap().hits);
                }
            }
            out
        };
        let exact = answers(&index);
        let options = crate::ann::AnnOptions { ef_search: 2 * n + 8, ..crate::ann::AnnOptions::default() };
        proptest::prop_assert!(index.use_ann(0, options).unwrap());
        proptest::prop_assert_eq!(answers(&index), exact);
    }
}

#[test]
fn ann_is_switched_on_by_size_and_keeps_recall_on_a_larger_index() {
    let (f, vectors) = random_dense(400, 11);
    let dir = tempfile::tempdir().unwrap();
    let mut index = built(dir.path(), &f, Some(&vectors));
    let options = crate::ann::AnnOptions::default();
    assert!(!index.use_ann(801, options).unwrap(), "800 rows < 801");
    assert_eq!(index.ann(), None);
    assert!(index.use_ann(800, options).unwrap(), "800 rows ≥ 800");
    let queries: Vec<Vec<f32>> = (0..30).map(unit).collect();
    let filter = Query::new("", None, 10);
    // At the default search width (256 rows of 800) the graph finds the exact 10 nearest
    // allowed skills for nearly every query; the exact scan against itself is 1 by definition.
    let r = crate::ann::report(&index, &queries, &filter);
    assert_eq!((r.rows, r.queries), (800, 30));
    assert!(r.recall_at_10 >= 0.95, "{r:?}");
    index.use_ann(usize::MAX, options).unwrap();
    assert_eq!(crate::ann::recall(&index, &queries, &filter, 10), 1.0);
}

/// A BM25 folder of another build, naming more skills than the index holds, is refused with a
/// message when the folder is opened, not met as a panic by the first query.
#[test]
fn open_refuses_a_foreign_bm25_folder() {
    let (small, small_vectors) = random_dense(5, 1);
    let (large, large_vectors) = random_dense(12, 2);
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    built(a.path(), &small, Some(&small_vectors));
    built(b.path(), &large, Some(&large_vectors));
    let index = a.path().join("index");
    let message = |dir: &Path| match Index::open(dir) {
        Ok(_) => String::from("opened"),
        Err(e) => e.to_string(),
    };
    assert_eq!(message(&index), "opened");

    // The skill-level BM25 folder of the 12-skill build.
    let ours = index.join(crate::artifact::SKILL_BM25_DIR);
    std::fs::remove_dir_all(&ours).unwrap();
    std::fs::create_dir(&ours).unwrap();
    for entry in
        std::fs::read_dir(b.path().join("index").join(crate::artifact::SKILL_BM25_DIR)).unwrap()
    {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), ours.join(entry.file_name())).unwrap();
    }
    let m = message(&index);
    assert!(m.contains("names position 11, past the index's 5"), "{m}");
}

/// Behind a scope the graph's fixed proposal may hold fewer allowed skills than asked for: the
/// exact scan answers then, so a scoped dense query over the graph gets the scan's `k` skills,
/// not the few the graph happened to propose inside the scope.
#[test]
fn a_scoped_query_over_the_graph_gets_the_exact_scan_s_skills() {
    let (f, vectors) = random_dense(400, 11);
    let dir = tempfile::tempdir().unwrap();
    let mut index = built(dir.path(), &f, Some(&vectors));
    // Every tenth skill (s000, s010, …: 40 skills, none quarantined).
    let scope = crate::Scope::new(&index, |s| s.id.as_str().ends_with('0'));
    assert_eq!(scope.len(), 40);
    let answers = |index: &Index| {
        (0..10u64)
            .map(|seed| {
                let v = unit(1000 + seed);
                let mut q = Query::new("", Some(&v), 10);
                q.mode = Mode::Dense;
                q.scope = Some(&scope);
                index.search(&q).unwrap().hits
            })
            .collect::<Vec<_>>()
    };
    let exact = answers(&index);
    assert!(exact.iter().all(|h| h.len() == 10));
    // A narrow graph: 16 rows of 800 hold about one skill of the scope.
    let options = crate::ann::AnnOptions {
        ef_search: 16,
        ..crate::ann::AnnOptions::default()
    };
    assert!(index.use_ann(0, options).unwrap());
    assert_eq!(answers(&index), exact);
}

/// Embedding on a second thread while BM25 runs changes nothing in the answer: every mode gives
/// what `search` gives with the vector computed first; a failed embedding gives the BM25 answer
/// (as a query without a vector does); a wrong-length vector is ignored.
#[test]
fn search_embedding_answers_as_search_with_the_vector() {
    let (f, vectors) = random_dense(40, 5);
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &f, Some(&vectors));
    let v = unit(9);
    for mode in [Mode::Bm25, Mode::Dense, Mode::Hybrid] {
        let mut with = Query::new("words overview", Some(&v), 7);
        with.mode = mode;
        let expected = index.search(&with).unwrap();
        let mut without = with.clone();
        without.vector = None;
        let (got, vector) = index
            .search_embedding(&without, || Some(v.clone()))
            .unwrap();
        assert_eq!(got.hits, expected.hits, "{mode:?}");
        assert_eq!(got.mode, expected.mode, "{mode:?}");
        assert_eq!(vector.is_some(), mode != Mode::Bm25, "{mode:?}");

        let bm25 = index.search(&without).unwrap();
        for failed in [None, Some(vec![1.0; 3])] {
            let (got, _) = index.search_embedding(&without, || failed.clone()).unwrap();
            assert_eq!(got.mode, Mode::Bm25, "{mode:?}");
            assert_eq!(got.hits, bm25.hits, "{mode:?}");
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever the order, budget and cut: the listing never exceeds the budget, no description
    /// is longer than the cut, every listed skill's dependencies are listed, the markdown block is
    /// exactly `chars` long, and the same input gives the same listing.
    #[test]
    fn a_listing_keeps_its_budget_cut_and_dependencies(
        budget in 0usize..400,
        description_chars in 1usize..40,
        order in proptest::strategy::Strategy::prop_shuffle(
            proptest::sample::subsequence(vec![0u32, 1, 2, 3], 0..=4),
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = chain_index(dir.path(), false);
        let cut = crate::listing::ListingOptions { budget_chars: budget, description_chars };
        let order: Vec<(u32, crate::listing::ListedFor)> = order
            .iter()
            .enumerate()
            .map(|(r, &s)| (s, crate::listing::ListedFor::Ranked { rank: r + 1 }))
            .collect();
        let l = crate::listing::pack(&index, &order, &cut, None);
        proptest::prop_assert!(l.chars <= budget);
        proptest::prop_assert_eq!(l.markdown().chars().count(), l.chars);
        proptest::prop_assert!(crate::listing::within_cut(&index, &l));
        let listed: std::collections::BTreeSet<&str> = l.skills.iter().map(|x| x.id.as_str()).collect();
        for x in &l.skills {
            for d in &index.skills[x.skill as usize].depends_on {
                proptest::prop_assert!(listed.contains(d.as_str()), "{} listed without {}", x.id, d);
            }
        }
        proptest::prop_assert_eq!(crate::listing::pack(&index, &order, &cut, None), l);
    }
}

#[test]
fn a_listing_puts_the_best_ranked_group_that_fits_first() {
    // deploy → build → fetch; notify alone. Lines are `- name: description`.
    let dir = tempfile::tempdir().unwrap();
    let index = chain_index(dir.path(), false);
    let pos = |id: &str| index.skill(id).unwrap().0;
    let order = crate::listing::ranked_order(&index, &[pos("r:deploy"), pos("r:notify")], false);
    let wide = crate::listing::ListingOptions {
        budget_chars: 10_000,
        description_chars: 250,
    };
    let l = crate::listing::pack(&index, &order, &wide, None);
    let ids: Vec<&str> = l.skills.iter().map(|x| x.id.as_str()).collect();
    // deploy, its closure right after it (build, then fetch), then notify; nothing else left.
    assert_eq!(ids, vec!["r:deploy", "r:build", "r:fetch", "r:notify"]);
    assert_eq!(
        l.skills[0].line,
        "- deploy: Deploy the release to production servers."
    );
    let expected: usize = l.skills.iter().map(|x| x.line.chars().count() + 1).sum();
    assert_eq!(l.chars, expected);
    // A budget that holds notify's line but not deploy's group: deploy is left out, notify listed.
    let notify_line = "- notify: Notify the team.".chars().count() + 1;
    let tight = crate::listing::ListingOptions {
        budget_chars: notify_line,
        description_chars: 250,
    };
    let l = crate::listing::pack(&index, &order, &tight, None);
    let ids: Vec<&str> = l.skills.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(ids, vec!["r:notify"]);
    assert_eq!(
        l.left_out, 3,
        "deploy's group, build's and fetch's (from the catalog tail)"
    );
    // Descriptions are cut with an ellipsis.
    let short = crate::listing::ListingOptions {
        budget_chars: 10_000,
        description_chars: 6,
    };
    let l = crate::listing::pack(&index, &order, &short, None);
    assert_eq!(l.skills[0].line, "- deploy: Deplo…");
}

/// BM25 scores a long query's rarest terms: the `max` terms with the fewest postings over the
/// text fields (by definition: for each field, the documents whose field holds the term, summed
/// — the term's share of a query's work), kept in query order, ties broken by position; short
/// queries and `max` 0 keep every term.
#[test]
fn bm25_keeps_a_long_querys_rarest_terms() {
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &fixture(), None);
    let terms = index
        .bm25
        .terms("merge read pdf files clean csv tables draw charts body zyzzyva");
    assert!(terms.len() >= 6, "{terms:?}");
    let df = |t: &String| {
        (0..crate::FIELDS.len())
            .map(|f| {
                let mut one = crate::FieldWeights([0.0; 6]);
                one.0[f] = 1.0;
                index
                    .bm25
                    .search(std::slice::from_ref(t), &one, index.docs.len())
                    .unwrap()
                    .len()
            })
            .sum::<usize>()
    };
    for max in [1, 3, 5] {
        // A term no document holds matches nothing: never kept in place of one that does.
        let mut by_df: Vec<(usize, usize)> = terms
            .iter()
            .enumerate()
            .map(|(i, t)| (df(t), i))
            .filter(|&(n, _)| n > 0)
            .collect();
        by_df.sort_unstable();
        let mut keep: Vec<usize> = by_df.iter().take(max).map(|&(_, i)| i).collect();
        keep.sort_unstable();
        let want: Vec<String> = keep.iter().map(|&i| terms[i].clone()).collect();
        assert_eq!(index.bm25.rarest(&terms, max).unwrap(), want, "max {max}");
    }
    // Not a vacuous check: the cut drops terms here, and not just the last ones.
    let cut = index.bm25.rarest(&terms, 3).unwrap();
    assert_eq!(cut.len(), 3);
    assert_ne!(cut, terms[..3].to_vec());
    assert!(!cut.contains(&"zyzzyva".to_owned()));
    assert_eq!(index.bm25.rarest(&terms, 0).unwrap(), terms);
    assert_eq!(index.bm25.rarest(&terms, terms.len()).unwrap(), terms);
}

/// Three kits: alpha-kit ("alpha" in its name, a Zeta section and another), gamma-kit (the same
/// Zeta section alone) and delta-kit (the other section alone).
fn zeta_kits() -> Fixture {
    let a = Skill::from_text("r", "a", "alpha-kit", "Kit.", "body");
    let c = Skill::from_text("r", "c", "gamma-kit", "Kit.", "body");
    let d = Skill::from_text("r", "d", "delta-kit", "Kit.", "body");
    let docs = vec![
        doc(&a, Level::L0, 0, "alpha-kit", "alpha-kit\nKit."),
        doc(&a, Level::L2, 0, "Zeta", "Zeta notes on the zeta format."),
        doc(&a, Level::L2, 1, "Other", "Unrelated words here."),
        doc(&c, Level::L0, 0, "gamma-kit", "gamma-kit\nKit."),
        doc(&c, Level::L2, 0, "Zeta", "Zeta notes on the zeta format."),
        doc(&d, Level::L0, 0, "delta-kit", "delta-kit\nKit."),
        doc(&d, Level::L2, 0, "Other", "Unrelated words here."),
    ];
    Fixture {
        skills: vec![a, c, d],
        docs,
        edges: vec![],
        members: vec![],
        scores: vec![],
    }
}

/// Skill-level BM25 adds up a package's evidence: `alpha-kit` says one query word in its name and
/// the other in a section, `gamma-kit` the same section only, so with every field weighted 1 the
/// whole skill outranks it — and its hit still points at the section that matched. (The default
/// weights, body 3 and name 0.25, rank the shorter body first: [`eval_field_weights_reach_bm25`].)
/// Scored by its best document, a skill is worth that document's score (the definition of the
/// document unit).
#[test]
fn skill_level_bm25_adds_up_a_packages_evidence() {
    let f = zeta_kits();
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &f, None);
    let mut q = Query::new("alpha zeta", None, 5);
    q.include_quarantined = true;
    q.weights = Some(crate::FieldWeights([1.0; 6]));
    let whole = index.search(&q).unwrap();
    assert_eq!(names(&index, &whole.hits), vec!["r:a", "r:c"]);
    assert!(whole.hits[0].bm25 > whole.hits[1].bm25);
    let at = &index.docs[whole.hits[0].doc as usize];
    assert_eq!((at.level, at.title.as_str()), (Level::L2, "Zeta"));

    q.bm25_unit = crate::Bm25Unit::Document;
    q.weights = None;
    let best = index.search(&q).unwrap();
    let terms = index.bm25.terms("alpha zeta");
    let per_doc = index
        .bm25
        .search(&terms, &crate::FieldWeights::DOCUMENT, index.docs.len())
        .unwrap();
    for h in &best.hits {
        let top = per_doc
            .iter()
            .filter(|(doc, _)| index.docs[*doc as usize].skill == h.skill)
            .map(|&(_, s)| s)
            .fold(f32::NEG_INFINITY, f32::max);
        assert!((h.bm25 - top).abs() < 1e-6, "{h:?} vs {top}");
    }
}

/// `EvalOptions::field_weights` reaches BM25: on [`zeta_kits`], "alpha zeta" finds alpha-kit by
/// its name and alpha- and gamma-kit by "zeta" in their bodies (delta-kit matches neither). Name
/// only: alpha-kit alone. Body only: both, with the shorter body (gamma-kit's one section against
/// alpha-kit's two) first — the same term frequency in a shorter field scores higher under BM25's
/// length norm. By hand (tantivy's BM25, k1 1.2, b 0.75; idf "alpha" in names ln(1 + 2.5/1.5) =
/// 0.981, "zeta" ln(1 + 1.5/2.5) = 0.470; length norms: headings 2 and 1 tokens against a mean of
/// 4/3, bodies 7 and 4 against 14/3): alpha = 0.981·n + 0.470·(0.830·h + 1.205·b), gamma =
/// 0.470·(1.114·h + 1.433·b) for name, headings and body weights n, h, b. The tools' weights
/// (0.5, 1, 2) give alpha 2.01 against gamma 1.87: alpha-kit first; the packages' defaults
/// (0.25, 0.5, 3) give 2.14 against 2.28: the body's length norm, three times weighted,
/// outweighs a name at a quarter, and gamma-kit comes first.
#[test]
fn eval_field_weights_reach_bm25() {
    let f = zeta_kits();
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &f, None);
    let ranked = |weights: Option<[f32; 6]>| {
        let options = crate::EvalOptions {
            include_quarantined: true,
            field_weights: weights,
            ..crate::EvalOptions::default()
        };
        let q = options.query("alpha zeta", None, Mode::Bm25, 5);
        assert_eq!(q.weights, weights.map(crate::FieldWeights));
        names(&index, &index.search(&q).unwrap().hits)
    };
    assert_eq!(ranked(None), vec!["r:c", "r:a"]);
    assert_eq!(
        ranked(Some(crate::FieldWeights::TOOL.0)),
        vec!["r:a", "r:c"]
    );
    assert_eq!(ranked(Some([1.0, 0.0, 0.0, 0.0, 0.0, 0.0])), vec!["r:a"]);
    assert_eq!(
        ranked(Some([0.0, 0.0, 0.0, 0.0, 0.0, 1.0])),
        vec!["r:c", "r:a"]
    );
}

/// Whole-skill BM25 weighs a skill's fields by its kind when the query sets no weights: in an
/// index of [`zeta_kits`] where alpha-kit is a tool-catalog entry, every hit scores what the
/// same query scores it with its kind's weights set explicitly (a skill's BM25 under field boosts
/// depends only on its own fields and the index statistics, not on the other skills' weights).
/// Not vacuous: the two kinds' weights give alpha-kit different scores. The kind survives the
/// index files, only a tool's row says it, and the eval report records each kind's weights.
#[test]
fn whole_skill_bm25_weighs_fields_by_the_skills_kind() {
    let mut f = zeta_kits();
    f.skills[0].kind = skg_model::SkillKind::Tool;
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &f, None);
    let kind_of = |id: &str| index.skills[index.skill(id).unwrap().0 as usize].kind;
    assert_eq!(kind_of("r:a"), skg_model::SkillKind::Tool);
    assert_eq!(kind_of("r:c"), skg_model::SkillKind::Skill);
    assert_eq!(
        index.kinds(),
        &[skg_model::SkillKind::Skill, skg_model::SkillKind::Tool]
    );
    let rows = std::fs::read_to_string(dir.path().join("index/skills.ndjson")).unwrap();
    let tool_rows: Vec<&str> = rows
        .lines()
        .filter(|l| l.contains(r#""kind":"tool""#))
        .collect();
    assert_eq!(tool_rows.len(), 1);
    assert!(tool_rows[0].contains(r#""id":"r:a""#));
    assert!(!rows.contains(r#""kind":"skill""#));

    let scores = |weights: Option<crate::FieldWeights>| {
        let mut q = Query::new("alpha zeta", None, 5);
        q.mode = Mode::Bm25;
        q.include_quarantined = true;
        q.weights = weights;
        index
            .search(&q)
            .unwrap()
            .hits
            .iter()
            .map(|h| (index.skills[h.skill as usize].id.to_string(), h.bm25))
            .collect::<HashMap<String, f32>>()
    };
    let by_kind = scores(None);
    let as_tool = scores(Some(crate::FieldWeights::TOOL));
    let as_package = scores(Some(crate::FieldWeights::SKILL));
    assert_eq!(by_kind.len(), 2, "{by_kind:?}");
    assert!((by_kind["r:a"] - as_tool["r:a"]).abs() < 1e-6);
    assert!((by_kind["r:c"] - as_package["r:c"]).abs() < 1e-6);
    assert!((as_tool["r:a"] - as_package["r:a"]).abs() > 1e-3);

    let settings = crate::Bm25Settings::of(&index, &crate::EvalOptions::default());
    assert_eq!(
        settings.field_weights[&skg_model::SkillKind::Tool],
        crate::FieldWeights::TOOL.0
    );
    assert_eq!(
        settings.field_weights[&skg_model::SkillKind::Skill],
        crate::FieldWeights::SKILL.0
    );
    assert_eq!(settings.field_weights_override, None);
    let set = crate::EvalOptions {
        field_weights: Some([1.0; 6]),
        ..crate::EvalOptions::default()
    };
    let settings = crate::Bm25Settings::of(&index, &set);
    assert_eq!(settings.field_weights_override, Some([1.0; 6]));
    assert!(settings.field_weights.values().all(|w| *w == [1.0; 6]));
    assert_eq!(settings.field_weights.len(), 2);
}

/// Forty skills, every third with "alpha" in its name, each with one section saying "zeta" one
/// to four times among zero to six filler words; the odd ones are tool-catalog entries.
fn mixed_kits() -> Fixture {
    let mut skills = Vec::new();
    let mut docs = Vec::new();
    for i in 0..40u32 {
        let name = if i % 3 == 0 {
            format!("alpha-kit-{i}")
        } else {
            format!("kit-{i}")
        };
        let mut s = Skill::from_text("r", &format!("k{i:02}"), &name, "Kit.", "body");
        if i % 2 == 1 {
            s.kind = skg_model::SkillKind::Tool;
        }
        let mut text = "zeta ".repeat(i as usize % 4 + 1);
        text.push_str(&"filler ".repeat(i as usize % 7));
        docs.push(doc(&s, Level::L0, 0, &name, &format!("{name}\nKit.")));
        docs.push(doc(&s, Level::L2, 0, "Notes", text.trim_end()));
        skills.push(s);
    }
    Fixture {
        skills,
        docs,
        edges: vec![],
        members: vec![],
        scores: vec![],
    }
}

/// In a catalog of both kinds, whole-skill BM25 runs a pass per kind — a lane each — and each
/// lane keeps its own `want` best and its own cut: with `want` 11 of 20 matching skills of each
/// kind, the kept skills and their scores are each kind's 11 best under its own kind's weights
/// set explicitly (ties by position), 22 in all, and each lane's cut is the `pool`-th of its
/// own. With the weights set for the query, each kind's pass uses them. Over an index of tools
/// alone the default is the tools' weights, in one lane.
#[test]
fn a_catalog_of_both_kinds_keeps_each_kinds_best_in_its_own_lane() {
    use skg_model::SkillKind;
    let f = mixed_kits();
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &f, None);
    let terms = index.bm25.terms("alpha zeta");
    let query = |weights: Option<crate::FieldWeights>| {
        let mut q = Query::new("alpha zeta", None, 1);
        q.mode = Mode::Bm25;
        q.include_quarantined = true;
        q.pool = 3;
        q.weights = weights;
        q
    };
    let all = |w: crate::FieldWeights| {
        index
            .bm25_skills(&query(Some(w)), &terms, 1000)
            .unwrap()
            .best
    };
    let (as_tool, as_package) = (
        all(crate::FieldWeights::TOOL),
        all(crate::FieldWeights::SKILL),
    );
    assert_eq!((as_tool.len(), as_package.len()), (40, 40));
    let got = index.bm25_skills(&query(None), &terms, 11).unwrap();
    assert_eq!(got.best.len(), 22);
    assert_eq!(
        got.lanes.iter().map(|l| l.kind).collect::<Vec<_>>(),
        vec![Some(SkillKind::Skill), Some(SkillKind::Tool)]
    );
    for lane in &got.lanes {
        let kind = lane.kind.unwrap();
        let own = match kind {
            SkillKind::Tool => &as_tool,
            SkillKind::Skill => &as_package,
        };
        let mut expected: Vec<(u32, f32)> = (0..40u32)
            .filter(|&s| index.skills[s as usize].kind == kind)
            .map(|s| (s, own[&s].0))
            .collect();
        expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        expected.truncate(11);
        let mut kept: Vec<(u32, f32)> = got
            .best
            .iter()
            .filter(|(s, _)| index.skills[**s as usize].kind == kind)
            .map(|(&s, &(x, _))| (s, x))
            .collect();
        kept.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        assert_eq!(kept.len(), 11, "{kind:?}");
        for (k, e) in kept.iter().zip(&expected) {
            assert_eq!(k.0, e.0, "{kind:?}: {kept:?} vs {expected:?}");
            assert!((k.1 - e.1).abs() < 1e-6);
        }
        assert_eq!(lane.cut, Some(expected[2].1), "{kind:?}");
    }
    // The lanes' cuts differ: one cut for both would have set one kind apart by the other's
    // scale.
    assert_ne!(got.lanes[0].cut, got.lanes[1].cut);

    // Weights set for the query: every skill with them, still a lane per kind.
    let unit = crate::FieldWeights([1.0; 6]);
    let one = index.bm25_skills(&query(Some(unit)), &terms, 1000).unwrap();
    let by_unit = all(unit);
    assert_eq!(one.best.len(), 40);
    assert_eq!(one.lanes.len(), 2);
    assert!(
        one.best
            .iter()
            .all(|(s, x)| (x.0 - by_unit[s].0).abs() < 1e-6)
    );
    assert!((by_unit[&0].0 - as_package[&0].0).abs() > 1e-3);

    // Tools alone: their own weights by default.
    let mut tools = mixed_kits();
    tools
        .skills
        .iter_mut()
        .for_each(|s| s.kind = SkillKind::Tool);
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &tools, None);
    assert_eq!(index.kinds(), &[SkillKind::Tool]);
    let by_default = index.bm25_skills(&query(None), &terms, 1000).unwrap().best;
    let as_tool = index
        .bm25_skills(&query(Some(crate::FieldWeights::TOOL)), &terms, 1000)
        .unwrap()
        .best;
    assert_eq!(by_default.len(), 40);
    assert!(
        by_default
            .iter()
            .all(|(s, x)| (x.0 - as_tool[s].0).abs() < 1e-6)
    );
    let lanes = index.bm25_skills(&query(None), &terms, 1000).unwrap().lanes;
    assert_eq!(lanes.len(), 1);
    assert_eq!(lanes[0].kind, None);
}

/// Over a catalog of both kinds each kind is fused on its own scale: a hit's BM25 counts as the
/// share of its own kind's best (not of the best overall) and under its own kind's cut, each
/// kind's weight is its own adaptive weight capped at that of the kind the cosine ranks first,
/// RRF ranks BM25 by that share and the cosine across kinds, and in BM25 mode a hit scores its
/// share of its kind's best times the evidence that best has per query term. Every expected
/// value follows from those definitions and the hits' own BM25 and cosine; the nearest skill is
/// first a package, then a tool, so the cap binds on the tools in one case and on nothing in
/// the other (which sets the rule apart from one weight for every kind).
#[test]
fn a_catalog_of_both_kinds_fuses_each_kind_on_its_own_scale() {
    use skg_model::SkillKind;
    for nearest in [0usize, 1] {
        let f = mixed_kits();
        // One vector per card (documents 2i); `nearest` is at the query's angle.
        let rows = (0..40usize)
            .map(|i| {
                let a = if i == nearest {
                    0.0
                } else {
                    0.2 + 0.03 * i as f32
                };
                (2 * i, vec![a.cos(), a.sin()])
            })
            .collect();
        let v = Vectors {
            tokens: Vec::new(),
            token_directions: 0,
            model: "test".into(),
            dim: 2,
            rows,
        };
        let dir = tempfile::tempdir().unwrap();
        let index = built(dir.path(), &f, Some(&v));
        let qv = [1.0_f32, 0.0];
        let mut q = Query::new("alpha zeta", Some(&qv), 40);
        q.include_quarantined = true;
        q.pool = 5;
        let answer = index.search(&q).unwrap();
        let hits: Vec<&crate::Hit> = answer.hits.iter().chain(&answer.rejected).collect();
        assert_eq!(hits.len(), 40);
        let kind = |h: &crate::Hit| index.skills[h.skill as usize].kind;
        let of_kind = |k: SkillKind| -> Vec<f32> {
            let mut v: Vec<f32> = hits
                .iter()
                .filter(|h| kind(h) == k)
                .map(|h| h.bm25)
                .collect();
            v.sort_by(|a, b| b.total_cmp(a));
            v
        };
        // Each kind's best and cut (its 5th best: 20 of each kind match, the pool is 5).
        let (skills, tools) = (of_kind(SkillKind::Skill), of_kind(SkillKind::Tool));
        let (best_skill, best_tool) = (skills[0], tools[0]);
        let (cut_skill, cut_tool) = (skills[4], tools[4]);
        // The tools' card fields weigh 0.5 against the packages' 0.25 and "alpha" is in the
        // name: the tools' best is the larger, so the share of the best overall would differ
        // from the share of their own kind's for the packages.
        assert!(best_tool > best_skill * 1.2, "{best_tool} vs {best_skill}");
        assert!(cut_skill > 0.0 && cut_skill < best_skill && cut_tool < best_tool);
        let own = |b: f32| Fusion::adaptive_weight(Fusion::MAX_BM25, Fusion::SATURATION, b, 2);
        let (w_skill, w_tool) = (own(best_skill), own(best_tool));
        assert!(w_tool > w_skill, "{w_tool} vs {w_skill}");
        // Nearest a package: the tools' weight is capped at the packages'. Nearest a tool:
        // nothing is capped (the packages' own weight is the smaller).
        let (expect_skill, expect_tool) = if nearest == 0 {
            (w_skill, w_skill)
        } else {
            (w_skill, w_tool)
        };
        let weights: std::collections::HashMap<SkillKind, f32> =
            answer.bm25_weights.iter().copied().collect();
        assert!((weights[&SkillKind::Skill] - expect_skill).abs() < 1e-6);
        assert!((weights[&SkillKind::Tool] - expect_tool).abs() < 1e-6);
        for h in &hits {
            let (b, cut, w) = match kind(h) {
                SkillKind::Skill => (best_skill, cut_skill, expect_skill),
                SkillKind::Tool => (best_tool, cut_tool, expect_tool),
            };
            // Under its kind's cut a skill counts at the cut.
            assert!((h.bm25_counted - h.bm25.max(cut)).abs() < 1e-6);
            let expected = w * (h.bm25_counted / b).clamp(0.0, 1.0) + (1.0 - w) * h.dense;
            assert!(
                (h.score - expected).abs() < 1e-5,
                "{}: {} vs {expected}",
                index.skills[h.skill as usize].id,
                h.score
            );
        }
        let first = &answer.hits[0];
        assert_eq!(answer.bm25_weight, Some(weights[&kind(first)]));

        // RRF: BM25 ranked by the share of each kind's best, the cosine across kinds.
        let mut rrf = q.clone();
        rrf.fusion = Fusion::Rrf { k: 60.0 };
        let answer = index.search(&rrf).unwrap();
        let hits: Vec<&crate::Hit> = answer.hits.iter().chain(&answer.rejected).collect();
        let rank_by = |key: &dyn Fn(&crate::Hit) -> f32, h: &crate::Hit| -> f32 {
            // 0-based rank, ties by position in the index.
            hits.iter()
                .filter(|o| key(o) > key(h) || (key(o) == key(h) && o.skill < h.skill))
                .count() as f32
        };
        let share = |h: &crate::Hit| match kind(h) {
            SkillKind::Skill => h.bm25 / best_skill,
            SkillKind::Tool => h.bm25 / best_tool,
        };
        for h in &hits {
            let expected =
                1.0 / (61.0 + rank_by(&share, h)) + 1.0 / (61.0 + rank_by(&|o| o.dense, h));
            assert!(
                (h.score - expected).abs() < 1e-6,
                "{} vs {expected}",
                h.score
            );
        }
        assert!(answer.bm25_weights.is_empty());
    }

    // BM25 alone: each kind's share of its best times that best's evidence per term.
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &mixed_kits(), None);
    let mut q = Query::new("alpha zeta", None, 40);
    q.include_quarantined = true;
    q.mode = Mode::Bm25;
    let answer = index.search(&q).unwrap();
    let hits: Vec<&crate::Hit> = answer.hits.iter().chain(&answer.rejected).collect();
    assert_eq!(hits.len(), 40);
    let best = |k: skg_model::SkillKind| {
        hits.iter()
            .filter(|h| index.skills[h.skill as usize].kind == k)
            .map(|h| h.bm25)
            .fold(0.0f32, f32::max)
    };
    for h in &hits {
        let b = best(index.skills[h.skill as usize].kind);
        let evidence = Fusion::adaptive_weight(1.0, Fusion::SATURATION, b, 2);
        assert!((h.score - h.bm25 / b * evidence).abs() < 1e-6);
    }
}

/// The exact scan gives the same answer on one thread and on two, and keeps the `keep` nearest
/// skills plus every skill it is asked about.
#[test]
fn the_dense_scan_keeps_the_nearest_and_the_lexical_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture();
    let v = Vectors {
        tokens: Vec::new(),
        token_directions: 0,
        model: "test".into(),
        dim: 2,
        rows: vec![
            (0, vec![1.0, 0.0]),
            (3, vec![0.6, 0.8]),
            (4, vec![0.8, 0.6]),
            (5, vec![0.0, 1.0]),
            (6, vec![0.6, 0.8]),
        ],
    };
    let index = built(dir.path(), &f, Some(&v));
    let qv = [0.8_f32, 0.6];
    let mut q = Query::new("", Some(&qv), 5);
    q.include_quarantined = true;
    q.include_aliases = true;
    let none = std::collections::HashMap::new();
    let one = index.dense_scan(&q, &qv, 10, &none);
    // Every skill with a vector: pdf 0.8, pdf-copy 0.96, csv 0.8·0.8 + 0.6·0.6 = 1,
    // charts max(0.6, 0.96).
    assert_eq!(one.len(), 4);
    let nearest = index.dense_scan(&q, &qv, 1, &none);
    let ids: Vec<&str> = nearest
        .keys()
        .map(|&s| index.skills[s as usize].id.as_str())
        .collect();
    assert_eq!(ids, vec!["r:csv"]);
    let pdf = index.skill("r:pdf").unwrap().0;
    let also = std::collections::HashMap::from([(pdf, (1.0, 0))]);
    let with = index.dense_scan(&q, &qv, 1, &also);
    assert_eq!(with.len(), 2);
    assert!((with[&pdf].0 - 0.8).abs() < 1e-6);
}

#[test]
fn zscore_fusion_mixes_standardized_scores() {
    use std::collections::HashMap;
    // BM25 gathered skills 1 and 2; the dense side scored 1, 2 and 3.
    let lexical = HashMap::from([(1u32, (3.0f32, 10u32)), (2, (1.0, 20))]);
    let dense = HashMap::from([(1u32, (0.2f32, 11u32)), (2, (0.6, 21)), (3, (0.4, 31))]);
    let score_of = |fusion| -> HashMap<u32, f32> {
        let (hits, _) = crate::search::fuse(
            &lexical,
            &dense,
            fusion,
            2,
            10,
            crate::search::Cut::default(),
        );
        hits.into_iter().map(|h| (h.skill, h.score)).collect()
    };
    // By hand: BM25 over the three candidates is 3, 1, 0 (mean 4/3, sd √(42/27) = 1.2472), the
    // cosine 0.2, 0.6, 0.4 (mean 0.4, sd √(0.08/3) = 0.1633); half of each z-score.
    let z = score_of(Fusion::Zscore {
        max_bm25: 0.5,
        saturation: 0.0,
    });
    for (skill, want) in [(1, 0.0558), (2, 0.4787), (3, -0.5345)] {
        assert!(
            (z[&skill] - want).abs() < 1e-3,
            "skill {skill}: {}",
            z[&skill]
        );
    }
    // The linear mix of BM25 over its best (1, 1/3, 0) and the cosine ranks 1 first: the
    // z-scores let the dense side's wider relative spread decide.
    let linear = score_of(Fusion::Linear { bm25: 0.5 });
    for (skill, want) in [(1, 0.6), (2, 0.4667), (3, 0.2)] {
        assert!((linear[&skill] - want).abs() < 1e-3, "skill {skill}");
    }
}

#[test]
fn skills_under_bm25s_cut_count_at_it_in_the_linear_mixes() {
    use crate::search::{Cut, fuse};
    use std::collections::HashMap;
    // BM25's pass stopped at a pool of 2 with more matching: the 2nd best scored 2.0 before
    // its penalty (the cut). Gathered: 1 (4.0), 2 (2.5 − 0.5 penalty = 2.0) and 4 (1.0, under
    // the cut); dense scored them and found 3 and 5, which the pass did not gather (5 has a
    // 0.4 penalty).
    let lexical = HashMap::from([(1u32, (4.0f32, 10u32)), (2, (2.0, 20)), (4, (1.0, 40))]);
    let dense = HashMap::from([
        (1u32, (0.2f32, 11u32)),
        (2, (0.2, 21)),
        (3, (0.5, 31)),
        (4, (0.5, 41)),
        (5, (0.5, 51)),
    ]);
    let penalty = HashMap::from([(2u32, 0.5f32), (5, 0.4)]);
    let cut = Cut {
        score: Some(2.5),
        penalty: Some(&penalty),
    };
    let mix = Fusion::Linear { bm25: 0.5 };
    let scores = |cut| -> HashMap<u32, f32> {
        let (hits, _) = fuse(&lexical, &dense, mix, 2, 5, cut);
        hits.into_iter().map(|h| (h.skill, h.score)).collect()
    };
    // By hand, ½·BM25/4 + ½·cosine: 1 is over the cut, its own 4.0: 0.5 + 0.1; 2 is at the cut
    // (2.0 + 0.5 = 2.5, not under it), its own 2.0: 0.25 + 0.1; 3 and 4 are under it, at 2.5:
    // 0.3125 + 0.25; 5 under it, at 2.5 − 0.4 = 2.1: 0.2625 + 0.25.
    let s = scores(cut);
    for (skill, want) in [(1, 0.6), (2, 0.35), (3, 0.5625), (4, 0.5625), (5, 0.5125)] {
        assert!(
            (s[&skill] - want).abs() < 1e-6,
            "skill {skill}: {}",
            s[&skill]
        );
    }
    // The pass gathered every matching skill (no cut): 3 and 5 match no term and count 0, 4 its
    // own 1.0: 3 → 0.25, 4 → 0.125 + 0.25, 5 → 0.25.
    let s = scores(Cut::default());
    for (skill, want) in [(3, 0.25), (4, 0.375), (5, 0.25)] {
        assert!(
            (s[&skill] - want).abs() < 1e-6,
            "skill {skill}: {}",
            s[&skill]
        );
    }
    // The hit reports the BM25 score computed (none for 3) and, apart, the one the mix counted
    // (the values above before ÷ 4: 1 and 2 their own, 3 and 4 the cut 2.5, 5 the cut less its
    // penalty, 2.1), and points at its closest vector.
    let (hits, _) = fuse(&lexical, &dense, mix, 2, 5, cut);
    let three = hits
        .iter()
        .find(|h| h.skill == 3)
        .expect("skill 3 is a candidate");
    assert!(three.bm25.abs() < 1e-9 && three.doc == 31);
    let counted: HashMap<u32, f32> = hits.iter().map(|h| (h.skill, h.bm25_counted)).collect();
    for (skill, want) in [(1, 4.0), (2, 2.0), (3, 2.5), (4, 2.5), (5, 2.1)] {
        assert!(
            (counted[&skill] - want).abs() < 1e-6,
            "skill {skill} counted {}",
            counted[&skill]
        );
    }
    // The z-score mix counts its own scores and 0 whatever the cut: BM25 over the candidates
    // 4, 2, 0, 1, 0 (mean 1.4, sd √(11.2/5) = 1.4967), cosine 0.2, 0.2, 0.5, 0.5, 0.5 (mean
    // 0.38, sd √(0.108/5) = 0.14697); skill 3 at half of each z-score:
    // ½·(−1.4/1.4967) + ½·(0.12/0.14697) = −0.0595.
    let zscore = Fusion::Zscore {
        max_bm25: 0.5,
        saturation: 0.0,
    };
    let (hits, _) = fuse(&lexical, &dense, zscore, 2, 5, cut);
    let z3 = hits.iter().find(|h| h.skill == 3).expect("skill 3");
    assert!((z3.score - -0.0595).abs() < 1e-3, "{}", z3.score);
    // … and says so: what it counted is what BM25 gave each candidate. So does RRF, which
    // counts ranks.
    assert!(hits.iter().all(|h| h.bm25_counted == h.bm25));
    let (hits, _) = fuse(&lexical, &dense, Fusion::Rrf { k: 60.0 }, 2, 5, cut);
    assert!(hits.iter().all(|h| h.bm25_counted == h.bm25));
    assert!(hits.iter().any(|h| h.skill == 3 && h.bm25_counted == 0.0));
}

#[test]
fn the_cut_is_where_a_pass_of_the_pool_would_stop() {
    use crate::search::cut_at;
    // The 2nd largest of five; none when the pass holds no more than the pool.
    assert_eq!(cut_at(vec![1.0, 5.0, 3.0, 4.0, 2.0], 2), Some(4.0));
    assert_eq!(cut_at(vec![1.0, 5.0], 2), None);
    assert_eq!(cut_at(vec![1.0, 5.0, 3.0], 0), None);
}

/// The graph is saved in the index folder by the open that built it and read back by the next
/// one: same proposals, same answers. Other options or an unreadable file mean a rebuild, never
/// an error.
#[test]
fn the_graph_is_cached_in_the_index_folder() {
    use crate::ann::{AnnOptions, AnnSource, CACHE_FILE};
    let (f, vectors) = random_dense(200, 5);
    let dir = tempfile::tempdir().unwrap();
    let mut index = built(dir.path(), &f, Some(&vectors));
    let options = AnnOptions::default();
    assert!(!dir.path().join("index").join(CACHE_FILE).exists());
    assert!(index.use_ann(0, options).unwrap());
    assert_eq!(index.ann_source(), Some(AnnSource::Built));
    assert!(dir.path().join("index").join(CACHE_FILE).exists(), "saved");
    let queries: Vec<Vec<f32>> = (0..20).map(|i| unit(100 + i)).collect();
    let answers = |index: &Index| -> Vec<Vec<crate::Hit>> {
        queries
            .iter()
            .map(|v| index.search(&Query::new("", Some(v), 10)).unwrap().hits)
            .collect()
    };
    let before = answers(&index);

    let mut again = Index::open(&dir.path().join("index")).unwrap();
    assert!(again.use_ann(0, options).unwrap());
    assert_eq!(again.ann_source(), Some(AnnSource::Cached));
    assert_eq!(answers(&again), before);

    // Other options: another graph, built (and now cached in their place).
    let wider = AnnOptions {
        ef_search: options.ef_search + 1,
        ..options
    };
    assert!(again.use_ann(0, wider).unwrap());
    assert_eq!(again.ann_source(), Some(AnnSource::Built));
    assert!(again.use_ann(0, wider).unwrap());
    assert_eq!(again.ann_source(), Some(AnnSource::Cached));

    // A torn or foreign file: rebuilt, the answers unchanged.
    std::fs::write(
        dir.path().join("index").join(CACHE_FILE),
        b"\x01not a graph",
    )
    .unwrap();
    let mut torn = Index::open(&dir.path().join("index")).unwrap();
    assert!(torn.use_ann(0, options).unwrap());
    assert_eq!(torn.ann_source(), Some(AnnSource::Built));
    assert_eq!(answers(&torn), before);
}

#[test]
fn a_rebuild_with_the_same_content_keeps_the_graph_cache() {
    use crate::ann::{AnnOptions, AnnSource, CACHE_FILE};
    let (f, vectors) = random_dense(120, 7);
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("index").join(CACHE_FILE);
    let mut index = built(dir.path(), &f, Some(&vectors));
    assert!(index.use_ann(0, AnnOptions::default()).unwrap());
    assert_eq!(index.ann_source(), Some(AnnSource::Built));
    drop(index);

    // The same input into the same folder: the folder is replaced whole, the graph carried.
    let mut same = built(dir.path(), &f, Some(&vectors));
    assert!(cache.exists(), "carried into the rebuilt folder");
    assert!(same.use_ann(0, AnnOptions::default()).unwrap());
    assert_eq!(same.ann_source(), Some(AnnSource::Cached));
    drop(same);

    // Other content (one vector moved): the old graph is not this index's, so it is left behind.
    let mut moved = vectors.clone();
    moved.rows[0].1 = unit(999);
    let mut other = built(dir.path(), &f, Some(&moved));
    assert!(!cache.exists(), "a graph of other content is not carried");
    assert!(other.use_ann(0, AnnOptions::default()).unwrap());
    assert_eq!(other.ann_source(), Some(AnnSource::Built));

    // A cache file that is not a graph is never carried.
    std::fs::write(&cache, b"\x01not a graph").unwrap();
    drop(other);
    let _ = built(dir.path(), &f, Some(&moved));
    assert!(!cache.exists());
}

/// Skills with one or two rows of `dim` random values; every fifth row repeats an earlier row
/// (exact ties) and every seventh is an earlier row moved by 1e-4 (near ties).
fn tied_dense(n: usize, dim: usize, seed: u64) -> (Fixture, Vectors) {
    let (f, _) = random_dense(n, seed);
    let mut x = seed.wrapping_mul(31) | 1;
    let mut next = move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((x >> 40) as f32 / (1u64 << 24) as f32) - 0.5
    };
    let normal = |v: Vec<f32>| {
        let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt().max(1e-6);
        v.into_iter().map(|a| a / norm).collect::<Vec<f32>>()
    };
    let mut rows: Vec<(usize, Vec<f32>)> = Vec::new();
    for i in 0..f.docs.len() {
        // Odd documents (overviews) of every third skill have no vector.
        if i % 2 == 1 && (i / 2).is_multiple_of(3) {
            continue;
        }
        let v = if rows.len() >= 5 && rows.len().is_multiple_of(5) {
            rows[rows.len() / 3].1.clone()
        } else if rows.len() >= 7 && rows.len().is_multiple_of(7) {
            let mut v = rows[rows.len() / 2].1.clone();
            v[0] += 1e-4;
            normal(v)
        } else {
            normal((0..dim).map(|_| next()).collect())
        };
        rows.push((i, v));
    }
    (
        f,
        Vectors {
            tokens: Vec::new(),
            token_directions: 0,
            model: "random".into(),
            dim,
            rows,
        },
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// The scan over int8 codes with exact rescoring returns what the scan over every float row
    /// returns — the same skills, cosines and documents, bit for bit — whatever `keep`, the
    /// lexical candidates and the quarantine, with exact and near ties among the rows and the
    /// query itself one of the rows.
    #[test]
    fn the_coded_scan_is_the_exact_scan(
        n in 3usize..90,
        wide in proptest::bool::ANY,
        seed in 0u64..1_000_000,
        qrow in proptest::option::of(0usize..1_000),
        keep in 0usize..100,
        also in proptest::collection::vec(0u32..100, 0..12),
        include_quarantined in proptest::bool::ANY,
    ) {
        let dim = if wide { 384 } else { 8 };
        let (f, vectors) = tied_dense(n, dim, seed);
        let v = match qrow {
            Some(r) => vectors.rows[r % vectors.rows.len()].1.clone(),
            None => tied_dense(1, dim, seed ^ 0xabcd).1.rows.swap_remove(0).1,
        };
        let dir = tempfile::tempdir().unwrap();
        let index = built(dir.path(), &f, Some(&vectors));
        let mut q = Query::new("words", Some(&v), 10);
        q.include_quarantined = include_quarantined;
        let also: HashMap<u32, (f32, u32)> = also
            .into_iter()
            .filter(|&s| (s as usize) < n)
            .map(|s| (s, (1.0, 0)))
            .collect();
        let bits = |m: HashMap<u32, (f32, u32)>| {
            let mut v: Vec<(u32, u32, u32)> =
                m.into_iter().map(|(s, (c, d))| (s, c.to_bits(), d)).collect();
            v.sort_unstable();
            v
        };
        let coded = bits(index.dense_scan(&q, &v, keep, &also));
        let floats = bits(index.dense_scan_floats(&q, &v, keep, &also));
        proptest::prop_assert_eq!(coded, floats);
    }
}

/// The bounds hold: over random unit vectors of 384 dimensions, every row's float cosine lies
/// between the bounds its codes give, and they are tight enough to prune (under 0.05 apart).
#[test]
fn coded_bounds_contain_the_float_cosine() {
    let (f, vectors) = tied_dense(60, 384, 3);
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &f, Some(&vectors));
    for qseed in 0..20 {
        let v = tied_dense(1, 384, qseed).1.rows.swap_remove(0).1;
        let qc = index.codes.query(&v).unwrap();
        for (row, (_, x)) in vectors.rows.iter().enumerate() {
            let cos = crate::search::dot(x, &v);
            let (lo, hi) = index.codes.bounds(row, &qc);
            assert!(lo <= cos && cos <= hi, "{lo} ≤ {cos} ≤ {hi}");
            assert!(hi - lo < 0.05, "{}", hi - lo);
        }
    }
}

/// The coded scan's edges, each against the float scan: a row with a NaN, an all-zero row, a
/// skill without vectors among the lexical candidates, and `keep` of 0, of every skill with
/// vectors and of one more.
#[test]
fn the_coded_scan_is_the_exact_scan_at_its_edges() {
    let (f, mut vectors) = tied_dense(12, 8, 77);
    vectors.rows[1].1 = vec![f32::NAN; 8];
    vectors.rows[2].1 = vec![0.0; 8];
    // Skill 5 (documents 10 and 11) has no vector at all.
    vectors.rows.retain(|(doc, _)| *doc != 10 && *doc != 11);
    let dir = tempfile::tempdir().unwrap();
    let index = built(dir.path(), &f, Some(&vectors));
    let v = vectors.rows[4].1.clone();
    // Lexical candidates: a skill with one row (0), one without vectors (5), one with two (7)
    // and one the index does not have (99).
    let also: HashMap<u32, (f32, u32)> =
        [(0, (1.0, 0)), (5, (1.0, 0)), (7, (1.0, 0)), (99, (1.0, 0))]
            .into_iter()
            .collect();
    let bits = |m: HashMap<u32, (f32, u32)>| {
        let mut v: Vec<(u32, u32, u32)> = m
            .into_iter()
            .map(|(s, (c, d))| (s, c.to_bits(), d))
            .collect();
        v.sort_unstable();
        v
    };
    for include_quarantined in [false, true] {
        let mut q = Query::new("words", Some(&v), 10);
        q.include_quarantined = include_quarantined;
        // 11 skills have vectors.
        for keep in [0, 1, 5, 10, 11, 12] {
            for also in [HashMap::new(), also.clone()] {
                let coded = bits(index.dense_scan(&q, &v, keep, &also));
                assert_eq!(
                    coded,
                    bits(index.dense_scan_floats(&q, &v, keep, &also)),
                    "keep {keep}"
                );
                if keep == 0 {
                    assert!(coded.len() <= also.len());
                }
            }
        }
    }
    // A query with a NaN scans the floats: the same answer as the float scan.
    let mut bad = v.clone();
    bad[3] = f32::NAN;
    let q = Query::new("words", Some(&bad), 10);
    assert_eq!(
        bits(index.dense_scan(&q, &bad, 5, &also)),
        bits(index.dense_scan_floats(&q, &bad, 5, &also))
    );
}
