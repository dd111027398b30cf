//! `cargo bench -p skg --bench route`: latency of routing one task — query embedding, hybrid
//! retrieval and the bundle — on an index folder named by `SKG_BENCH_INDEX` (build one over
//! ../shared/registries with `skg audit` + `skg index build`), with the corpus dev queries
//! (../shared/bench/queries_dev.jsonl) as tasks. Prints p50 / p95 / p99 over every task once,
//! then lets criterion measure the median of a whole pass over the tasks.
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files on disk"
)]
#![allow(
    clippy::print_stderr,
    reason = "a bench says what it skipped and its percentiles"
)]

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use criterion::{Criterion, criterion_group, criterion_main};

/// The binary's allocator (`src/main.rs`), so the bench times what the gateway runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use skg_index::{Index, Query};

fn tasks(root: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join("../shared/bench/queries_dev.jsonl")) else {
        return vec![
            "profile an unfamiliar csv file".to_owned(),
            "the pipeline is red, is it flaky".to_owned(),
        ];
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["query"].as_str().map(str::to_owned))
        .collect()
}

/// "p50 … ms, p95 … ms, p99 … ms" of `ms`, nearest rank (`skg_index::Latency`, as `skg eval`
/// reports them).
fn percentiles(ms: Vec<f64>) -> String {
    let l = skg_index::Latency::of(ms);
    format!(
        "p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms",
        l.p50, l.p95, l.p99
    )
}

/// A named route timing: milliseconds of one task.
type Timed<'a> = (&'a str, &'a dyn Fn(&str) -> f64);

fn benches(c: &mut Criterion) {
    let Some(dir) = std::env::var_os("SKG_BENCH_INDEX").map(PathBuf::from) else {
        eprintln!("skipped: set SKG_BENCH_INDEX to an index folder (skg index build)");
        return;
    };
    let index = Index::open(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    // The graph that embedded the index (a tool catalog's is the tools graph).
    let model = skg_embed::locate()
        .and_then(|d| d.for_identity(index.manifest.model.as_deref()))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut embedder = skg_embed::Embedder::load(&model, 2).unwrap_or_else(|e| panic!("{e}"));
    if index.manifest.model.as_deref() != Some(embedder.identity()) {
        // The timings hold; the answers would not (the gateway would answer BM25 only).
        eprintln!(
            "warning: {} was embedded by {:?}, the installed model is {}",
            dir.display(),
            index.manifest.model,
            embedder.identity()
        );
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tasks = tasks(&root);
    // Where the time goes: each part alone, with the query vectors computed beforehand.
    let query_embeddings: Vec<skg_index::QueryEmbedding> = tasks
        .iter()
        .map(|t| {
            let e = embedder
                .embed_with_tokens(t)
                .unwrap_or_else(|e| panic!("{e}"));
            skg_index::QueryEmbedding {
                vector: e.vector,
                tokens: e.tokens,
            }
        })
        .collect();
    let vectors: Vec<&[f32]> = query_embeddings
        .iter()
        .map(|e| e.vector.as_slice())
        .collect();
    let part = |name: &str, f: &mut dyn FnMut(usize)| {
        let ms: Vec<f64> = (0..tasks.len())
            .map(|i| {
                let start = Instant::now();
                f(i);
                start.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        eprintln!("  {name:<28} {}", percentiles(ms));
    };
    part("query embedding", &mut |i| {
        std::hint::black_box(embedder.embed(&[tasks[i].as_str()]).ok());
    });
    part("query embedding with token states", &mut |i| {
        std::hint::black_box(embedder.embed_with_tokens(&tasks[i]).ok());
    });
    let mut one_thread = skg_embed::Embedder::load(&model, 1).unwrap_or_else(|e| panic!("{e}"));
    part("query embedding, 1 thread", &mut |i| {
        std::hint::black_box(one_thread.embed(&[tasks[i].as_str()]).ok());
    });
    drop(one_thread);
    part("bm25 retrieval (whole skills)", &mut |i| {
        let mut q = Query::new(&tasks[i], None, 5);
        q.mode = skg_index::Mode::Bm25;
        std::hint::black_box(index.search(&q).ok());
    });
    part("bm25 retrieval, best document per skill", &mut |i| {
        let mut q = Query::new(&tasks[i], None, 5);
        q.mode = skg_index::Mode::Bm25;
        q.bm25_unit = skg_index::Bm25Unit::Document;
        std::hint::black_box(index.search(&q).ok());
    });
    part(
        &format!(
            "dense exact scan ({} vectors)",
            index.manifest.counts.get("vectors").unwrap_or(&0)
        ),
        &mut |i| {
            let mut q = Query::new(&tasks[i], Some(vectors[i]), 5);
            q.mode = skg_index::Mode::Dense;
            std::hint::black_box(index.search(&q).ok());
        },
    );
    part("hybrid retrieval + bundle, no second stage", &mut |i| {
        let mut q = Query::new(&tasks[i], Some(vectors[i]), 5);
        q.late = skg_index::Late::OFF;
        let a = index.search(&q).unwrap_or_else(|e| panic!("{e}"));
        std::hint::black_box(skg_index::route(&index, &a, Some(8_000)));
    });
    part(
        &format!(
            "hybrid + second stage ({} card tokens) + bundle",
            index.manifest.counts.get("card_tokens").unwrap_or(&0)
        ),
        &mut |i| {
            let mut q = Query::new(&tasks[i], Some(vectors[i]), 5);
            q.tokens = Some(query_embeddings[i].tokens.as_slice());
            let a = index.search(&q).unwrap_or_else(|e| panic!("{e}"));
            std::hint::black_box(skg_index::route(&index, &a, Some(8_000)));
        },
    );
    // The second stage's own cost, paired: each task with and without it back to back, ten
    // rounds, so that the machine's slower minutes weigh on both sides alike.
    if index.has_card_tokens() {
        let hybrid = |i: usize, late: bool| {
            let mut q = Query::new(&tasks[i], Some(vectors[i]), 5);
            q.tokens = Some(query_embeddings[i].tokens.as_slice());
            if !late {
                q.late = skg_index::Late::OFF;
            }
            let start = Instant::now();
            std::hint::black_box(index.search(&q).ok());
            start.elapsed().as_secs_f64() * 1000.0
        };
        let mut extra = Vec::new();
        for _ in 0..10 {
            for i in 0..tasks.len() {
                let without = hybrid(i, false);
                extra.push(hybrid(i, true) - without);
            }
        }
        eprintln!(
            "  {:<28} {} (paired difference, 10 rounds)",
            "second stage alone",
            percentiles(extra)
        );
    }
    let mut route = |task: &str| {
        let e = embedder
            .embed_with_tokens(task)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut q = Query::new(task, Some(&e.vector), 5);
        q.tokens = Some(e.tokens.as_slice());
        let answer = index.search(&q).unwrap_or_else(|e| panic!("{e}"));
        skg_index::route(&index, &answer, Some(8_000))
    };
    // Warm up, then one timed pass for the percentiles.
    for t in tasks.iter().take(5) {
        route(t);
    }
    let ms: Vec<f64> = tasks
        .iter()
        .map(|t| {
            let start = Instant::now();
            std::hint::black_box(route(t));
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    eprintln!(
        "route over {} ({} tasks): {}",
        dir.display(),
        ms.len(),
        percentiles(ms)
    );
    // As the gateway runs it, over its pool of sessions (`skg_embed::Pool`, as `skg serve` loads
    // it: one single-threaded session per compute slot, and a solo session on as many threads,
    // at most one per core, for a query embedded while no other request computes — always, one
    // request at a time), and over a lone single-threaded session (the gateway before the solo
    // session) for comparison; embedded first, or on a second thread while BM25 runs
    // (`Index::search_embedding`). The two embedders alternate task by task, so the machine's
    // drift falls on both alike.
    let pool = skg_embed::Pool::load(&model, skg_serve::defaults::compute_slots())
        .unwrap_or_else(|e| panic!("{e}"));
    let single = std::sync::Mutex::new(
        skg_embed::Embedder::load(&model, 1).unwrap_or_else(|e| panic!("{e}")),
    );
    let as_query = |e: skg_embed::TokenEmbedding| skg_index::QueryEmbedding {
        vector: e.vector,
        tokens: e.tokens,
    };
    let single_one = |task: &str| -> Option<skg_index::QueryEmbedding> {
        single
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .embed_with_tokens(task)
            .ok()
            .map(as_query)
    };
    // One request at a time the gateway holds the only compute slot taken: `embed_alone`.
    let pool_one = |task: &str| pool.embed_alone_with_tokens(task).ok().map(as_query);
    let index = &index;
    let then_search = |embed: &dyn Fn(&str) -> Option<skg_index::QueryEmbedding>, task: &str| {
        let start = Instant::now();
        let v = embed(task);
        let mut q = Query::new(task, v.as_ref().map(|e| e.vector.as_slice()), 5);
        q.tokens = v.as_ref().map(|e| e.tokens.as_slice());
        let answer = index.search(&q).unwrap_or_else(|e| panic!("{e}"));
        std::hint::black_box(skg_index::route(index, &answer, Some(8_000)));
        start.elapsed().as_secs_f64() * 1000.0
    };
    let beside = |embed: &(dyn Fn(&str) -> Option<skg_index::QueryEmbedding> + Sync),
                  unit: skg_index::Bm25Unit,
                  task: &str| {
        let start = Instant::now();
        let mut q = Query::new(task, None, 5);
        q.mode = skg_index::Mode::Hybrid;
        q.bm25_unit = unit;
        let (answer, _) = index
            .search_embedding(&q, || embed(task))
            .unwrap_or_else(|e| panic!("{e}"));
        std::hint::black_box(skg_index::route(index, &answer, Some(8_000)));
        start.elapsed().as_secs_f64() * 1000.0
    };
    let skill = skg_index::Bm25Unit::Skill;
    let runs: [Timed<'_>; 5] = [
        ("route, 1-thread session, embed then search", &|t| {
            then_search(&single_one, t)
        }),
        ("route, 1-thread session, embedding beside BM25", &|t| {
            beside(&single_one, skill, t)
        }),
        ("route, the gateway's pool, embed then search", &|t| {
            then_search(&pool_one, t)
        }),
        ("route, the gateway's pool, embedding beside BM25", &|t| {
            beside(&pool_one, skill, t)
        }),
        ("route, as above, BM25 by best document per skill", &|t| {
            beside(&pool_one, skg_index::Bm25Unit::Document, t)
        }),
    ];
    let mut ms: Vec<Vec<f64>> = vec![Vec::new(); runs.len()];
    for t in tasks.iter().take(5) {
        for (_, f) in &runs {
            f(t);
        }
    }
    for t in &tasks {
        for ((_, f), ms) in runs.iter().zip(&mut ms) {
            ms.push(f(t));
        }
    }
    for ((name, _), ms) in runs.iter().zip(ms) {
        eprintln!("  {name:<52} {}", percentiles(ms));
    }
    let embed_one = &pool_one;
    // The same route with every skill on the tools' field weights (the packages' own before stop
    // 35) and on its kind's defaults, interleaved task by task so the machine's drift falls on
    // both alike: what the packages' weights cost or save.
    // One request at a time the gateway is alone: it embeds on the solo session, then searches
    // (BM25 beside a two-thread embedding only competed with it; stop 38).
    let weighted = |weights: Option<skg_index::FieldWeights>, task: &str| {
        let start = Instant::now();
        let v = embed_one(task);
        let mut q = Query::new(task, v.as_ref().map(|e| e.vector.as_slice()), 5);
        q.tokens = v.as_ref().map(|e| e.tokens.as_slice());
        q.mode = skg_index::Mode::Hybrid;
        q.weights = weights;
        let answer = index.search(&q).unwrap_or_else(|e| panic!("{e}"));
        std::hint::black_box(skg_index::route(index, &answer, Some(8_000)));
        start.elapsed().as_secs_f64() * 1000.0
    };
    let (mut by_kind, mut as_tools) = (Vec::new(), Vec::new());
    for round in 0..3 {
        for t in &tasks {
            // Alternate which goes first.
            if round % 2 == 0 {
                by_kind.push(weighted(None, t));
                as_tools.push(weighted(Some(skg_index::FieldWeights::TOOL), t));
            } else {
                as_tools.push(weighted(Some(skg_index::FieldWeights::TOOL), t));
                by_kind.push(weighted(None, t));
            }
        }
    }
    for (name, ms) in [
        ("route as the gateway, field weights by kind", by_kind),
        ("route as the gateway, every skill on 0.5/1/2", as_tools),
    ] {
        eprintln!("  {name:<52} {} (3 rounds)", percentiles(ms));
    }
    let mut group = c.benchmark_group("route");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("one pass over the tasks", |b| {
        b.iter(|| {
            for t in &tasks {
                std::hint::black_box(route(t));
            }
        });
    });
    group.finish();
}

criterion_group!(route_benches, benches);
criterion_main!(route_benches);
