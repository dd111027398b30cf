//! Routing: from retrieved skills to a small, dependency-complete, ordered bundle.
//!
//! 1. The retrieved skills (a search [`Answer`]'s hits) are the seeds.
//! 2. Their `depends_on` closure is added — always, even past the token budget (the overrun is
//!    reported): a bundle that misses a dependency fails at run time, one over budget does not.
//! 3. With a token budget, `complements` and `co_used_with` of the seeds are added, best seed
//!    first, while the budget allows (without one, none are: the bundle stays minimal).
//! 4. The plan orders the bundle dependencies first (a topological order of `depends_on`; ties
//!    by retrieval rank, then id). Skills on a dependency cycle are reported as a cycle and
//!    placed together where the cycle is reached, never looped over.
//! 5. Declared capability types are checked along the plan: every `inputs` type of a step must be
//!    an `outputs` type of an earlier step when any earlier step declares outputs.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use petgraph::{algo::tarjan_scc, graph::DiGraph};
use serde::{Deserialize, Serialize};

use crate::{Answer, Index, Scope};

/// Why a skill is in the bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Reason {
    /// Retrieved for the task (rank from 1).
    Retrieved {
        /// Rank in the answer.
        rank: usize,
    },
    /// A `depends_on` target of a bundle skill.
    Dependency {
        /// The skill that needs it.
        of: String,
    },
    /// A `complements` / `co_used_with` target of a retrieved skill, within the budget.
    Complement {
        /// The retrieved skill it complements.
        of: String,
    },
}

/// One skill of a bundle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BundleSkill {
    /// Position in [`Index::skills`].
    pub skill: u32,
    /// Skill id.
    pub id: String,
    /// Why it is here.
    pub reason: Reason,
    /// Its tokens.
    pub tokens: u32,
}

/// A routed bundle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bundle {
    /// The skills, in plan order (dependencies first).
    pub plan: Vec<BundleSkill>,
    /// Dependency cycles found among the bundle's skills (ids), each reported once.
    pub cycles: Vec<Vec<String>>,
    /// Broken capability chains, as sentences.
    pub type_errors: Vec<String>,
    /// Dependencies named by a bundle skill that the index does not hold (or holds as unsafe:
    /// withheld).
    pub missing: Vec<String>,
    /// Dependencies outside the caller's scope ([`route_within`]): left out and not named, so a
    /// scoped caller learns no id it may not see — only that the bundle is incomplete.
    pub withheld: usize,
    /// Tokens of the bundle.
    pub tokens: u64,
    /// The budget asked for.
    pub token_budget: Option<u64>,
    /// Tokens over the budget (dependencies are kept past it).
    pub overrun: u64,
    /// Tokens of every routable skill the caller sees (what injecting the whole catalog would
    /// cost; for a scoped caller, the catalog of its scope: [`Scope::catalog_tokens`]).
    pub catalog_tokens: u64,
}

/// The skills chosen so far, each with why, in the order they were chosen.
type Chosen = Vec<(u32, Reason)>;

/// Builds the bundle for an answer.
pub fn route(index: &Index, answer: &Answer, token_budget: Option<u64>) -> Bundle {
    route_within(index, answer, token_budget, None)
}

/// [`route`] for a caller that sees only `scope`: dependencies and complements outside it are
/// never added (dependencies are counted in [`Bundle::withheld`]).
pub fn route_within(
    index: &Index,
    answer: &Answer,
    token_budget: Option<u64>,
    scope: Option<&Scope>,
) -> Bundle {
    let visible = |s: u32| scope.is_none_or(|sc| sc.contains(s));
    let mut seen: BTreeSet<u32> = BTreeSet::new();
    let mut chosen: Chosen = Vec::new();
    for (r, h) in answer.hits.iter().enumerate() {
        if seen.insert(h.skill) {
            chosen.push((h.skill, Reason::Retrieved { rank: r + 1 }));
        }
    }
    let (missing, withheld) = dependency_closure(index, &mut chosen, &mut seen, &visible);
    let tokens_of = |s: u32| u64::from(index.skills[s as usize].tokens);
    let mut tokens: u64 = chosen.iter().map(|c| tokens_of(c.0)).sum();
    if let Some(budget) = token_budget {
        tokens = add_complements(
            index,
            answer,
            budget,
            tokens,
            (&mut chosen, &mut seen),
            &visible,
        );
    }
    let (order, cycles) = plan_order(index, &chosen);
    let plan: Vec<BundleSkill> = order
        .into_iter()
        .map(|i| {
            let (s, reason) = &chosen[i];
            let e = &index.skills[*s as usize];
            BundleSkill {
                skill: *s,
                id: e.id.to_string(),
                reason: reason.clone(),
                tokens: e.tokens,
            }
        })
        .collect();
    Bundle {
        tokens,
        overrun: token_budget.map_or(0, |b| tokens.saturating_sub(b)),
        token_budget,
        type_errors: type_errors(index, &plan),
        plan,
        cycles,
        missing: missing.into_iter().collect(),
        withheld,
        catalog_tokens: scope.map_or_else(|| index.catalog_tokens(), Scope::catalog_tokens),
    }
}

/// Adds the `depends_on` closure of the chosen skills, breadth first from the seeds in rank
/// order; returns the dependencies the index does not hold or withholds as unsafe, and how many
/// distinct dependencies are outside the caller's scope.
fn dependency_closure(
    index: &Index,
    chosen: &mut Chosen,
    seen: &mut BTreeSet<u32>,
    visible: &dyn Fn(u32) -> bool,
) -> (BTreeSet<String>, usize) {
    let mut missing = BTreeSet::new();
    let mut withheld = BTreeSet::new();
    let mut queue: VecDeque<u32> = chosen.iter().map(|c| c.0).collect();
    while let Some(s) = queue.pop_front() {
        let entry = &index.skills[s as usize];
        for d in &entry.depends_on {
            match index.skill(d.as_str()) {
                // Outside the caller's scope: counted, never named (not even when unsafe).
                Some((di, _)) if !visible(di) => {
                    withheld.insert(di);
                }
                // An unsafe dependency is withheld: the bundle says it is missing.
                Some((_, dep)) if dep.r#unsafe => {
                    missing.insert(d.to_string());
                }
                Some((di, _)) => {
                    if seen.insert(di) {
                        chosen.push((
                            di,
                            Reason::Dependency {
                                of: entry.id.to_string(),
                            },
                        ));
                        queue.push_back(di);
                    }
                }
                None => {
                    missing.insert(d.to_string());
                }
            }
        }
    }
    (missing, withheld.len())
}

/// Adds the retrieved skills' routable, visible complements (`complements`, then
/// `co_used_with`), best seed first, each with its own dependencies, while they fit the budget;
/// returns the tokens. A complement whose dependencies include an unsafe or invisible skill is
/// left out (it is optional; a bundle with a hole is not).
fn add_complements(
    index: &Index,
    answer: &Answer,
    budget: u64,
    mut tokens: u64,
    (chosen, seen): (&mut Chosen, &mut BTreeSet<u32>),
    visible: &dyn Fn(u32) -> bool,
) -> u64 {
    let tokens_of = |s: u32| u64::from(index.skills[s as usize].tokens);
    for h in &answer.hits {
        let entry = &index.skills[h.skill as usize];
        for c in entry.complements.iter().chain(&entry.co_used_with) {
            let Some((ci, ce)) = index.skill(c.as_str()) else {
                continue;
            };
            if seen.contains(&ci) || !ce.routable() || !visible(ci) {
                continue;
            }
            let mut add = vec![ci];
            let mut q = VecDeque::from([ci]);
            let mut local: BTreeSet<u32> = BTreeSet::from([ci]);
            let mut hole = false;
            while let Some(x) = q.pop_front() {
                for d in &index.skills[x as usize].depends_on {
                    if let Some((di, de)) = index.skill(d.as_str())
                        && !seen.contains(&di)
                        && local.insert(di)
                    {
                        hole |= de.r#unsafe || !visible(di);
                        add.push(di);
                        q.push_back(di);
                    }
                }
            }
            if hole {
                continue;
            }
            let cost: u64 = add.iter().map(|&x| tokens_of(x)).sum();
            if tokens + cost > budget {
                continue;
            }
            tokens += cost;
            for (n, x) in add.into_iter().enumerate() {
                seen.insert(x);
                let reason = if n == 0 {
                    Reason::Complement {
                        of: entry.id.to_string(),
                    }
                } else {
                    Reason::Dependency {
                        of: index.skills[ci as usize].id.to_string(),
                    }
                };
                chosen.push((x, reason));
            }
        }
    }
    tokens
}

/// The plan: positions in `chosen`, dependencies first (a topological order of `depends_on`
/// over the strongly connected components; ties by the order chosen), and the dependency cycles
/// found (ids, sorted), each reported once.
fn plan_order(index: &Index, chosen: &Chosen) -> (Vec<usize>, Vec<Vec<String>>) {
    let pos: HashMap<u32, usize> = chosen.iter().enumerate().map(|(i, c)| (c.0, i)).collect();
    let mut g: DiGraph<usize, ()> = DiGraph::new();
    let nodes: Vec<_> = (0..chosen.len()).map(|i| g.add_node(i)).collect();
    for (i, (s, _)) in chosen.iter().enumerate() {
        for d in &index.skills[*s as usize].depends_on {
            if let Some((di, _)) = index.skill(d.as_str())
                && let Some(&j) = pos.get(&di)
                && j != i
            {
                // Edge dependency → dependent.
                g.add_edge(nodes[j], nodes[i], ());
            }
        }
    }
    let sccs = tarjan_scc(&g);
    let mut component = vec![0usize; chosen.len()];
    let mut cycles = Vec::new();
    for (k, scc) in sccs.iter().enumerate() {
        for n in scc {
            component[g[*n]] = k;
        }
        if scc.len() > 1 {
            let mut ids: Vec<String> = scc
                .iter()
                .map(|n| index.skills[chosen[g[*n]].0 as usize].id.to_string())
                .collect();
            ids.sort();
            cycles.push(ids);
        }
    }
    cycles.sort();
    // Kahn over components; a ready component's members go out in chosen order.
    let mut indegree = vec![0usize; sccs.len()];
    let mut after: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for e in g.edge_indices() {
        if let Some((a, b)) = g.edge_endpoints(e) {
            let (ca, cb) = (component[g[a]], component[g[b]]);
            if ca != cb && after.entry(ca).or_default().insert(cb) {
                indegree[cb] += 1;
            }
        }
    }
    let first_member = |c: usize| -> usize {
        (0..chosen.len())
            .filter(|&i| component[i] == c)
            .min()
            .unwrap_or(usize::MAX)
    };
    let mut ready: BTreeSet<(usize, usize)> = (0..sccs.len())
        .filter(|&c| indegree[c] == 0)
        .map(|c| (first_member(c), c))
        .collect();
    let mut order = Vec::new();
    while let Some(&(f, c)) = ready.iter().next() {
        ready.remove(&(f, c));
        order.extend((0..chosen.len()).filter(|&i| component[i] == c));
        for &n in after.get(&c).into_iter().flatten() {
            indegree[n] -= 1;
            if indegree[n] == 0 {
                ready.insert((first_member(n), n));
            }
        }
    }
    (order, cycles)
}

/// Declared capability types along the plan: every `inputs` type of a step must be an
/// `outputs` type of an earlier step, once any earlier step declares outputs.
fn type_errors(index: &Index, plan: &[BundleSkill]) -> Vec<String> {
    let mut errors = Vec::new();
    let mut produced: BTreeSet<&str> = BTreeSet::new();
    for step in plan {
        let e = &index.skills[step.skill as usize];
        if !produced.is_empty() {
            for input in &e.inputs {
                if !produced.contains(input.as_str()) {
                    errors.push(format!(
                        "{} needs `{input}`, which no earlier step of the plan outputs (earlier outputs: {})",
                        e.id,
                        produced.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        }
        produced.extend(e.outputs.iter().map(String::as_str));
    }
    errors
}
