//! The routing gateway: an axum app over an skg index folder.
//!
//! - HTTP API: `POST /v1/route`, `POST /v1/skills/find`, `POST /v1/search`, `GET /v1/skills/{id}`,
//!   `GET /health`, `GET /metrics` (a bearer token with keys: [`Config::metrics_access`]),
//!   `GET /openapi.json`, `POST /admin/reload`.
//! - MCP server: streamable HTTP at `/mcp` on the same app, and stdio ([`mcp::run_stdio`]), with
//!   the tools `find_skills`, `get_skill` and `route_task`.
//!
//! The index is held behind an atomic pointer: a request takes the current index once and
//! finishes on it; a reload opens the new folder beside it (refusing one without `_SUCCESS`) and
//! swaps the pointer, only when the manifest's content hash changed. A failed reload keeps the
//! last good index serving and `/health` says so.
//!
//! Tenants: with a keys file ([`Config::keys_file`], written by `skg keys`), every read route
//! needs an API key, and each key sees only its skills — on every endpoint, MCP included — at
//! its own rate ([`access`]). The file is re-read every [`Config::keys_poll`].
//!
//! Query embeddings come through the [`Embed`] trait (the binary plugs skg-embed in); without one
//! the gateway answers with BM25 only and `/health` gives the reason.

pub mod access;
mod api;
mod error;
mod gateway;
pub mod mcp;
mod metrics;
mod openapi;
pub mod wire;

use std::sync::Arc;

pub use crate::{
    api::router,
    error::{ApiError, ErrorCode},
    gateway::{
        Config, Embed, Embedders, Gateway, KeysReload, Loaded, MetricsAccess, OpenError,
        ReloadOutcome, defaults,
    },
};

/// Runs `tick` once per `period`, the first time one period after the start; a tick that
/// overran makes the next one wait a whole period (missed ticks are skipped, never bunched).
fn every<F, Fut>(period: std::time::Duration, mut tick: F) -> tokio::task::JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        let mut timer = tokio::time::interval(period);
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        timer.tick().await;
        loop {
            timer.tick().await;
            tick().await;
        }
    })
}

/// Serves `gateway` on `listener` until `shutdown` resolves, then lets in-flight requests finish.
/// When `shutdown` resolves, `/ready` turns 503 at once and connections are still accepted for
/// [`Config::drain_grace`] (a load balancer's health check notices and stops sending) before the
/// listener closes.
///
/// Each connection is served by hyper's HTTP/1 server with a timer, so a client that does not
/// finish sending a request's headers within [`Config::header_read_timeout`] is disconnected
/// (slow-loris); bodies are bounded by the request timeout of the app's layers.
pub async fn serve(
    gateway: Arc<Gateway>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let header_timeout = gateway.config().header_read_timeout;
    // With a keys file: re-read it every interval (a revoked key is refused within one).
    let keys_watch = gateway.keys_poll().map(|period| {
        let gw = Arc::clone(&gateway);
        every(period, move || {
            let g = Arc::clone(&gw);
            async move {
                let _ = tokio::task::spawn_blocking(move || g.reload_keys_blocking()).await;
            }
        })
    });
    // With an index poll: reload when the folder's revision changes (replicas over one
    // published folder each roll on their own).
    let index_watch = gateway.config().index_poll.map(|period| {
        let gw = Arc::clone(&gateway);
        every(period, move || {
            let g = Arc::clone(&gw);
            async move {
                g.reload().await;
            }
        })
    });
    let drain = Arc::clone(&gateway);
    let app = router(gateway);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    let grace = drain.config().drain_grace;
    tokio::pin!(shutdown);
    let mut draining: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _peer)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: back off instead of spinning.
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let service = hyper_util::service::TowerToHyperService::new(app.clone());
                let conn = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!("connection ended: {e}");
                    }
                });
            }
            () = &mut shutdown, if draining.is_none() => {
                drain.drain();
                if grace.is_zero() {
                    break;
                }
                draining = Some(Box::pin(tokio::time::sleep(grace)));
            }
            () = async { if let Some(d) = draining.as_mut() { d.await } }, if draining.is_some() => break,
        }
    }
    drop(listener);
    for w in [keys_watch, index_watch].into_iter().flatten() {
        w.abort();
    }
    graceful.shutdown().await;
    Ok(())
}
