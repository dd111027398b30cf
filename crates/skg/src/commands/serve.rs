//! `skg serve` (the HTTP gateway + MCP at `/mcp`) and `skg mcp` (MCP over stdio).

use std::{
    io::Write as _,
    path::PathBuf,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, SystemTime},
};

use anyhow::Context as _;
use skg_serve::{Config, Embed, Gateway};

use crate::{
    ExitStatus, GlobalArgs,
    args::{AuditArgs, Format, IndexBuildArgs, McpArgs, ServeArgs},
    progress::Bar,
};

/// Query embedding for the gateway: a few single-threaded sessions, used by whichever request
/// finds one free (retrieval runs on a bounded number of blocking threads anyway).
struct EmbedPool {
    slots: Vec<Mutex<skg_embed::Embedder>>,
    next: AtomicUsize,
}

impl std::fmt::Debug for EmbedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedPool")
            .field("slots", &self.slots.len())
            .finish_non_exhaustive()
    }
}

impl Embed for EmbedPool {
    fn model(&self) -> &str {
        skg_embed::MODEL_ID
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, String> {
        let n = self.slots.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let run = |e: &mut skg_embed::Embedder| {
            e.embed(&[text], 1)
                .map_err(|e| e.to_string())?
                .pop()
                .ok_or_else(|| "the model returned no vector".to_owned())
        };
        for i in 0..n {
            if let Ok(mut e) = self.slots[(start + i) % n].try_lock() {
                return run(&mut e);
            }
        }
        let mut e = self.slots[start]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        run(&mut e)
    }
}

/// The embedder, or why there is none.
fn embedder(bm25: bool, sessions: usize) -> (Option<Arc<dyn Embed>>, Vec<String>) {
    if bm25 {
        return (None, vec!["started with --bm25: BM25 only".to_owned()]);
    }
    let loaded = skg_embed::locate().and_then(|dir| {
        (0..sessions.max(1))
            .map(|_| skg_embed::Embedder::load(&dir, 1).map(Mutex::new))
            .collect::<Result<Vec<_>, _>>()
    });
    match loaded {
        Ok(slots) => (
            Some(Arc::new(EmbedPool {
                slots,
                next: AtomicUsize::new(0),
            })),
            Vec::new(),
        ),
        Err(e) => {
            let why = format!("no embedding model ({e}): BM25 only");
            tracing::warn!("{why}");
            (None, vec![why])
        }
    }
}

fn config(args: &ServeArgs, degraded: Vec<String>) -> Config {
    let mut cfg = Config::new(args.index.clone());
    cfg.admin_token = std::env::var("SKG_ADMIN_TOKEN")
        .ok()
        .filter(|t| !t.trim().is_empty());
    cfg.max_body_bytes = args.max_body_bytes;
    cfg.timeout = Duration::from_millis(args.timeout_ms);
    cfg.header_read_timeout = Duration::from_millis(args.header_timeout_ms);
    cfg.concurrency = args.concurrency;
    if let Some(c) = args.compute_slots {
        cfg.compute_slots = c;
    }
    cfg.max_k = args.max_k;
    cfg.query_cache = args.query_cache;
    cfg.allowed_origins.clone_from(&args.allow_origin);
    cfg.degraded = degraded;
    cfg
}

fn stderr_line(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

pub(crate) fn serve(args: &ServeArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let slots = args
        .compute_slots
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from));
    let (embed, degraded) = embedder(args.bm25, slots);
    let gw = Arc::new(
        Gateway::open(config(args, degraded), embed)
            .with_context(|| format!("cannot serve {}", args.index.display()))?,
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.addr)
            .await
            .with_context(|| format!("cannot listen on {}", args.addr))?;
        let addr = listener.local_addr()?;
        let loaded = gw.current();
        stderr_line(&format!(
            "skg serve: http://{addr} — index {} ({} routable skills, revision {}){}; MCP at /mcp; admin reload {}",
            args.index.display(),
            loaded.index.manifest.counts.get("routable").unwrap_or(&0),
            &loaded.index.manifest.content_hash[..12.min(loaded.index.manifest.content_hash.len())],
            {
                let d = gw.degraded(&loaded);
                if d.is_empty() { String::new() } else { format!(" — degraded: {}", d.join("; ")) }
            },
            if gw.config().admin_token.is_some() { "on" } else { "off (set SKG_ADMIN_TOKEN)" },
        ));
        drop(loaded);
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = if args.watch.is_empty() {
            None
        } else {
            let (gw, stop, args, quiet) = (
                Arc::clone(&gw),
                Arc::clone(&stop),
                args.clone(),
                global.quiet,
            );
            Some(std::thread::spawn(move || watch(&gw, &args, &stop, quiet)))
        };
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
            stderr_line("skg serve: shutting down (finishing in-flight requests)");
        };
        let served = skg_serve::serve(Arc::clone(&gw), listener, shutdown).await;
        stop.store(true, Ordering::Relaxed);
        if let Some(w) = watcher {
            let _ = w.join();
        }
        served.context("the server failed")
    })?;
    Ok(ExitStatus::Success)
}

/// A cheap fingerprint of the registries: every file's path, size and modification time.
fn fingerprint(paths: &[PathBuf]) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in paths {
        for e in walkdir::WalkDir::new(p)
            .sort_by_file_name()
            .into_iter()
            .flatten()
        {
            let Ok(meta) = e.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            e.path().hash(&mut h);
            meta.len().hash(&mut h);
            meta.modified()
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos())
                .hash(&mut h);
        }
    }
    h.finish()
}

/// `--watch`: when the registries change, re-run the audit (stages reused where their inputs
/// did not change), update the index package by package and reload it. A failed rebuild keeps
/// the served index and is logged.
fn watch(gw: &Arc<Gateway>, args: &ServeArgs, stop: &AtomicBool, quiet: u8) {
    let poll = Duration::from_secs_f64(args.poll_seconds.max(0.1));
    let audit_out = args.watch_audit.clone().unwrap_or_else(|| {
        let mut p = args.index.clone().into_os_string();
        p.push(".audit");
        PathBuf::from(p)
    });
    let mut seen = fingerprint(&args.watch);
    let mut first = !audit_out.join("_SUCCESS").is_file();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(poll);
        let now = fingerprint(&args.watch);
        if now == seen && !first {
            continue;
        }
        // Let a burst of writes settle before reading.
        std::thread::sleep(poll);
        seen = fingerprint(&args.watch);
        first = false;
        let bar = Bar::new(quiet > 0);
        let audit = AuditArgs {
            inputs: args.watch.clone(),
            out: Some(audit_out.clone()),
            name: None,
            no_embeddings: args.bm25,
            threshold: args.threshold,
            min_confidence: 0.3,
            min_rscore: 0.4,
            force: false,
            threads: 2,
            max_file_bytes: 4 * 1024 * 1024,
            max_files: 500_000,
            max_parse_ms: 2000,
            format: Format::Json,
        };
        let result = super::audit::execute(&audit, &bar).and_then(|_| {
            super::index::execute_build(
                &IndexBuildArgs {
                    audit: audit_out.clone(),
                    out: Some(args.index.clone()),
                    no_embeddings: args.bm25,
                    incremental: true,
                    examples: None,
                    min_confidence: 0.5,
                    threads: 2,
                    format: Format::Json,
                },
                &bar,
            )
        });
        match result {
            Ok((summary, _, _)) => {
                let outcome = gw.reload_blocking();
                stderr_line(&format!(
                    "skg serve --watch: rebuilt ({}) → {}",
                    summary["incremental"]["packages"],
                    serde_json::to_string(&outcome).unwrap_or_default()
                ));
            }
            Err(e) => stderr_line(&format!(
                "skg serve --watch: rebuild failed, still serving the previous index: {e:#}"
            )),
        }
    }
}

pub(crate) fn mcp(args: &McpArgs) -> anyhow::Result<ExitStatus> {
    let (embed, degraded) = embedder(args.bm25, 1);
    let mut cfg = Config::new(args.index.clone());
    cfg.degraded = degraded;
    let gw = Arc::new(
        Gateway::open(cfg, embed)
            .with_context(|| format!("cannot serve {}", args.index.display()))?,
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(skg_serve::mcp::run_stdio(
        gw,
        tokio::io::BufReader::new(tokio::io::stdin()),
        tokio::io::stdout(),
    ))
    .context("MCP over stdio failed")?;
    Ok(ExitStatus::Success)
}
