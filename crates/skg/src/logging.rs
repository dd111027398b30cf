//! tracing subscriber on stderr; `-v`/`-q` pick the level, `RUST_LOG` overrides. With
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set, spans also go to
//! that OTLP/HTTP collector (off otherwise): the gateway's request spans and their stages (embed,
//! bm25, dense, fuse, bundle).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};
use tracing_subscriber::{
    EnvFilter, Layer as _, layer::SubscriberExt as _, util::SubscriberInitExt as _,
};

use crate::GlobalArgs;

/// Spans exported to a collector: the gateway's and the index's, at info.
pub const TRACE_FILTER: &str = "skg_serve=info,skg_index=info";

/// Flushes and stops the span exporter when dropped (the end of `main`).
#[derive(Debug, Default)]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(p) = self.provider.take() {
            let _ = p.shutdown();
        }
    }
}

/// An OTLP/HTTP (protobuf) span exporter to `endpoint` (a collector's base URL, e.g.
/// `http://localhost:4318`; spans go to `/v1/traces` under it unless the URL already ends so),
/// batched on a background thread; the provider and its tracer.
///
/// # Errors
/// The exporter cannot be built (a malformed endpoint).
pub fn otlp_tracer(endpoint: &str) -> anyhow::Result<(SdkTracerProvider, Tracer)> {
    use opentelemetry_otlp::WithExportConfig as _;
    let url = if endpoint.trim_end_matches('/').ends_with("/v1/traces") {
        endpoint.to_owned()
    } else {
        format!("{}/v1/traces", endpoint.trim_end_matches('/'))
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(url)
        .build()?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            opentelemetry_sdk::Resource::builder()
                .with_service_name("skg")
                .build(),
        )
        .build();
    let tracer = provider.tracer("skg");
    Ok((provider, tracer))
}

/// Installs the stderr subscriber, and the OTLP exporter when the environment configures one.
pub fn init(global: &GlobalArgs) -> Telemetry {
    let level = match (global.quiet, global.verbose) {
        (q, _) if q >= 2 => "error",
        (1, _) | (_, 0) => "warn",
        (_, 1) => "info",
        (_, 2) => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(filter);
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .or_else(|_| std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT"))
        .ok()
        .filter(|e| !e.trim().is_empty());
    let mut telemetry = Telemetry::default();
    let mut warning = None;
    let otel = endpoint.and_then(|e| match otlp_tracer(&e) {
        Ok((provider, tracer)) => {
            telemetry.provider = Some(provider);
            Some(
                tracing_opentelemetry::layer()
                    .with_tracer(tracer)
                    .with_filter(EnvFilter::new(TRACE_FILTER)),
            )
        }
        Err(err) => {
            warning = Some(format!("OTLP traces off: {err:#}"));
            None
        }
    });
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init();
    if let Some(w) = warning {
        tracing::warn!("{w}");
    }
    telemetry
}
