//! `cargo bench -p skg-extract`: extraction throughput (skills/s) on the bundled demo and, when
#![allow(clippy::print_stderr, reason = "a bench says which corpus it skipped")]
//! present, on the shared development corpus (../shared/registries, ~6,750 skills).

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skg_extract::{NoProgress, Options, extract, resolve_inputs};

fn bench_corpus(c: &mut Criterion, name: &str, path: &Path, samples: usize) {
    let Ok(sources) = resolve_inputs(&[path.to_path_buf()]) else {
        eprintln!("skipped {name}: {} is absent", path.display());
        return;
    };
    let skills = extract(&sources, &Options::default(), &NoProgress)
        .skills
        .len() as u64;
    let mut group = c.benchmark_group("extract");
    group
        .sample_size(samples)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(skills));
    group.bench_function(name, |b| {
        b.iter_with_large_drop(|| extract(&sources, &Options::default(), &NoProgress));
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    bench_corpus(c, "demo", &root.join("registries"), 20);
    bench_corpus(c, "shared", &root.join("../shared/registries"), 10);
}

criterion_group!(extract_benches, benches);
criterion_main!(extract_benches);
