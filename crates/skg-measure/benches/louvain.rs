//! Louvain and the full metric computation on generated graphs with planted communities
//! (10k and 100k nodes, mean degree ~4): `cargo bench -p skg-measure`.

use criterion::{Criterion, criterion_group, criterion_main};
use skg_measure::{Input, Options, communities, measure};
use skg_model::{Edge, EdgeKind, EdgeSource, Skill};

fn skill(i: usize) -> Skill {
    let root = format!("s{i}");
    let mut s = Skill::from_text(&format!("r{}", i % 5), &root, &root, "", "");
    s.tags = vec![format!("t{}", i / 40)];
    s
}

/// `n` skills in communities of 40; ~2 edges per node inside its community, a few across.
fn graph(n: usize) -> (Vec<Skill>, Vec<Edge>) {
    let skills: Vec<Skill> = (0..n).map(skill).collect();
    let mut state = 7u64;
    let mut next = |m: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(state >> 33).unwrap_or(0) % m
    };
    let mut edges = Vec::new();
    for i in 0..n {
        for _ in 0..2 {
            let j = if next(10) == 0 {
                next(n)
            } else {
                (i / 40) * 40 + next(40)
            };
            if j < n && j != i {
                edges.push(Edge {
                    src: skills[i].id.clone(),
                    dst: skills[j].id.clone(),
                    kind: EdgeKind::DependsOn,
                    confidence: 1.0,
                    source: EdgeSource::Inferred,
                    extractor: "bench".into(),
                    evidence: vec![],
                });
            }
        }
    }
    (skills, edges)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("measure");
    group.sample_size(10);
    for n in [10_000usize, 100_000] {
        let (skills, edges) = graph(n);
        let input = Input {
            skills: &skills,
            edges: &edges,
            members: None,
            scores: None,
        };
        let opts = Options::default();
        let skg = skg_measure::build(&input, &opts);
        let nodes: Vec<_> = skg.graph.node_indices().collect();
        group.bench_function(format!("louvain/{n}"), |b| {
            b.iter(|| communities(&skg, &nodes, 42).map_or(0, |c| c.len()));
        });
        if n == 10_000 {
            group.bench_function(format!("measure_all_scopes/{n}"), |b| {
                b.iter(|| measure(&input, &opts).map_or(0, |(_, m)| m.metrics.len()));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
