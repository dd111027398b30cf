//! Deduplication on hand-made fixtures (lexical similarity: no model needed) and properties.

use proptest::prelude::*;
use skg_canon::{Canonicalization, Input, Options, canonicalize, synth};
use skg_model::{EdgeKind, NoProgress, Role, Skill};

/// A paragraph of `n` words unique to `tag` (no word is shared with another tag's paragraph).
fn para(tag: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{tag}w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn run(skills: &[Skill]) -> Canonicalization {
    let input = Input {
        skills,
        vectors: None,
        scores: None,
        in_degree: None,
    };
    canonicalize(&input, &Options::default(), &NoProgress)
}

fn role<'a>(c: &'a Canonicalization, id: &str) -> (&'a str, Role) {
    let m = c
        .members
        .iter()
        .find(|m| m.id.as_str() == id)
        .unwrap_or_else(|| panic!("{id}"));
    (m.cluster_id.as_str(), m.role)
}

fn body(sections: &[(&str, usize)]) -> String {
    sections
        .iter()
        .map(|(t, n)| format!("## {t}\n\n{}\n", para(t, *n)))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn copies_renames_truncations_and_additions_merge() {
    let original = body(&[("setup", 80), ("usage", 120), ("errors", 60)]);
    let desc = "Convert scanned invoices into ledger entries with totals checked";
    let skills = vec![
        synth::skill(
            "a",
            "skills/invoice-ledger",
            "invoice-ledger",
            desc,
            &original,
        ),
        // the same text in another registry
        synth::skill(
            "b",
            "skills/invoice-ledger",
            "invoice-ledger",
            desc,
            &original,
        ),
        // renamed and reformatted (markdown and case changes only)
        synth::skill(
            "c",
            "tools/ledger-from-invoices",
            "ledger-from-invoices",
            "Turns invoices into ledger rows",
            &original.replace("## ", "### ").to_uppercase(),
        ),
        // truncated: the last section dropped
        synth::skill(
            "d",
            "x/invoice-ledger-lite",
            "invoice-ledger-lite",
            desc,
            &body(&[("setup", 80), ("usage", 120)]),
        ),
        // extended: a section added
        synth::skill(
            "e",
            "y/invoice-ledger-plus",
            "invoice-ledger-plus",
            desc,
            &format!("{original}\n## extra\n\n{}\n", para("extra", 50)),
        ),
    ];
    let c = run(&skills);
    let cluster = role(&c, "a:skills/invoice-ledger").0.to_owned();
    for id in [
        "b:skills/invoice-ledger",
        "c:tools/ledger-from-invoices",
        "d:x/invoice-ledger-lite",
        "e:y/invoice-ledger-plus",
    ] {
        assert_eq!(role(&c, id).0, cluster, "{id} joins the cluster");
    }
    assert_eq!(c.stats.clusters, 1);
    assert_eq!(c.stats.duplicates, 4);
    assert_eq!(
        c.members
            .iter()
            .filter(|m| m.role == Role::Canonical)
            .count(),
        1
    );
    // every alias has one duplicate_of edge to the canonical, with its evidence
    let dups: Vec<_> = c
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::DuplicateOf)
        .collect();
    assert_eq!(dups.len(), 4);
    assert!(
        dups.iter()
            .all(|e| e.dst.as_str() == cluster && !e.evidence.is_empty())
    );
}

#[test]
fn an_independently_written_variant_is_linked_not_merged() {
    let desc = "Track daily habits and streaks, remind the user and chart progress weekly";
    let skills = vec![
        synth::skill(
            "a",
            "habit-tracker",
            "habit-tracker",
            desc,
            &body(&[("one", 150), ("two", 100)]),
        ),
        synth::skill(
            "b",
            "habits",
            "habits",
            "Track daily habits and streaks, remind the user and chart weekly progress",
            &body(&[("three", 150), ("four", 100)]),
        ),
    ];
    let c = run(&skills);
    let (ca, ra) = role(&c, "a:habit-tracker");
    let (cb, rb) = role(&c, "b:habits");
    assert_ne!(ca, cb, "a variant is never merged");
    assert!(matches!(
        (ra, rb),
        (Role::Variant, Role::Canonical) | (Role::Canonical, Role::Variant)
    ));
    let v: Vec<_> = c
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::VariantOf)
        .collect();
    assert_eq!(v.len(), 1);
    assert_eq!(c.stats.duplicates, 0);
}

#[test]
fn a_chain_of_containments_does_not_merge_unrelated_ends() {
    // B is A's text followed by C's: A ⊂ B and C ⊂ B (containment 1), but A and C share nothing.
    let a = body(&[("alpha", 150)]);
    let cc = body(&[("gamma", 150)]);
    let b = format!("{a}\n{cc}");
    let skills = vec![
        synth::skill("r", "a", "alpha-tool", "Alpha things", &a),
        synth::skill("r", "b", "alpha-gamma-tool", "Alpha and gamma things", &b),
        synth::skill("r", "c", "gamma-tool", "Gamma things", &cc),
    ];
    let c = run(&skills);
    let (ka, _) = role(&c, "r:a");
    let (kc, _) = role(&c, "r:c");
    assert_ne!(
        ka, kc,
        "A and C must not end in one cluster through B: {:#?}",
        c.members
    );
    assert!(c.stats.chain_merges_refused >= 1);
    // The bundle is an alias of one end and the routable skills are A and C, so a second run
    // merges nothing (were B the canonical of {A, B}, B and C would be routable duplicates).
    let (kb, rb) = role(&c, "r:b");
    assert_eq!(rb, Role::Duplicate, "{:#?}", c.members);
    assert!(kb == ka || kb == kc);
    assert_eq!(rerun_duplicates(&skills), 0);
    // Every alias is a direct duplicate of its canonical (the cluster invariant).
    for m in c.members.iter().filter(|m| m.role == Role::Duplicate) {
        assert!(m.reason.starts_with("same-"), "{}: {}", m.id, m.reason);
    }
}

#[test]
fn templates_filled_in_for_different_products_stay_distinct() {
    let template = |p: &str| {
        format!(
            "# {p} monitor\n\nUse {p} to watch services. {}\n\n## Setup\n\nInstall the {p} agent and set the {p} API key. {}\n\n## Alerts\n\nCreate {p} alerts for latency. {}\n",
            para("shared", 60),
            para("more", 50),
            para("tail", 40)
        )
    };
    let skills = vec![
        synth::skill(
            "r",
            "datadog-monitor",
            "datadog-monitor",
            "Monitor services with Datadog",
            &template("datadog"),
        ),
        synth::skill(
            "r",
            "newrelic-monitor",
            "newrelic-monitor",
            "Monitor services with New Relic",
            &template("newrelic"),
        ),
    ];
    let c = run(&skills);
    assert_ne!(
        role(&c, "r:datadog-monitor").0,
        role(&c, "r:newrelic-monitor").0
    );
}

#[test]
fn the_better_skill_becomes_canonical_and_scores_override_completeness() {
    let text = body(&[("steps", 200), ("notes", 100)]);
    let mut good = synth::skill(
        "a",
        "good",
        "good",
        "A specific, useful description of what the skill does",
        &text,
    );
    good.license = Some("MIT".into());
    let poor = synth::skill("b", "poor", "poor", "x", &text);
    let skills = vec![poor.clone(), good.clone()];
    let c = run(&skills);
    assert_eq!(
        role(&c, "b:poor").0,
        "a:good",
        "completeness picks the documented copy"
    );
    let scores = std::collections::BTreeMap::from([(good.id.clone(), 0.2), (poor.id.clone(), 0.9)]);
    let input = Input {
        skills: &skills,
        vectors: None,
        scores: Some(&scores),
        in_degree: None,
    };
    let c = canonicalize(&input, &Options::default(), &NoProgress);
    assert_eq!(
        role(&c, "a:good").0,
        "b:poor",
        "a slop score, when given, decides"
    );
}

fn fingerprint(c: &Canonicalization) -> String {
    serde_json::to_string(&(
        &c.members
            .iter()
            .map(|m| (&m.id, &m.cluster_id, m.role, &m.variant_of, &m.reason))
            .collect::<Vec<_>>(),
        &c.clusters,
        &c.edges,
    ))
    .expect("serialize")
}

#[test]
fn synthetic_copies_are_found_and_runs_are_deterministic() {
    let (skills, origins) = synth::generate(400, 4, 7);
    let c1 = run(&skills);
    let c2 = run(&skills);
    assert_eq!(fingerprint(&c1), fingerprint(&c2));
    // Most generated copies end in their original's cluster.
    let cluster_of = |i: usize| role(&c1, skills[i].id.as_str()).0.to_owned();
    let mut found = 0;
    let mut copies = 0;
    for (i, o) in origins.iter().enumerate() {
        if let synth::Origin::Copy(k) = o {
            copies += 1;
            found += usize::from(cluster_of(i) == cluster_of(*k));
        }
    }
    assert!(copies > 50);
    assert!(found * 10 >= copies * 9, "{found} of {copies} copies found");
    // Far fewer pairs compared than all pairs.
    assert!((c1.stats.candidate_pairs as u64) * 5 < c1.stats.all_pairs);
}

proptest! {
    // Fresh draws on every run (bounded): a failure prints the generator seed that reproduces it
    // (`synth::generate(80, 3, seed)`); nothing is persisted, so CI never replays an old draw.
    #![proptest_config(ProptestConfig {
        cases: 16,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The input order never changes the result.
    #[test]
    fn order_independent(seed in any::<u64>(), rot in 0usize..100) {
        let (mut skills, _) = synth::generate(80, 3, seed);
        let a = fingerprint(&run(&skills));
        let k = rot % skills.len();
        skills.rotate_left(k);
        skills.reverse();
        prop_assert_eq!(a, fingerprint(&run(&skills)), "generator seed {}", seed);
    }

    /// Canonicalizing the routable skills again merges nothing more.
    #[test]
    fn idempotent(seed in any::<u64>()) {
        prop_assert_eq!(rerun_duplicates(&synth::generate(80, 3, seed).0), 0, "generator seed {}", seed);
    }
}

/// Canonicalizes, then canonicalizes the routable skills (canonicals and variants) again: the
/// aliases the second run finds.
fn rerun_duplicates(skills: &[Skill]) -> usize {
    let c = run(skills);
    let keep: std::collections::BTreeSet<_> = c
        .members
        .iter()
        .filter(|m| m.role != Role::Duplicate)
        .map(|m| m.id.clone())
        .collect();
    let again: Vec<Skill> = skills
        .iter()
        .filter(|s| keep.contains(&s.id))
        .cloned()
        .collect();
    run(&again).stats.duplicates
}

/// The seed that broke idempotence before canonicals could move (a random draw found it).
#[test]
fn idempotent_on_the_seed_that_broke_it() {
    assert_eq!(
        rerun_duplicates(&synth::generate(80, 3, 781).0),
        0,
        "generator seed 781"
    );
}

/// Every generator seed below 1,500 (about two minutes in a debug build; docs/canonicalize.md):
/// `cargo test -p skg-canon --test dedup idempotent_on_1500_seeds -- --ignored`.
#[test]
#[ignore = "a sweep of 1,500 seeds; the property test draws fresh ones on every run"]
fn idempotent_on_1500_seeds() {
    let bad: Vec<(u64, usize)> = (0..1500u64)
        .map(|seed| (seed, rerun_duplicates(&synth::generate(80, 3, seed).0)))
        .filter(|&(_, d)| d > 0)
        .collect();
    assert!(
        bad.is_empty(),
        "(generator seed, aliases a re-run finds): {bad:?}"
    );
}
