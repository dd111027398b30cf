//! Metrics on graphs small enough to compute by hand; expected values come from the definitions
//! in docs/metrics.md, evaluated here.

use skg_measure::{Input, Options, build, communities, measure};
use skg_model::{Edge, EdgeKind, EdgeSource, Member, Role, Skill, SkillId};

fn skill(id: &str, tags: &[&str]) -> Skill {
    let mut s = Skill::from_text("r", id, id, "", "");
    s.tags = tags.iter().map(|t| (*t).to_owned()).collect();
    s
}

fn edge(a: &str, b: &str, confidence: f64) -> Edge {
    Edge {
        src: SkillId::from(format!("r:{a}")),
        dst: SkillId::from(format!("r:{b}")),
        kind: EdgeKind::DependsOn,
        confidence,
        source: EdgeSource::Inferred,
        extractor: "test".into(),
        evidence: vec![],
    }
}

fn close(a: Option<f64>, b: f64) {
    let a = a.unwrap_or(f64::NAN);
    assert!((a - b).abs() < 1e-6, "{a} != {b}");
}

#[test]
fn two_triangles_and_an_isolated_node() {
    // Triangle T (all tagged pdf), triangle U (names share the stem `git`), isolated z.
    let skills = vec![
        skill("t1", &["pdf"]),
        skill("t2", &["pdf"]),
        skill("t3", &["pdf", "ocr"]),
        skill("git-a", &[]),
        skill("git-b", &[]),
        skill("git-c", &[]),
        skill("z", &[]),
    ];
    let edges = vec![
        edge("t1", "t2", 1.0),
        edge("t2", "t3", 1.0),
        edge("t3", "t1", 1.0),
        edge("git-a", "git-b", 1.0),
        edge("git-b", "git-c", 1.0),
        edge("git-c", "git-a", 1.0),
        edge("z", "t1", 0.2), // below the default confidence: not an edge
    ];
    let input = Input {
        skills: &skills,
        edges: &edges,
        members: None,
        scores: None,
    };
    let opts = Options::default();
    let (_, m) = measure(&input, &opts).unwrap_or_else(|e| panic!("{e}"));
    let all = &m.metrics[0];
    assert_eq!(all.scope, "(all)");
    // By definition: n = 7, edges = 6, degrees (2,2,2,2,2,2,0).
    let (n, e): (f64, f64) = (7.0, 6.0);
    let tlis = 1.0 / n;
    let mean = 2.0 * e / n;
    let gnci = 2.0 / mean;
    let cfi: f64 = 3.0 / 2.0; // communities {T}, {U}, {z}; named: T (tag:pdf 3/3), U (stem:git 3/3)
    let rscore = 1.0 - (tlis + (gnci / 40.0).min(1.0) + (cfi / 20.0).min(1.0)) / 3.0;
    assert_eq!(
        (all.nodes, all.edges, all.isolated, all.max_degree),
        (7, 6, 1, 2)
    );
    assert_eq!(all.isolated_nodes, vec!["r:z".to_owned()]);
    close(all.tlis, tlis);
    close(all.mean_degree, mean);
    close(all.gnci, gnci);
    assert_eq!((all.communities, all.named_communities), (3, 2));
    close(all.cfi, cfi);
    close(all.rscore, rscore);
    assert_eq!(all.risk, "ok");
    assert!(all.failure_modes.is_empty() && all.god_nodes.is_empty());
    let labels: Vec<Option<String>> = m
        .communities
        .iter()
        .filter(|c| c.scope == "(all)")
        .map(|c| c.label.clone())
        .collect();
    assert!(labels.contains(&Some("tag:pdf".into())));
    assert!(labels.contains(&Some("stem:git".into())));
    assert!(
        labels.contains(&None),
        "a singleton is a community and is never named"
    );
}

#[test]
fn a_hub_is_a_god_node() {
    // Hub h with 45 leaves: edges 45, n 46, mean 90/46, GNCI 45 / (90/46) = 23 ≥ 20.
    let mut skills = vec![skill("h", &[])];
    let mut edges = Vec::new();
    for i in 0..45 {
        let id = format!("leaf{i}");
        skills.push(skill(&id, &[]));
        edges.push(edge("h", &id, 1.0));
    }
    let input = Input {
        skills: &skills,
        edges: &edges,
        members: None,
        scores: None,
    };
    let (_, m) = measure(&input, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let all = &m.metrics[0];
    let mean = 90.0 / 46.0;
    close(all.gnci, 45.0 / mean);
    assert!(all.failure_modes.contains(&"god-node".to_owned()));
    assert_eq!(all.god_nodes, vec!["r:h (45)".to_owned()]);
    close(all.tlis, 0.0);
    // CFI from the communities found, by the definition.
    let cfi = f64::from(all.communities) / f64::from(all.named_communities.max(1));
    close(all.cfi, cfi);
}

#[test]
fn edge_cases_empty_graph_and_no_edges() {
    let input = Input {
        skills: &[],
        edges: &[],
        members: None,
        scores: None,
    };
    let (_, m) = measure(&input, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.metrics[0].risk, "empty");
    assert!(m.metrics[0].rscore.is_none() && m.metrics[0].tlis.is_none());

    // Four nodes, no edges: TLIS 1, mean degree 0 → GNCI 0, four singleton communities, none named
    // → CFI 4 / 1 = 4; RScore = 1 − (1 + 0 + 4/20) / 3.
    let skills: Vec<Skill> = (0..4).map(|i| skill(&format!("s{i}"), &[])).collect();
    let input = Input {
        skills: &skills,
        edges: &[],
        members: None,
        scores: None,
    };
    let (_, m) = measure(&input, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let all = &m.metrics[0];
    close(all.tlis, 1.0);
    close(all.gnci, 0.0);
    assert_eq!((all.communities, all.named_communities), (4, 0));
    close(all.cfi, 4.0);
    close(all.rscore, 1.0 - (1.0 + 0.0 + 4.0 / 20.0) / 3.0);
    assert!(all.failure_modes.contains(&"isolation".to_owned()));
}

#[test]
fn aliases_fold_into_their_canonical_and_quarantine_removes_nodes() {
    let skills = vec![skill("a", &[]), skill("a-copy", &[]), skill("b", &[])];
    let edges = vec![edge("b", "a-copy", 1.0)];
    let members: Vec<Member> = skills
        .iter()
        .map(|s| Member {
            id: s.id.clone(),
            registry: s.registry.clone(),
            path: s.path.clone(),
            name: s.name.clone(),
            cluster_id: if s.id.as_str() == "r:a-copy" {
                SkillId::from("r:a")
            } else {
                s.id.clone()
            },
            role: if s.id.as_str() == "r:a-copy" {
                Role::Duplicate
            } else {
                Role::Canonical
            },
            variant_of: None,
            quality: 1.0,
            quality_source: "completeness".into(),
            nearest_description: 0.0,
            reason: String::new(),
        })
        .collect();
    let input = Input {
        skills: &skills,
        edges: &edges,
        members: Some(&members),
        scores: None,
    };
    let skg = build(&input, &Options::default());
    assert_eq!(skg.graph.node_count(), 2, "the alias is not a node");
    assert_eq!(
        skg.graph.edge_count(),
        1,
        "its edge now points at the canonical"
    );
    let with_aliases = build(
        &input,
        &Options {
            include_aliases: true,
            ..Options::default()
        },
    );
    assert_eq!(with_aliases.graph.node_count(), 3);
}

#[test]
fn louvain_is_deterministic_for_a_seed() {
    // A ring of 6 cliques of 5, each joined to the next by one edge.
    let mut skills = Vec::new();
    let mut edges = Vec::new();
    for c in 0..6 {
        for i in 0..5 {
            skills.push(skill(&format!("c{c}n{i}"), &[]));
            for j in 0..i {
                edges.push(edge(&format!("c{c}n{i}"), &format!("c{c}n{j}"), 1.0));
            }
        }
        edges.push(edge(
            &format!("c{c}n0"),
            &format!("c{}n1", (c + 1) % 6),
            1.0,
        ));
    }
    let input = Input {
        skills: &skills,
        edges: &edges,
        members: None,
        scores: None,
    };
    let skg = build(&input, &Options::default());
    let nodes: Vec<_> = skg.graph.node_indices().collect();
    let a = communities(&skg, &nodes, 42).unwrap_or_else(|e| panic!("{e}"));
    let b = communities(&skg, &nodes, 42).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a, b);
    assert_eq!(a.len(), 6, "each clique is a community");
    assert!(a.iter().all(|c| c.len() == 5));
}

#[test]
fn communities_are_named_by_the_capability_type_their_members_share() {
    // Two 4-cliques. Clique P: types testing 0.9, testing 0.6, devops 0.8, unknown — testing
    // carries 1.5 of the typed mass 2.3 (0.652 ≥ 0.5) and 2 members (≥ 2 and ≥ 4 × 0.25) → `type:testing`,
    // support 0.652174. Clique Q: testing 0.9, devops 0.9, unknown, unknown — the top (a tie of
    // 0.9, broken by name: devops) has 0.5 of the mass but one member < 2 → no type; the raw
    // rule: every member is tagged `ops` → `tag:ops`, support 1.
    let typed = |id: &str, kind: &str, conf: f64, tags: &[&str]| {
        let mut s = skill(id, tags);
        s.capability = kind.to_owned();
        s.capability_confidence = conf;
        s
    };
    let skills = vec![
        typed("p1", "testing", 0.9, &[]),
        typed("p2", "testing", 0.6, &[]),
        typed("p3", "devops", 0.8, &[]),
        typed("p4", "unknown", 0.2, &[]),
        typed("q1", "testing", 0.9, &["ops"]),
        typed("q2", "devops", 0.9, &["ops"]),
        typed("q3", "unknown", 0.0, &["ops"]),
        typed("q4", "unknown", 0.0, &["ops"]),
    ];
    let mut edges = Vec::new();
    for g in ["p", "q"] {
        for a in 1..=4 {
            for b in a + 1..=4 {
                edges.push(edge(&format!("{g}{a}"), &format!("{g}{b}"), 1.0));
            }
        }
    }
    let input = Input {
        skills: &skills,
        edges: &edges,
        members: None,
        scores: None,
    };
    let (_, m) = measure(&input, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let named = |first: &str| {
        m.communities
            .iter()
            .find(|c| c.scope == "(all)" && c.members[0] == first)
            .map_or_else(
                || panic!("a community starting with {first}"),
                |c| (c.label.clone(), c.support),
            )
    };
    let (label, support) = named("r:p1");
    assert_eq!(label.as_deref(), Some("type:testing"));
    close(support, 1.5 / 2.3);
    let (label, support) = named("r:q1");
    assert_eq!(label.as_deref(), Some("tag:ops"));
    close(support, 1.0);
    // Without capability naming, P has no majority label: unnamed.
    let raw = Options {
        name_by_capability: false,
        ..Options::default()
    };
    let (_, m) = measure(&input, &raw).unwrap_or_else(|e| panic!("{e}"));
    let p = m
        .communities
        .iter()
        .find(|c| c.scope == "(all)" && c.members[0] == "r:p1")
        .map(|c| c.label.clone());
    assert_eq!(p, Some(None));
}
