//! Listings for agent hosts: the skills to show an agent within a character budget.
//!
//! Hosts list every installed skill's name and description in the prompt, under a budget (Claude
//! Code: about 1 % of the context, ≈ 8,000 characters, each description cut at 250), and drop
//! what does not fit. A listing here is packed from an order of skills: each skill in turn, with
//! its `depends_on` closure right after it (a listed skill whose dependency is not listed fails
//! when used), goes in when the whole group fits what is left of the budget, else the group is
//! skipped and smaller ones further down may still fit. The budget is never exceeded. The order
//! is the task's ranking (most relevant first), or, without a task, the catalog by name — the
//! same task over the same index gives the same bytes, so a host's prompt cache survives.

use std::collections::{BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::{Index, Scope};

/// Claude Code's listing budget, in characters.
pub const DEFAULT_BUDGET_CHARS: usize = 8_000;
/// Claude Code's cut of each description, in characters.
pub const DEFAULT_DESCRIPTION_CHARS: usize = 250;

/// How a listing is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ListingOptions {
    /// Characters the listing's lines may take in all.
    pub budget_chars: usize,
    /// Characters of each description (longer ones end in `…`).
    pub description_chars: usize,
}

impl Default for ListingOptions {
    fn default() -> ListingOptions {
        ListingOptions {
            budget_chars: DEFAULT_BUDGET_CHARS,
            description_chars: DEFAULT_DESCRIPTION_CHARS,
        }
    }
}

/// Why a skill is listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ListedFor {
    /// Ranked for the task (rank from 1).
    Ranked {
        /// Its rank.
        rank: usize,
    },
    /// A `depends_on` target of a listed skill.
    Dependency {
        /// The listed skill that needs it.
        of: String,
    },
    /// No task: the catalog in name order.
    Catalog,
}

/// One listed skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listed {
    /// Position in [`Index::skills`].
    pub skill: u32,
    /// Skill id.
    pub id: String,
    /// Why it is listed.
    pub reason: ListedFor,
    /// Its line in the markdown block (`- name: description`, no newline).
    pub line: String,
}

/// A listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listing {
    /// The listed skills, in listing order.
    pub skills: Vec<Listed>,
    /// Characters of the markdown block (every line and its newline).
    pub chars: usize,
    /// The cut applied.
    pub options: ListingOptions,
    /// Skills the order offered that did not fit (or whose dependencies could not be listed).
    pub left_out: usize,
}

impl Listing {
    /// The markdown block a host inserts: one `- name: description` line per skill.
    pub fn markdown(&self) -> String {
        let mut out = String::with_capacity(self.chars);
        for l in &self.skills {
            out.push_str(&l.line);
            out.push('\n');
        }
        out
    }
}

/// `text` cut to `max` characters (the last one `…` when cut), on one line.
pub fn cut(text: &str, max: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    if max == 0 {
        return String::new();
    }
    let mut s: String = one_line.chars().take(max - 1).collect();
    s.push('…');
    s
}

fn line(index: &Index, skill: u32, options: &ListingOptions) -> String {
    let s = &index.skills[skill as usize];
    format!(
        "- {}: {}",
        cut(&s.name, 64),
        cut(&s.description, options.description_chars)
    )
}

/// Packs a listing from `order` (skills, most wanted first): each with its `depends_on` closure,
/// while the group fits. Skills outside `scope`, unsafe ones and those already listed are passed
/// over; a group whose dependencies are unsafe, outside `scope` or not in the index is left out.
pub fn pack(
    index: &Index,
    order: &[(u32, ListedFor)],
    options: &ListingOptions,
    scope: Option<&Scope>,
) -> Listing {
    let visible =
        |s: u32| scope.is_none_or(|sc| sc.contains(s)) && !index.skills[s as usize].r#unsafe;
    let mut listed: BTreeSet<u32> = BTreeSet::new();
    let mut skills = Vec::new();
    let mut chars = 0usize;
    let mut left_out = 0usize;
    for (skill, reason) in order {
        if listed.contains(skill) || !visible(*skill) {
            continue;
        }
        // The group: the skill, then its dependency closure (breadth first), not yet listed.
        let mut group = vec![(*skill, reason.clone())];
        let mut in_group: BTreeSet<u32> = BTreeSet::from([*skill]);
        let mut queue = VecDeque::from([*skill]);
        let mut complete = true;
        while let Some(x) = queue.pop_front() {
            let entry = &index.skills[x as usize];
            for d in &entry.depends_on {
                match index.skill(d.as_str()) {
                    Some((di, _)) if visible(di) => {
                        if !listed.contains(&di) && in_group.insert(di) {
                            group.push((
                                di,
                                ListedFor::Dependency {
                                    of: entry.id.to_string(),
                                },
                            ));
                            queue.push_back(di);
                        }
                    }
                    _ => complete = false,
                }
            }
        }
        let lines: Vec<String> = group
            .iter()
            .map(|(s, _)| line(index, *s, options))
            .collect();
        let cost: usize = lines.iter().map(|l| l.chars().count() + 1).sum();
        if !complete || chars + cost > options.budget_chars {
            left_out += 1;
            continue;
        }
        chars += cost;
        for ((s, reason), line) in group.into_iter().zip(lines) {
            listed.insert(s);
            skills.push(Listed {
                skill: s,
                id: index.skills[s as usize].id.to_string(),
                reason,
                line,
            });
        }
    }
    Listing {
        skills,
        chars,
        options: *options,
        left_out,
    }
}

/// The catalog without a task: every routable skill (or, with `include_quarantined`, every
/// non-alias) by name, then id.
pub fn catalog_order(index: &Index, include_quarantined: bool) -> Vec<(u32, ListedFor)> {
    let mut all: Vec<u32> = (0..index.skills.len())
        .filter_map(|i| u32::try_from(i).ok())
        .filter(|&i| {
            let s = &index.skills[i as usize];
            s.routable() || (include_quarantined && s.alias_of.is_none() && !s.r#unsafe)
        })
        .collect();
    all.sort_by(|&a, &b| {
        let (x, y) = (&index.skills[a as usize], &index.skills[b as usize]);
        x.name
            .to_lowercase()
            .cmp(&y.name.to_lowercase())
            .then_with(|| x.id.cmp(&y.id))
    });
    all.into_iter().map(|s| (s, ListedFor::Catalog)).collect()
}

/// The catalog by slop score, best first (unscored skills last), then by name: the other
/// task-free baseline.
pub fn quality_order(index: &Index, include_quarantined: bool) -> Vec<(u32, ListedFor)> {
    let mut all = catalog_order(index, include_quarantined);
    all.sort_by(|a, b| {
        let score = |s: u32| {
            index.skills[s as usize]
                .slop_score
                .unwrap_or(f64::NEG_INFINITY)
        };
        score(b.0).total_cmp(&score(a.0))
    });
    all
}

/// A ranking's order (rank from 1), followed by the rest of the catalog by name so a listing
/// fills its budget when the ranking runs out.
pub fn ranked_order(
    index: &Index,
    ranking: &[u32],
    include_quarantined: bool,
) -> Vec<(u32, ListedFor)> {
    let mut seen: BTreeSet<u32> = BTreeSet::new();
    let mut out: Vec<(u32, ListedFor)> = ranking
        .iter()
        .enumerate()
        .filter(|(_, s)| seen.insert(**s))
        .map(|(r, &s)| (s, ListedFor::Ranked { rank: r + 1 }))
        .collect();
    out.extend(
        catalog_order(index, include_quarantined)
            .into_iter()
            .filter(|(s, _)| !seen.contains(s)),
    );
    out
}

/// Skills ranked for a task before a listing is packed from them.
pub const RANKED_CANDIDATES: usize = 100;

/// One way of ordering the catalog, measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListingRow {
    /// The order: `relevance (hybrid)`, `relevance (bm25)`, `by name`, `by slop score`.
    pub order: String,
    /// Queries whose gold skill (any) is listed.
    pub gold_listed: f64,
    /// Mean skills listed.
    pub mean_listed: f64,
    /// Mean characters used.
    pub mean_chars: f64,
    /// Listings over the budget or with a description over the cut (must be 0).
    pub violations: usize,
}

/// What `skg eval --listing` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListingReport {
    /// The cut.
    pub options: ListingOptions,
    /// Queries with a resolved gold skill.
    pub queries: usize,
    /// Routable skills in the catalog.
    pub catalog: usize,
    /// One row per order.
    pub rows: Vec<ListingRow>,
}

impl std::fmt::Display for ListingReport {
    fn fmt(&self, o: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            o,
            "\nlisting within {} characters (descriptions cut at {}), {} queries, catalog of {} skills:",
            self.options.budget_chars, self.options.description_chars, self.queries, self.catalog
        )?;
        writeln!(
            o,
            "  {:<20} {:>12} {:>12} {:>11} {:>11}",
            "order", "gold listed", "skills", "chars", "violations"
        )?;
        for r in &self.rows {
            writeln!(
                o,
                "  {:<20} {:>12.3} {:>12.1} {:>11.0} {:>11}",
                r.order, r.gold_listed, r.mean_listed, r.mean_chars, r.violations
            )?;
        }
        Ok(())
    }
}

/// Whether a listing keeps its cut: the budget, and every description within its length.
pub fn within_cut(index: &Index, l: &Listing) -> bool {
    l.chars <= l.options.budget_chars
        && l.markdown().chars().count() == l.chars
        && l.skills.iter().all(|x| {
            let name = crate::listing::cut(&index.skills[x.skill as usize].name, 64);
            x.line.chars().count() <= name.chars().count() + 4 + l.options.description_chars
        })
}

/// Measures listings on judged queries: for each query, the share whose gold skill is listed
/// when the listing is packed from the task's ranking (each mode of `options`), from the catalog
/// by name, and from the catalog by slop score.
///
/// # Errors
/// A query cannot be embedded or searched.
pub fn evaluate_listing(
    index: &Index,
    queries: &[crate::JudgedQuery],
    options: &crate::EvalOptions,
    cut: &ListingOptions,
    embed: &mut crate::EmbedFn<'_>,
) -> crate::Result<ListingReport> {
    let (judged, _) = crate::judged::judge_all(index, queries);
    let with_gold: Vec<(usize, &crate::Judged)> = judged
        .iter()
        .enumerate()
        .filter(|(_, j)| !j.gold.is_empty())
        .collect();
    let mut rows = Vec::new();
    let mut measure = |name: String, listings: &mut dyn FnMut(usize) -> crate::Result<Listing>| {
        let mut row = ListingRow {
            order: name,
            gold_listed: 0.0,
            mean_listed: 0.0,
            mean_chars: 0.0,
            violations: 0,
        };
        for &(i, j) in &with_gold {
            let l = listings(i)?;
            row.gold_listed +=
                f64::from(u8::from(l.skills.iter().any(|x| j.gold.contains(&x.skill))));
            row.mean_listed += l.skills.len() as f64;
            row.mean_chars += l.chars as f64;
            row.violations += usize::from(!within_cut(index, &l));
        }
        let n = with_gold.len().max(1) as f64;
        row.gold_listed /= n;
        row.mean_listed /= n;
        row.mean_chars /= n;
        rows.push(row);
        Ok::<(), crate::Error>(())
    };
    for &mode in &options.modes {
        let mut by_task = |i: usize| -> crate::Result<Listing> {
            let q = &queries[i];
            let vector = crate::judged::query_vector(index, mode, &q.query, embed)?;
            let mut query = options.query(&q.query, vector.as_ref(), mode, RANKED_CANDIDATES);
            // A listing keeps what the gateway's default floor keeps.
            query.min_score = crate::Query::DEFAULT_MIN_SCORE;
            let answer = index.search(&query)?;
            let ranking: Vec<u32> = answer.hits.iter().map(|h| h.skill).collect();
            Ok(pack(
                index,
                &ranked_order(index, &ranking, options.include_quarantined),
                cut,
                None,
            ))
        };
        measure(format!("relevance ({mode})"), &mut by_task)?;
    }
    let by_name = pack(
        index,
        &catalog_order(index, options.include_quarantined),
        cut,
        None,
    );
    measure("by name".to_owned(), &mut |_| Ok(by_name.clone()))?;
    let by_quality = pack(
        index,
        &quality_order(index, options.include_quarantined),
        cut,
        None,
    );
    measure("by slop score".to_owned(), &mut |_| Ok(by_quality.clone()))?;
    Ok(ListingReport {
        options: *cut,
        queries: with_gold.len(),
        catalog: catalog_order(index, options.include_quarantined).len(),
        rows,
    })
}

/// The listing as a bundle in listing order (what `adapt::export` writes as a folder of skills):
/// ranked and catalog skills as retrieved (rank = position in the listing), dependencies as
/// dependencies.
pub fn as_bundle(index: &Index, l: &Listing) -> crate::Bundle {
    let plan: Vec<crate::BundleSkill> = l
        .skills
        .iter()
        .enumerate()
        .map(|(i, x)| crate::BundleSkill {
            skill: x.skill,
            id: x.id.clone(),
            reason: match &x.reason {
                ListedFor::Dependency { of } => crate::Reason::Dependency { of: of.clone() },
                ListedFor::Ranked { .. } | ListedFor::Catalog => {
                    crate::Reason::Retrieved { rank: i + 1 }
                }
            },
            tokens: index.skills[x.skill as usize].tokens,
        })
        .collect();
    let tokens = plan.iter().map(|s| u64::from(s.tokens)).sum();
    crate::Bundle {
        plan,
        cycles: Vec::new(),
        type_errors: Vec::new(),
        missing: Vec::new(),
        withheld: 0,
        tokens,
        token_budget: None,
        overrun: 0,
        catalog_tokens: index.catalog_tokens(),
    }
}
