//! Features on hand-made skills, training reproducibility, and the committed model.

use skg_model::{Skill, SkillKind};
use skg_score::{Context, Example, FEATURES, Label, Model, features};

fn skill(root: &str, description: &str, body: &str) -> Skill {
    Skill::from_text("r", root, root, description, body)
}

fn feature(x: &[f64], name: &str) -> f64 {
    let i = FEATURES
        .iter()
        .position(|f| f.0 == name)
        .unwrap_or_else(|| panic!("{name}"));
    x[i]
}

/// Twelve catalogue cards from one template (only the product differs), an empty skill and a
/// real one.
fn corpus() -> Vec<Skill> {
    let mut skills: Vec<Skill> = (0..12)
        .map(|i| {
            skill(
                &format!("tool-{i}"),
                &format!("Product{i} integration"),
                &format!(
                    "# Product{i}\n\nThis skill provides a comprehensive integration with Product{i} for your workflows.\n\n\
                     ## Installation\n\nnpm install product{i}\n\n## Source\n\nSource repository: https://example.com/product{i} \
                     view on github for more details about the project and its features.\n"
                ),
            )
        })
        .collect();
    skills.push(skill("empty", "", ""));
    skills.push(skill(
        "release-notes",
        "Write release notes from merged pull requests. Use when preparing a release.",
        "# Release notes\n\n## Steps\n\n1. List merged PRs: `gh pr list --state merged --base main`\n\
         2. Group them by label.\n3. Write one line per change.\n\n```sh\ngh pr list --state merged --json title,labels\n```\n\n\
         ## Checks\n\n- Every breaking change has a migration note.\n- Links point at the PR.\n",
    ));
    skills
}

#[test]
fn features_of_a_template_card_an_empty_skill_and_a_real_one() {
    let skills = corpus();
    let ctx = Context {
        skills: &skills,
        edges: &[],
        diagnostics: &[],
        members: None,
    };
    let x = features::compute(&ctx);
    assert_eq!(x.len(), skills.len());
    assert!(x.iter().all(|r| r.len() == FEATURES.len()));
    let card = &x[0];
    let empty = &x[12];
    let real = &x[13];
    // The 12 cards share their skeleton: the 5-grams without the product name occur in all 12.
    assert!(
        feature(card, "body_template") > 0.3,
        "{}",
        feature(card, "body_template")
    );
    assert!(feature(real, "body_template") < 0.01);
    // by hand: "this skill provides", "source repository", "view on github", "comprehensive"… per 1,000 words, capped
    assert!(feature(card, "boilerplate_phrases") > feature(real, "boilerplate_phrases"));
    assert!(feature(card, "install_share") > 0.0);
    assert!(feature(card, "link_density") > 0.0);
    // The empty skill: no words, nothing actionable.
    assert!(feature(empty, "body_words_log").abs() < 1e-12);
    assert!((feature(empty, "empty_content") - 1.0).abs() < 1e-12);
    assert!(feature(empty, "desc_chars_log").abs() < 1e-12);
    // The real one: 1 code block (ln 2), 3 headings (ln 4), 5 list items (ln 6), says when.
    assert!((feature(real, "code_blocks_log") - 2f64.ln()).abs() < 1e-12);
    assert!((feature(real, "headings_log") - 4f64.ln()).abs() < 1e-12);
    assert!((feature(real, "list_items_log") - 6f64.ln()).abs() < 1e-12);
    assert!((feature(real, "desc_says_when") - 1.0).abs() < 1e-12);
    assert!(feature(real, "empty_content").abs() < 1e-12);
}

/// Position of a feature by name (the tests don't depend on the feature order).
fn at(name: &str) -> usize {
    FEATURES
        .iter()
        .position(|f| f.0 == name)
        .unwrap_or_else(|| panic!("{name}"))
}

fn examples() -> Vec<Example> {
    // Clean skills have more inline code and fewer boilerplate phrases; a little noise.
    (0..60)
        .map(|i| {
            let good = i % 2 == 0;
            let mut x = vec![0.0; FEATURES.len()];
            let noise = f64::from(i * 7919 % 13) / 13.0;
            x[at("inline_code_density")] = if good { 5.0 + noise } else { 1.0 + noise };
            x[at("boilerplate_phrases")] = if good { 0.5 * noise } else { 3.0 + noise };
            x[at("body_words_log")] = 4.0 + noise;
            Example {
                key: format!("k{i}"),
                registry: format!("r{}", i % 3),
                label: if good {
                    Label::Good
                } else if i % 5 == 1 {
                    Label::Mediocre
                } else {
                    Label::Slop
                },
                kind: SkillKind::Skill,
                x,
            }
        })
        .collect()
}

#[test]
fn training_is_reproducible_and_learns_the_signal() {
    let ex = examples();
    let a = skg_score::train(&ex, 1.0).unwrap_or_else(|e| panic!("{e}"));
    let b = skg_score::train(&ex, 1.0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a, b, "same data → same coefficients");
    assert_eq!(a.training.data_hash, b.training.data_hash);
    assert_eq!(
        a.training.mediocre_excluded,
        ex.iter().filter(|e| e.label == Label::Mediocre).count()
    );
    assert_eq!(
        a.training.kinds,
        [SkillKind::Skill],
        "its domain: the kinds it saw"
    );
    assert!(
        a.coefficients[at("inline_code_density")] > 0.0,
        "inline code raises P(clean)"
    );
    assert!(
        a.coefficients[at("boilerplate_phrases")] < 0.0,
        "boilerplate lowers it"
    );
    let cv = skg_score::cross_validate(&ex, 1.0, 5, 0.4).unwrap_or_else(|e| panic!("{e}"));
    assert!(cv.auc_good_vs_slop.unwrap_or(0.0) > 0.95);
    // JSON round trip.
    let text = serde_json::to_string(&a).expect("serialize");
    assert_eq!(Model::from_json(&text).unwrap_or_else(|e| panic!("{e}")), a);
}

#[test]
fn the_committed_model_loads_and_ranks_a_real_skill_above_a_template_card() {
    let model = Model::bundled().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(model.coefficients.len(), FEATURES.len());
    assert!(model.training.rows > 0 && !model.training.data_hash.is_empty());
    let skills = corpus();
    let ctx = Context {
        skills: &skills,
        edges: &[],
        diagnostics: &[],
        members: None,
    };
    let rows = skg_score::score(&model, &ctx, 0.4);
    let get = |id: &str| {
        rows.iter()
            .find(|r| r.id.as_str() == id)
            .unwrap_or_else(|| panic!("{id}"))
    };
    let card = get("r:tool-0");
    let real = get("r:release-notes");
    assert!((0.0..=1.0).contains(&card.slop_score) && (0.0..=1.0).contains(&real.slop_score));
    assert!(
        real.slop_score > card.slop_score,
        "{} vs {}",
        real.slop_score,
        card.slop_score
    );
    assert!(card.quarantined && !real.quarantined);
    assert!(!card.reasons.is_empty(), "a quarantined skill says why");
    assert_eq!(card.contributions.len(), FEATURES.len());
}

#[test]
fn a_model_with_other_features_is_refused() {
    let mut m = Model::bundled().unwrap_or_else(|e| panic!("{e}"));
    m.features.pop();
    let text = serde_json::to_string(&m).expect("serialize");
    assert!(Model::from_json(&text).is_err());
}

#[test]
fn reasons_do_not_blame_missing_inline_code_when_there_are_code_blocks() {
    let model = Model::bundled().unwrap_or_else(|e| panic!("{e}"));
    let skills = vec![skill(
        "fenced",
        "",
        "Intro text without any inline code at all.\n\n```sh\nmake test\nmake lint\n```\n",
    )];
    let ctx = Context {
        skills: &skills,
        edges: &[],
        diagnostics: &[],
        members: None,
    };
    let rows = skg_score::score(&model, &ctx, 0.4);
    assert!(
        rows[0]
            .reasons
            .iter()
            .all(|r| !r.starts_with("inline_code_density")),
        "{:?}",
        rows[0].reasons
    );
    // The contribution itself is still there, in the contributions column.
    assert!(
        rows[0]
            .contributions
            .iter()
            .any(|(n, c)| n == "inline_code_density" && *c < 0.0)
    );
}

#[test]
fn an_entry_outside_the_models_domain_is_quarantined_only_without_a_description() {
    // The template cards of `corpus()` are quarantined as packages (the committed-model test);
    // as tool-catalog entries, under a model fitted on packages only, the score does not judge
    // them, and only the entry with nothing to route it by is quarantined.
    let model = Model::bundled().unwrap_or_else(|e| panic!("{e}"));
    assert!(model.applies_to(SkillKind::Skill) && !model.applies_to(SkillKind::Tool));
    let mut skills = corpus();
    for s in &mut skills {
        s.kind = SkillKind::Tool;
    }
    let ctx = Context {
        skills: &skills,
        edges: &[],
        diagnostics: &[],
        members: None,
    };
    let rows = skg_score::score(&model, &ctx, 0.4);
    let get = |id: &str| {
        rows.iter()
            .find(|r| r.id.as_str() == id)
            .unwrap_or_else(|| panic!("{id}"))
    };
    let (card, empty) = (get("r:tool-0"), get("r:empty"));
    assert!(!card.quarantined && empty.quarantined);
    assert!(
        card.reasons[0].contains("outside the model's domain"),
        "{:?}",
        card.reasons
    );
    assert_eq!(empty.reasons[0], skg_score::WITHOUT_DESCRIPTION);
    // The same score still judges them under a model whose domain includes tools.
    let mut tools = model.clone();
    tools.training.kinds = vec![SkillKind::Skill, SkillKind::Tool];
    let rows = skg_score::score(&tools, &ctx, 0.4);
    let card = rows
        .iter()
        .find(|r| r.id.as_str() == "r:tool-0")
        .unwrap_or_else(|| panic!("r:tool-0"));
    assert!(
        card.quarantined,
        "a low score quarantines inside the domain"
    );
}
