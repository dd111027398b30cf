//! `skg serve` (the HTTP gateway + MCP at `/mcp`) and `skg mcp` (MCP over stdio).

use std::{
    io::Write as _,
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use anyhow::Context as _;
use skg_serve::{Config, Embed, Embedders, Gateway, MetricsAccess};

use crate::{
    ExitStatus, GlobalArgs,
    args::{McpArgs, ServeArgs},
    progress::Bar,
};
use skg_pipeline::{audit::Plan, index::BuildJob};

/// Query embedding for the gateway, over a pool of model sessions.
#[derive(Debug)]
struct Pool(skg_embed::Pool);

impl Embed for Pool {
    fn model(&self) -> &str {
        self.0.identity()
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, String> {
        self.0.embed(text).map_err(|e| e.to_string())
    }

    fn embed_alone(&self, text: &str) -> Result<Vec<f32>, String> {
        self.0.embed_alone(text).map_err(|e| e.to_string())
    }

    fn embed_with_tokens(&self, text: &str) -> Result<skg_index::QueryEmbedding, String> {
        let t = self.0.embed_with_tokens(text).map_err(|e| e.to_string())?;
        Ok(skg_index::QueryEmbedding {
            vector: t.vector,
            tokens: t.tokens,
        })
    }

    fn embed_alone_with_tokens(&self, text: &str) -> Result<skg_index::QueryEmbedding, String> {
        let t = self
            .0
            .embed_alone_with_tokens(text)
            .map_err(|e| e.to_string())?;
        Ok(skg_index::QueryEmbedding {
            vector: t.vector,
            tokens: t.tokens,
        })
    }
}

/// The model folder's graphs as the gateway's embedders: each index gets a pool of sessions of
/// the graph that made its vectors, loaded when an index first asks for it and kept (a reload
/// onto an index of the other catalog kind loads the other graph once; one of another identity
/// than the kept pool's reads the folder again).
#[derive(Debug)]
struct ModelPools {
    sessions: usize,
    pools: std::sync::Mutex<std::collections::BTreeMap<skg_embed::Variant, Arc<dyn Embed>>>,
}

impl Embedders for ModelPools {
    fn for_model(&self, model: &str) -> Result<Arc<dyn Embed>, String> {
        let no_model = |e: skg_embed::Error| format!("no embedding model ({e}): BM25 only");
        let dir = skg_embed::locate()
            .and_then(|d| d.for_identity(Some(model)))
            .map_err(no_model)?;
        let mut pools = self
            .pools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The pool of this graph, unless the folder's files changed since it was loaded (an
        // index rebuilt with new model files then gets a pool of them, not BM25 until a restart).
        if let Some(pool) = pools.get(&dir.variant())
            && pool.model() == model
        {
            return Ok(Arc::clone(pool));
        }
        let pool: Arc<dyn Embed> = Arc::new(Pool(
            skg_embed::Pool::load(&dir, self.sessions).map_err(no_model)?,
        ));
        tracing::info!(graph = %dir.variant(), model = pool.model(), "embedding model loaded");
        pools.insert(dir.variant(), Arc::clone(&pool));
        Ok(pool)
    }
}

/// The embedders, or why there are none.
fn embedder(bm25: bool, sessions: usize) -> (Arc<dyn Embedders>, Vec<String>) {
    if bm25 {
        let none: Option<Arc<dyn Embed>> = None;
        return (
            Arc::new(none),
            vec!["started with --bm25: BM25 only".to_owned()],
        );
    }
    let pools = ModelPools {
        sessions,
        pools: std::sync::Mutex::default(),
    };
    (Arc::new(pools), Vec::new())
}

fn config(args: &ServeArgs, degraded: Vec<String>) -> Config {
    let mut cfg = Config::new(args.index.clone());
    let secret = |name| {
        std::env::var(name)
            .ok()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
    };
    cfg.admin_token = secret("SKG_ADMIN_TOKEN");
    cfg.metrics_token = secret("SKG_METRICS_TOKEN");
    cfg.open_metrics = args.open_metrics;
    if cfg.open_metrics && cfg.metrics_token.is_some() {
        tracing::warn!(
            "--open-metrics is ignored: SKG_METRICS_TOKEN is set, and /metrics needs it"
        );
    }
    cfg.max_body_bytes = args.max_body_bytes;
    cfg.timeout = Duration::from_millis(args.timeout_ms);
    cfg.header_read_timeout = Duration::from_millis(args.header_timeout_ms);
    cfg.concurrency = args.concurrency;
    if let Some(c) = args.compute_slots {
        cfg.compute_slots = c;
    }
    cfg.max_k = args.max_k;
    cfg.query_cache = args.query_cache;
    cfg.query_cache_bytes = args.query_cache_mib << 20;
    cfg.ann_min_rows = (!args.no_ann).then_some(args.ann_min_rows);
    cfg.allowed_origins.clone_from(&args.allow_origin);
    cfg.degraded = degraded;
    cfg.keys_file.clone_from(&args.keys);
    cfg.keys_poll = Duration::from_millis(args.keys_poll_ms.max(50));
    cfg.index_poll = (args.index_poll_ms > 0).then(|| Duration::from_millis(args.index_poll_ms));
    cfg.drain_grace = Duration::from_millis(args.drain_ms);
    cfg.min_score = args.min_score;
    cfg.log_task = args.log_task;
    cfg.late = args.late.into();
    cfg
}

/// Without a keys file the gateway is open: fine on loopback, refused elsewhere unless `--open`.
fn check_open(args: &ServeArgs, addr: std::net::SocketAddr) -> anyhow::Result<()> {
    if args.keys.is_none() && !args.open && !addr.ip().is_loopback() {
        anyhow::bail!(
            "{addr} is not a loopback address: serve it with --keys FILE (skg keys add), or --open to let anyone who reaches it read every skill"
        );
    }
    Ok(())
}

fn stderr_line(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

pub(crate) fn serve(args: &ServeArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let slots = args
        .compute_slots
        .unwrap_or_else(skg_serve::defaults::compute_slots);
    let (embed, degraded) = embedder(args.bm25, slots);
    let gw = Arc::new(
        Gateway::open_with(config(args, degraded), embed)
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
        check_open(args, addr)?;
        let health = gw.health(true);
        stderr_line(&format!(
            "skg serve: http://{addr} — index {} ({} routable skills, revision {}){}; MCP at /mcp; {}; admin reload {}; metrics {}",
            args.index.display(),
            health
                .index
                .counts
                .as_ref()
                .and_then(|c| c.get("routable"))
                .unwrap_or(&0),
            &health.index.revision[..12.min(health.index.revision.len())],
            if health.degraded.is_empty() {
                String::new()
            } else {
                format!(" — degraded: {}", health.degraded.join("; "))
            },
            args.keys.as_ref().map_or_else(
                || "open (no keys)".to_owned(),
                |k| format!("API keys from {}", k.display())
            ),
            if gw.config().admin_token.is_some() { "on" } else { "off (set SKG_ADMIN_TOKEN)" },
            match gw.config().metrics_access() {
                MetricsAccess::Open => "open",
                MetricsAccess::Token => "with a bearer token",
                MetricsAccess::Closed => "closed (set SKG_METRICS_TOKEN or --open-metrics)",
            },
        ));
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = (!args.watch.is_empty()).then(|| {
            let (gw, stop, args, quiet) = (
                Arc::clone(&gw),
                Arc::clone(&stop),
                args.clone(),
                global.quiet,
            );
            std::thread::spawn(move || watch(&gw, &args, &stop, quiet))
        });
        // Ctrl-C or SIGTERM (what container runtimes and process managers send).
        let shutdown = async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            let terminated = async {
                match term.as_mut() {
                    Some(t) => {
                        t.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = terminated => {}
            }
            stderr_line("skg serve: shutting down (/ready is 503; finishing in-flight requests)");
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

/// `--watch`: when the registries change, re-run the audit (stages reused where their inputs
/// did not change), update the index package by package and reload it. A failed rebuild keeps
/// the served index and is logged.
fn watch(gw: &Arc<Gateway>, args: &ServeArgs, stop: &AtomicBool, quiet: u8) {
    let poll = args.poll_seconds;
    let audit_out = args.watch_audit.clone().unwrap_or_else(|| {
        let mut p = args.index.clone().into_os_string();
        p.push(".audit");
        PathBuf::from(p)
    });
    // The audit and the index with their defaults, but for what `serve` says.
    let mut plan = Plan::new(args.watch.clone(), audit_out.clone());
    plan.embeddings = !args.bm25;
    plan.score.threshold = args.threshold;
    let job = BuildJob {
        embeddings: !args.bm25,
        incremental: true,
        ..BuildJob::new(audit_out.clone(), args.index.clone())
    };
    let mut seen = skg_extract::change_stamp(&args.watch);
    let mut first = skg_artifact::require_finished(&audit_out).is_err();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(poll);
        if skg_extract::change_stamp(&args.watch) == seen && !first {
            continue;
        }
        // Let a burst of writes settle before reading.
        std::thread::sleep(poll);
        seen = skg_extract::change_stamp(&args.watch);
        first = false;
        let bar = Bar::new(quiet > 0);
        let result = skg_pipeline::audit::execute(&plan, &bar)
            .and_then(|_| skg_pipeline::index::execute_build(&job, &bar));
        bar.finish();
        match result {
            Ok(report) => {
                let outcome = gw.reload_blocking();
                stderr_line(&format!(
                    "skg serve --watch: rebuilt ({}) → {}",
                    serde_json::to_string(
                        &report
                            .incremental
                            .as_ref()
                            .map(skg_pipeline::index::Incremental::packages)
                    )
                    .unwrap_or_default(),
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
    cfg.late = args.late.into();
    let gw = Arc::new(
        Gateway::open_with(cfg, embed)
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
