//! The report's view model: every number and row the template shows, computed and sorted here
//! so the template only lays them out.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use skg_model::{Role, Severity, Skill};

use crate::{Error, Input, Options, charts, diff, graph};

#[derive(Debug, Serialize)]
pub(crate) struct View {
    title: String,
    version: &'static str,
    schema_version: u32,
    provenance: Vec<String>,
    headline: Vec<Metric>,
    verdict: Verdict,
    counts: Counts,
    registries: Vec<RegistryRow>,
    flows: Flows,
    clusters: Vec<ClusterView>,
    diffs_shown: usize,
    quarantined: Vec<Quarantined>,
    threshold: Option<f64>,
    charts: Charts,
    graph: GraphView,
    diagnostics: Vec<DiagRow>,
    diagnostic_codes: Vec<(String, String, usize)>,
}

#[derive(Debug, Serialize)]
struct Verdict {
    rscore: String,
    min_rscore: f64,
    passed: bool,
    risk: String,
    failure_modes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Metric {
    name: &'static str,
    value: String,
    limit: String,
    ok: bool,
    meaning: &'static str,
}

#[derive(Debug, Serialize, Default)]
struct Counts {
    registries: usize,
    skills: usize,
    routable: usize,
    aliases: usize,
    variants: usize,
    quarantined: usize,
    relations: usize,
    nodes: u32,
    edges: u32,
    errors: usize,
    warnings: usize,
    infos: usize,
}

#[derive(Debug, Serialize, Default)]
struct RegistryRow {
    name: String,
    revision: String,
    skills: usize,
    routable: usize,
    aliases: usize,
    variants: usize,
    quarantined: usize,
    quarantined_pct: f64,
    mean_score: String,
    relations: usize,
    errors: usize,
    warnings: usize,
    nodes: u32,
    isolated: u32,
    tlis: String,
    gnci: String,
    cfi: String,
    rscore: String,
    risk: String,
    failure_modes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Flows {
    columns: Vec<String>,
    rows: Vec<FlowRow>,
}

#[derive(Debug, Serialize)]
struct FlowRow {
    registry: String,
    cells: Vec<(usize, f64)>,
    total: usize,
}

#[derive(Debug, Serialize)]
struct Loc {
    registry: String,
    path: String,
    name: String,
}

#[derive(Debug, Serialize)]
struct CopyView {
    at: Loc,
    role: &'static str,
    reason: String,
    identical: bool,
    diff: Vec<diff::Line>,
    cut: bool,
}

#[derive(Debug, Serialize)]
struct ClusterView {
    canonical: Loc,
    size: u32,
    registries: Vec<String>,
    copies: Vec<CopyView>,
    variants: Vec<String>,
    has_diff: bool,
}

#[derive(Debug, Serialize)]
struct Quarantined {
    at: Loc,
    score: String,
    reasons: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Charts {
    slop: String,
    degrees: String,
    communities: String,
}

#[derive(Debug, Serialize)]
struct CommunityView {
    id: u32,
    size: u32,
    label: String,
    registries: String,
    sample: Vec<String>,
}

#[derive(Debug, Serialize)]
struct GraphView {
    svg: String,
    drawn: usize,
    left_out: usize,
    isolated: Vec<Loc>,
    god_nodes: Vec<String>,
    communities: Vec<CommunityView>,
}

#[derive(Debug, Serialize)]
struct DiagRow {
    location: String,
    severity: &'static str,
    code: String,
    message: String,
}

fn f(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "–".to_owned(), |v| format!("{v:.digits$}"))
}

fn loc(s: Option<&Skill>, id: &str) -> Loc {
    match s {
        Some(s) => Loc {
            registry: s.registry.to_string(),
            path: s.path.clone(),
            name: s.name.clone(),
        },
        None => Loc {
            registry: String::new(),
            path: id.to_owned(),
            name: id.to_owned(),
        },
    }
}

pub(crate) fn build(input: &Input<'_>, options: &Options) -> Result<View, Error> {
    let skill: HashMap<&str, &Skill> = input.skills.iter().map(|s| (s.id.as_str(), s)).collect();
    let all = input.metrics.iter().find(|m| m.scope == "(all)");

    // Headline against the METRICS.md limits.
    let rscore = all.and_then(|m| m.rscore);
    let verdict = Verdict {
        rscore: f(rscore, 3),
        min_rscore: options.min_rscore,
        passed: rscore.is_some_and(|r| r >= options.min_rscore),
        risk: all.map_or_else(|| "empty".to_owned(), |m| m.risk.clone()),
        failure_modes: all.map(|m| m.failure_modes.clone()).unwrap_or_default(),
    };
    let headline = vec![
        Metric {
            name: "RScore",
            value: f(rscore, 3),
            limit: format!("≥ {}", options.min_rscore),
            ok: verdict.passed,
            meaning: "routability: 1 − mean of the three normalized risks",
        },
        Metric {
            name: "TLIS",
            value: f(all.and_then(|m| m.tlis), 3),
            limit: "< 0.5".into(),
            ok: all.and_then(|m| m.tlis).is_some_and(|v| v < 0.5),
            meaning: "isolated skills / skills: nothing leads to them",
        },
        Metric {
            name: "GNCI",
            value: f(all.and_then(|m| m.gnci), 2),
            limit: "< 20".into(),
            ok: all.and_then(|m| m.gnci).is_some_and(|v| v < 20.0),
            meaning: "max degree / mean degree: one node couples everything",
        },
        Metric {
            name: "CFI",
            value: f(all.and_then(|m| m.cfi), 2),
            limit: "< 10".into(),
            ok: all.and_then(|m| m.cfi).is_some_and(|v| v < 10.0),
            meaning: "communities / named communities: the catalog falls apart",
        },
    ];

    // Per registry.
    let mut regs: BTreeMap<String, RegistryRow> = BTreeMap::new();
    for r in input.registries {
        regs.insert(
            r.name.to_string(),
            RegistryRow {
                name: r.name.to_string(),
                revision: r
                    .rev
                    .as_deref()
                    .unwrap_or(&r.content_hash)
                    .chars()
                    .take(12)
                    .collect(),
                ..RegistryRow::default()
            },
        );
    }
    let mut counts = Counts {
        registries: input.registries.len(),
        skills: input.skills.len(),
        relations: input.relations.len(),
        nodes: all.map_or(0, |m| m.nodes),
        edges: all.map_or(0, |m| m.edges),
        ..Counts::default()
    };
    for s in input.skills {
        reg(&mut regs, s.registry.as_str()).skills += 1;
    }
    for m in input.members {
        let r = reg(&mut regs, m.registry.as_str());
        match m.role {
            Role::Canonical => r.routable += 1,
            Role::Variant => {
                r.routable += 1;
                r.variants += 1;
            }
            Role::Duplicate => r.aliases += 1,
        }
    }
    let mut score_sum: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    let mut slop: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in input.scores {
        let e = score_sum.entry(s.registry.to_string()).or_default();
        e.0 += s.slop_score;
        e.1 += 1;
        slop.entry(s.registry.to_string())
            .or_default()
            .push(s.slop_score);
        if s.quarantined {
            reg(&mut regs, s.registry.as_str()).quarantined += 1;
        }
    }
    for e in input.relations {
        if let Some(s) = skill.get(e.src.as_str()) {
            reg(&mut regs, s.registry.as_str()).relations += 1;
        }
    }
    for d in input.diagnostics {
        let r = reg(&mut regs, d.registry.as_str());
        match d.severity {
            Severity::Error => {
                r.errors += 1;
                counts.errors += 1;
            }
            Severity::Warning => {
                r.warnings += 1;
                counts.warnings += 1;
            }
            Severity::Info => counts.infos += 1,
        }
    }
    for m in input.metrics.iter().filter(|m| m.scope != "(all)") {
        let r = reg(&mut regs, &m.scope);
        r.nodes = m.nodes;
        r.isolated = m.isolated;
        r.tlis = f(m.tlis, 3);
        r.gnci = f(m.gnci, 2);
        r.cfi = f(m.cfi, 2);
        r.rscore = f(m.rscore, 3);
        r.risk.clone_from(&m.risk);
        r.failure_modes.clone_from(&m.failure_modes);
    }
    for r in regs.values_mut() {
        if let Some((sum, n)) = score_sum.get(&r.name) {
            r.mean_score = format!("{:.3}", sum / (*n).max(1) as f64);
        }
        r.quarantined_pct = if r.skills == 0 {
            0.0
        } else {
            (1000.0 * r.quarantined as f64 / r.skills as f64).round() / 10.0
        };
        counts.routable += r.routable;
        counts.aliases += r.aliases;
        counts.variants += r.variants;
        counts.quarantined += r.quarantined;
    }

    // Duplicate flows: copies in row registry whose canonical lives in column registry.
    let member_of: HashMap<&str, &skg_model::Member> =
        input.members.iter().map(|m| (m.id.as_str(), m)).collect();
    let names: Vec<String> = regs.keys().cloned().collect();
    let col: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut matrix = vec![vec![0usize; names.len()]; names.len()];
    for m in input.members.iter().filter(|m| m.role == Role::Duplicate) {
        let canon_reg = member_of
            .get(m.cluster_id.as_str())
            .map(|c| c.registry.as_str());
        if let (Some(&a), Some(&b)) = (
            col.get(m.registry.as_str()),
            canon_reg.and_then(|r| col.get(r)),
        ) {
            matrix[a][b] += 1;
        }
    }
    let peak = matrix.iter().flatten().copied().max().unwrap_or(0).max(1);
    let flows = Flows {
        columns: names.clone(),
        rows: names
            .iter()
            .zip(&matrix)
            .filter(|(_, cells)| cells.iter().any(|&n| n > 0))
            .map(|(n, cells)| FlowRow {
                registry: n.clone(),
                cells: cells
                    .iter()
                    .map(|&c| (c, (c as f64 / peak as f64 * 100.0).round() / 100.0))
                    .collect(),
                total: cells.iter().sum(),
            })
            .collect(),
    };

    // Duplicate clusters, largest first; the first `diff_clusters` get diffs.
    let mut clusters: Vec<&skg_model::Cluster> =
        input.clusters.iter().filter(|c| c.size > 1).collect();
    clusters.sort_by(|a, b| b.size.cmp(&a.size).then(a.cluster_id.cmp(&b.cluster_id)));
    let mut diffs_shown = 0;
    let clusters: Vec<ClusterView> = clusters
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let canon = skill.get(c.cluster_id.as_str()).copied();
            let with_diff = k < options.diff_clusters;
            let copies: Vec<CopyView> = c
                .members
                .iter()
                .filter(|id| **id != c.cluster_id)
                .map(|id| {
                    let s = skill.get(id.as_str()).copied();
                    let m = member_of.get(id.as_str());
                    let d = match (with_diff, canon, s) {
                        (true, Some(a), Some(b)) => diff::lines(a, b, options.diff_lines),
                        _ => None,
                    };
                    let identical = with_diff && canon.is_some() && s.is_some() && d.is_none();
                    let (diff, cut) = d.unwrap_or_default();
                    CopyView {
                        at: loc(s, id.as_str()),
                        role: m.map_or("duplicate", |m| m.role.as_str()),
                        reason: m.map(|m| m.reason.clone()).unwrap_or_default(),
                        identical,
                        diff,
                        cut,
                    }
                })
                .collect();
            let has_diff = copies.iter().any(|c| !c.diff.is_empty());
            diffs_shown += usize::from(has_diff);
            ClusterView {
                canonical: loc(canon, c.cluster_id.as_str()),
                size: c.size,
                registries: c.registries.clone(),
                copies,
                variants: c.variants.iter().map(ToString::to_string).collect(),
                has_diff,
            }
        })
        .collect();

    // Quarantined, lowest score first.
    let mut q: Vec<&skg_model::Score> = input.scores.iter().filter(|s| s.quarantined).collect();
    q.sort_by(|a, b| a.slop_score.total_cmp(&b.slop_score).then(a.id.cmp(&b.id)));
    let quarantined = q
        .iter()
        .map(|s| Quarantined {
            at: loc(skill.get(s.id.as_str()).copied(), s.id.as_str()),
            score: format!("{:.3}", s.slop_score),
            reasons: s.reasons.clone(),
        })
        .collect();
    let threshold = input.scores.first().map(|s| s.threshold);

    // The graph.
    let g = graph::Graph::build(input, options);
    let labels: BTreeMap<u32, String> = input
        .communities
        .iter()
        .filter(|c| c.scope == "(all)")
        .filter_map(|c| c.label.clone().map(|l| (c.community, l)))
        .collect();
    let node_names: HashMap<&str, (&str, &str)> = input
        .skills
        .iter()
        .map(|s| (s.id.as_str(), (s.name.as_str(), s.registry.as_str())))
        .collect();
    let (svg, drawn, left_out) = graph::picture(&g, &node_names, &labels, options);
    let degrees: Vec<usize> = (0..g.nodes.len()).map(|i| g.degree(i)).collect();
    let mut communities: Vec<&skg_model::CommunityRow> = input
        .communities
        .iter()
        .filter(|c| c.scope == "(all)")
        .collect();
    communities.sort_by(|a, b| b.size.cmp(&a.size).then(a.community.cmp(&b.community)));
    let sizes: Vec<u32> = communities.iter().map(|c| c.size).collect();
    let community_views = communities
        .iter()
        .filter(|c| c.size > 1)
        .map(|c| {
            let mut by_reg: BTreeMap<&str, usize> = BTreeMap::new();
            for m in &c.members {
                if let Some(s) = skill.get(m.as_str()) {
                    *by_reg.entry(s.registry.as_str()).or_default() += 1;
                }
            }
            let mut regs: Vec<(&str, usize)> = by_reg.into_iter().collect();
            regs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            CommunityView {
                id: c.community,
                size: c.size,
                label: c.label.clone().unwrap_or_default(),
                registries: regs
                    .iter()
                    .map(|(r, n)| format!("{r} {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                sample: c
                    .members
                    .iter()
                    .take(8)
                    .map(|m| {
                        skill
                            .get(m.as_str())
                            .map_or_else(|| m.clone(), |s| s.name.clone())
                    })
                    .collect(),
            }
        })
        .collect();
    let isolated = all
        .map(|m| {
            m.isolated_nodes
                .iter()
                .map(|id| loc(skill.get(id.as_str()).copied(), id))
                .collect()
        })
        .unwrap_or_default();
    let graph = GraphView {
        svg,
        drawn,
        left_out,
        isolated,
        god_nodes: all.map(|m| m.god_nodes.clone()).unwrap_or_default(),
        communities: community_views,
    };
    let charts = Charts {
        slop: if slop.is_empty() {
            String::new()
        } else {
            charts::slop_by_registry(&slop, threshold.unwrap_or(0.4))?
        },
        degrees: charts::degree_distribution(&degrees)?,
        communities: charts::community_sizes(&sizes)?,
    };

    // Diagnostics, worst first, then by place.
    let mut diags: Vec<&skg_model::Diagnostic> = input.diagnostics.iter().collect();
    diags.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.registry.cmp(&b.registry))
            .then(a.path.cmp(&b.path))
            .then(a.line.cmp(&b.line))
            .then(a.code.cmp(&b.code))
    });
    let mut by_code: BTreeMap<(String, String), usize> = BTreeMap::new();
    for d in &diags {
        *by_code
            .entry((d.code.to_string(), d.severity.as_str().to_owned()))
            .or_default() += 1;
    }
    let mut diagnostic_codes: Vec<(String, String, usize)> =
        by_code.into_iter().map(|((c, s), n)| (c, s, n)).collect();
    diagnostic_codes.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    let diagnostics = diags
        .iter()
        .map(|d| DiagRow {
            location: match d.line {
                Some(l) => format!("{}/{}:{l}", d.registry, d.path),
                None => format!("{}/{}", d.registry, d.path),
            },
            severity: d.severity.as_str(),
            code: d.code.to_string(),
            message: d.message.clone(),
        })
        .collect();

    Ok(View {
        title: input.title.to_owned(),
        version: env!("CARGO_PKG_VERSION"),
        schema_version: skg_model::SCHEMA_VERSION,
        provenance: options.provenance.clone(),
        headline,
        verdict,
        counts,
        registries: regs.into_values().collect(),
        flows,
        clusters,
        diffs_shown,
        quarantined,
        threshold,
        charts,
        graph,
        diagnostics,
        diagnostic_codes,
    })
}

fn reg<'m>(regs: &'m mut BTreeMap<String, RegistryRow>, name: &str) -> &'m mut RegistryRow {
    regs.entry(name.to_owned()).or_insert_with(|| RegistryRow {
        name: name.to_owned(),
        ..RegistryRow::default()
    })
}
