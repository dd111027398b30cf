//! The report's view model: every number and row the template shows, computed and sorted here
//! so the template only lays them out.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use skg_model::{ALL_SCOPE, MetricRow, Role, Severity, Skill, limits};

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
    security: Security,
    capabilities: Capabilities,
}

/// Skills by capability type (rows, most skills first; `unknown` last) and registry (columns).
#[derive(Debug, Serialize, Default)]
struct Capabilities {
    registries: Vec<String>,
    /// (type, count per registry in `registries` order, total, mean confidence).
    by_type: Vec<(String, Vec<usize>, usize, String)>,
    /// Skills with a type other than `unknown`.
    typed: usize,
}

/// The security scan: counts by category and registry, and the flagged packages with their
/// findings (evidence line shown as found).
#[derive(Debug, Serialize, Default)]
struct Security {
    scanned: usize,
    suspicious: usize,
    r#unsafe: usize,
    /// Registry names (columns of `by_category`).
    registries: Vec<String>,
    /// (category, count per registry in `registries` order, total).
    by_category: Vec<(String, Vec<usize>, usize)>,
    /// Unsafe first, then suspicious; by score.
    flagged: Vec<Flagged>,
}

#[derive(Debug, Serialize)]
struct Flagged {
    id: String,
    verdict: &'static str,
    score: String,
    findings: Vec<FindingRow>,
}

#[derive(Debug, Serialize)]
struct FindingRow {
    location: String,
    rule: String,
    severity: &'static str,
    category: &'static str,
    message: String,
    snippet: String,
    context: String,
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
    support: String,
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

/// What every section reads: the input, the options, skills by id, the union's metrics.
struct Ctx<'a> {
    input: &'a Input<'a>,
    options: &'a Options,
    skill: HashMap<&'a str, &'a Skill>,
    all: Option<&'a MetricRow>,
}

impl Ctx<'_> {
    fn loc(&self, id: &str) -> Loc {
        loc(self.skill.get(id).copied(), id)
    }
}

pub(crate) fn build(input: &Input<'_>, options: &Options) -> Result<View, Error> {
    let cx = Ctx {
        input,
        options,
        skill: input.skills.iter().map(|s| (s.id.as_str(), s)).collect(),
        all: input.metrics.iter().find(|m| m.scope == ALL_SCOPE),
    };
    let (verdict, headline) = headline(&cx);
    let (regs, counts, slop) = registries(&cx);
    let flows = flows(input, &regs);
    let (clusters, diffs_shown) = clusters(&cx);
    let threshold = input.scores.first().map(|s| s.threshold);
    let (graph, degrees, sizes) = graph_view(&cx);
    let charts = Charts {
        slop: match threshold {
            Some(t) if !slop.is_empty() => charts::slop_by_registry(&slop, t)?,
            _ => String::new(),
        },
        degrees: charts::degree_distribution(&degrees)?,
        communities: charts::community_sizes(&sizes)?,
    };
    let (diagnostics, diagnostic_codes) = diagnostics(input);
    let security = security(input);
    let capabilities = capabilities(input);
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
        quarantined: quarantined(&cx),
        threshold,
        charts,
        graph,
        diagnostics,
        diagnostic_codes,
        security,
        capabilities,
    })
}

/// The capability facet: every skill's primary type counted per registry.
fn capabilities(input: &Input<'_>) -> Capabilities {
    let mut registries: Vec<String> = input
        .skills
        .iter()
        .map(|s| s.registry.to_string())
        .collect();
    registries.sort();
    registries.dedup();
    let col: HashMap<&str, usize> = registries
        .iter()
        .enumerate()
        .map(|(i, r)| (r.as_str(), i))
        .collect();
    let mut by: BTreeMap<&str, (Vec<usize>, f64)> = BTreeMap::new();
    for s in input.skills {
        let e = by
            .entry(s.capability.as_str())
            .or_insert_with(|| (vec![0; registries.len()], 0.0));
        if let Some(&i) = col.get(s.registry.as_str()) {
            e.0[i] += 1;
        }
        e.1 += s.capability_confidence;
    }
    let mut by_type: Vec<(String, Vec<usize>, usize, String)> = by
        .into_iter()
        .map(|(t, (row, conf))| {
            let total: usize = row.iter().sum();
            let mean = conf / total.max(1) as f64;
            (t.to_owned(), row, total, format!("{mean:.2}"))
        })
        .collect();
    by_type.sort_by(|a, b| {
        (a.0 == "unknown")
            .cmp(&(b.0 == "unknown"))
            .then(b.2.cmp(&a.2))
            .then(a.0.cmp(&b.0))
    });
    Capabilities {
        typed: input
            .skills
            .iter()
            .filter(|s| s.capability != "unknown")
            .count(),
        registries,
        by_type,
    }
}

/// The scan's section: every flagged package (unsafe first) with its findings, and the findings
/// counted by category and registry.
fn security(input: &Input<'_>) -> Security {
    use skg_model::security::VerdictKind;
    let registry_of: HashMap<&str, &str> = input
        .verdicts
        .iter()
        .map(|v| (v.skill_id.as_str(), v.registry.as_str()))
        .collect();
    let registries: Vec<String> = {
        let mut r: Vec<String> = input.verdicts.iter().map(|v| v.registry.clone()).collect();
        r.sort();
        r.dedup();
        r
    };
    let mut by_cat: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for f in input.findings {
        let reg = registry_of.get(f.skill_id.as_str()).copied().unwrap_or("");
        let col = registries.iter().position(|r| r == reg).unwrap_or(0);
        let row = by_cat
            .entry(f.category.as_str())
            .or_insert_with(|| vec![0; registries.len().max(1)]);
        row[col] += 1;
    }
    let mut findings_of: HashMap<&str, Vec<&skg_model::security::Finding>> = HashMap::new();
    for f in input.findings {
        findings_of.entry(f.skill_id.as_str()).or_default().push(f);
    }
    let mut flagged: Vec<&skg_model::security::Verdict> = input
        .verdicts
        .iter()
        .filter(|v| v.verdict != VerdictKind::Safe)
        .collect();
    flagged.sort_by(|a, b| {
        b.verdict
            .cmp(&a.verdict)
            .then(b.score.total_cmp(&a.score))
            .then(a.skill_id.cmp(&b.skill_id))
    });
    let flagged = flagged
        .into_iter()
        .map(|v| {
            let mut fs = findings_of
                .get(v.skill_id.as_str())
                .cloned()
                .unwrap_or_default();
            fs.sort_by(|a, b| {
                b.severity
                    .cmp(&a.severity)
                    .then(a.path.cmp(&b.path))
                    .then(a.line.cmp(&b.line))
            });
            Flagged {
                id: v.skill_id.to_string(),
                verdict: v.verdict.as_str(),
                score: format!("{:.2}", v.score),
                findings: fs
                    .into_iter()
                    .map(|f| FindingRow {
                        location: format!("{}:{}", f.path, f.line),
                        rule: f.rule.clone(),
                        severity: f.severity.as_str(),
                        category: f.category.as_str(),
                        message: f.message.clone(),
                        snippet: f.snippet.clone(),
                        context: f.context.join("; "),
                    })
                    .collect(),
            }
        })
        .collect();
    Security {
        scanned: input.verdicts.len(),
        suspicious: input
            .verdicts
            .iter()
            .filter(|v| v.verdict == VerdictKind::Suspicious)
            .count(),
        r#unsafe: input
            .verdicts
            .iter()
            .filter(|v| v.verdict == VerdictKind::Unsafe)
            .count(),
        by_category: by_cat
            .into_iter()
            .map(|(c, row)| {
                let total = row.iter().sum();
                (c.to_owned(), row, total)
            })
            .collect(),
        registries,
        flagged,
    }
}

/// The verdict and the headline metrics against the docs/metrics.md limits.
fn headline(cx: &Ctx<'_>) -> (Verdict, Vec<Metric>) {
    let (all, min_rscore) = (cx.all, cx.options.min_rscore);
    let rscore = all.and_then(|m| m.rscore);
    let verdict = Verdict {
        rscore: f(rscore, 3),
        min_rscore,
        passed: rscore.is_some_and(|r| r >= min_rscore),
        risk: all.map_or_else(|| "empty".to_owned(), |m| m.risk.clone()),
        failure_modes: all.map(|m| m.failure_modes.clone()).unwrap_or_default(),
    };
    let below = |value: Option<f64>, digits, limit: f64, name, meaning| Metric {
        name,
        value: f(value, digits),
        limit: format!("< {limit}"),
        ok: value.is_some_and(|v| v < limit),
        meaning,
    };
    let headline = vec![
        Metric {
            name: "RScore",
            value: f(rscore, 3),
            limit: format!("≥ {min_rscore}"),
            ok: verdict.passed,
            meaning: "routability: 1 − mean of the three normalized risks",
        },
        below(
            all.and_then(|m| m.tlis),
            3,
            limits::TLIS,
            "TLIS",
            "isolated skills / skills: nothing leads to them",
        ),
        below(
            all.and_then(|m| m.gnci),
            2,
            limits::GNCI,
            "GNCI",
            "max degree / mean degree: one node couples everything",
        ),
        below(
            all.and_then(|m| m.cfi),
            2,
            limits::CFI,
            "CFI",
            "communities / named communities: the catalog falls apart",
        ),
    ];
    (verdict, headline)
}

/// One row per registry (skills, roles, quarantine, relations, diagnostics, metrics), the
/// totals, and each registry's slop scores (for the chart).
fn registries(
    cx: &Ctx<'_>,
) -> (
    BTreeMap<String, RegistryRow>,
    Counts,
    BTreeMap<String, Vec<f64>>,
) {
    let input = cx.input;
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
        nodes: cx.all.map_or(0, |m| m.nodes),
        edges: cx.all.map_or(0, |m| m.edges),
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
        if let Some(s) = cx.skill.get(e.src.as_str()) {
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
    for m in input.metrics.iter().filter(|m| m.scope != ALL_SCOPE) {
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
    (regs, counts, slop)
}

/// Duplicate flows: copies in the row registry whose canonical lives in the column registry.
fn flows(input: &Input<'_>, regs: &BTreeMap<String, RegistryRow>) -> Flows {
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
    Flows {
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
    }
}

/// Duplicate clusters, largest first; the first `diff_clusters` get diffs of each copy against
/// the canonical. Also how many clusters show a diff.
fn clusters(cx: &Ctx<'_>) -> (Vec<ClusterView>, usize) {
    let member_of: HashMap<&str, &skg_model::Member> = cx
        .input
        .members
        .iter()
        .map(|m| (m.id.as_str(), m))
        .collect();
    let mut clusters: Vec<&skg_model::Cluster> =
        cx.input.clusters.iter().filter(|c| c.size > 1).collect();
    clusters.sort_by(|a, b| b.size.cmp(&a.size).then(a.cluster_id.cmp(&b.cluster_id)));
    let views: Vec<ClusterView> = clusters
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let canon = cx.skill.get(c.cluster_id.as_str()).copied();
            let with_diff = k < cx.options.diff_clusters;
            let copies: Vec<CopyView> = c
                .members
                .iter()
                .filter(|id| **id != c.cluster_id)
                .map(|id| {
                    let s = cx.skill.get(id.as_str()).copied();
                    let m = member_of.get(id.as_str());
                    let d = match (with_diff, canon, s) {
                        (true, Some(a), Some(b)) => diff::lines(a, b, cx.options.diff_lines),
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
    let shown = views.iter().filter(|c| c.has_diff).count();
    (views, shown)
}

/// Quarantined skills, lowest score first.
fn quarantined(cx: &Ctx<'_>) -> Vec<Quarantined> {
    let mut q: Vec<&skg_model::Score> = cx.input.scores.iter().filter(|s| s.quarantined).collect();
    q.sort_by(|a, b| a.slop_score.total_cmp(&b.slop_score).then(a.id.cmp(&b.id)));
    q.iter()
        .map(|s| Quarantined {
            at: cx.loc(s.id.as_str()),
            score: format!("{:.3}", s.slop_score),
            reasons: s.reasons.clone(),
        })
        .collect()
}

/// The graph picture, isolated skills, god nodes and the union's communities; with the degree
/// of every node and the community sizes (for the charts).
fn graph_view(cx: &Ctx<'_>) -> (GraphView, Vec<usize>, Vec<u32>) {
    let input = cx.input;
    let g = graph::Graph::build(input, cx.options);
    let labels: BTreeMap<u32, String> = input
        .communities
        .iter()
        .filter(|c| c.scope == ALL_SCOPE)
        .filter_map(|c| c.label.clone().map(|l| (c.community, l)))
        .collect();
    let node_names: HashMap<&str, (&str, &str)> = input
        .skills
        .iter()
        .map(|s| (s.id.as_str(), (s.name.as_str(), s.registry.as_str())))
        .collect();
    let (svg, drawn, left_out) = graph::picture(&g, &node_names, &labels, cx.options);
    let degrees: Vec<usize> = (0..g.nodes.len()).map(|i| g.degree(i)).collect();
    let mut communities: Vec<&skg_model::CommunityRow> = input
        .communities
        .iter()
        .filter(|c| c.scope == ALL_SCOPE)
        .collect();
    communities.sort_by(|a, b| b.size.cmp(&a.size).then(a.community.cmp(&b.community)));
    let sizes: Vec<u32> = communities.iter().map(|c| c.size).collect();
    let community_views = communities
        .iter()
        .filter(|c| c.size > 1)
        .map(|c| community_view(cx, c))
        .collect();
    let all = cx.all;
    let view = GraphView {
        svg,
        drawn,
        left_out,
        isolated: all
            .map(|m| m.isolated_nodes.iter().map(|id| cx.loc(id)).collect())
            .unwrap_or_default(),
        god_nodes: all.map(|m| m.god_nodes.clone()).unwrap_or_default(),
        communities: community_views,
    };
    (view, degrees, sizes)
}

/// A community with its registries (most members first) and a sample of member names.
fn community_view(cx: &Ctx<'_>, c: &skg_model::CommunityRow) -> CommunityView {
    let mut by_reg: BTreeMap<&str, usize> = BTreeMap::new();
    for m in &c.members {
        if let Some(s) = cx.skill.get(m.as_str()) {
            *by_reg.entry(s.registry.as_str()).or_default() += 1;
        }
    }
    let mut regs: Vec<(&str, usize)> = by_reg.into_iter().collect();
    regs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    CommunityView {
        id: c.community,
        size: c.size,
        label: c.label.clone().unwrap_or_default(),
        support: c.support.map(|x| format!("{x:.2}")).unwrap_or_default(),
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
                cx.skill
                    .get(m.as_str())
                    .map_or_else(|| m.clone(), |s| s.name.clone())
            })
            .collect(),
    }
}

/// Diagnostics, worst first, then by place; and the count of each (code, severity), most
/// frequent first.
fn diagnostics(input: &Input<'_>) -> (Vec<DiagRow>, Vec<(String, String, usize)>) {
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
    let mut codes: Vec<(String, String, usize)> =
        by_code.into_iter().map(|((c, s), n)| (c, s, n)).collect();
    codes.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    let rows = diags
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
    (rows, codes)
}

fn reg<'m>(regs: &'m mut BTreeMap<String, RegistryRow>, name: &str) -> &'m mut RegistryRow {
    regs.entry(name.to_owned()).or_insert_with(|| RegistryRow {
        name: name.to_owned(),
        ..RegistryRow::default()
    })
}
