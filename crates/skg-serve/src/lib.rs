//! The routing gateway: an axum app over an skg index folder.
//!
//! - HTTP API: `POST /v1/route`, `POST /v1/skills/find`, `POST /v1/search`, `GET /v1/skills/{id}`,
//!   `GET /health`, `GET /metrics`, `GET /openapi.json`, `POST /admin/reload`.
//! - MCP server: streamable HTTP at `/mcp` on the same app, and stdio ([`mcp::run_stdio`]), with
//!   the tools `find_skills`, `get_skill` and `route_task`.
//!
//! The index is held behind an atomic pointer: a request takes the current index once and
//! finishes on it; a reload opens the new folder beside it (refusing one without `_SUCCESS`) and
//! swaps the pointer, only when the manifest's content hash changed. A failed reload keeps the
//! last good index serving and `/health` says so.
//!
//! Query embeddings come through the [`Embed`] trait (the binary plugs skg-embed in); without one
//! the gateway answers with BM25 only and `/health` gives the reason.

mod api;
mod error;
mod gateway;
pub mod mcp;
mod metrics;
mod openapi;

use std::{net::SocketAddr, sync::Arc};

pub use crate::{
    api::router,
    error::ApiError,
    gateway::{Config, Embed, Gateway, Loaded, ReloadOutcome},
};

/// Serves `gateway` on `addr` until `shutdown` resolves (in-flight requests finish).
pub async fn serve(
    gateway: Arc<Gateway>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = router(gateway);
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}
