//! Traces: `skg serve` with `OTEL_EXPORTER_OTLP_ENDPOINT` sends its spans to that collector (an
//! in-process OTLP/HTTP receiver here): the request span and its stages, one trace per request.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message as _;

use crate::{clean_command, free_port, http_get, repo};

type Received = Arc<Mutex<Vec<ExportTraceServiceRequest>>>;

/// A span as received: name, trace id, span id, parent span id.
type Span = (String, Vec<u8>, Vec<u8>, Vec<u8>);

/// An OTLP/HTTP collector on 127.0.0.1: every `POST /v1/traces` body, decoded.
fn collector(rt: &tokio::runtime::Runtime) -> (u16, Received) {
    let received: Received = Arc::default();
    let store = Arc::clone(&received);
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let store = Arc::clone(&store);
            async move {
                let req = ExportTraceServiceRequest::decode(body)
                    .unwrap_or_else(|e| panic!("not an OTLP trace export: {e}"));
                store.lock().unwrap_or_else(|e| panic!("{e}")).push(req);
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap_or_else(|e| panic!("{e}"));
    let port = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .port();
    rt.spawn(async move { axum::serve(listener, app).await });
    (port, received)
}

fn post(port: u16, path: &str, body: &str) -> String {
    use std::io::{Read as _, Write as _};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|e| panic!("{e}"));
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap_or_else(|e| panic!("{e}"));
    raw
}

#[test]
fn an_otlp_collector_receives_the_request_span_and_its_stages() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (collector_port, received) = collector(&rt);
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = tmp.path();
    let registries = repo().join("registries");
    let registries = registries.to_string_lossy();
    super::lexical_index(d, &registries);
    let port = free_port();
    let child = clean_command(env!("CARGO_BIN_EXE_skg"), d)
        .args([
            "serve",
            "--index",
            "index",
            "--bm25",
            "--addr",
            &format!("127.0.0.1:{port}"),
        ])
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{collector_port}"),
        )
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    while http_get(port, "/ready").is_none() {
        assert!(
            started.elapsed() < Duration::from_mins(1),
            "the gateway never became ready"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let answer = post(
        port,
        "/v1/route",
        r#"{"task":"finish the feature branch and get it reviewed","k":2}"#,
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // SIGTERM: the gateway drains, stops, and flushes its spans on the way out.
    let term = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(term.success());
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Span name → (trace id, parent span id) of every span received.
    let spans: Vec<Span> = received
        .lock()
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .flat_map(|r| &r.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .map(|s| {
            (
                s.name.clone(),
                s.trace_id.clone(),
                s.span_id.clone(),
                s.parent_span_id.clone(),
            )
        })
        .collect();
    let by_name: BTreeMap<&str, &Span> = spans.iter().map(|s| (s.0.as_str(), s)).collect();
    for stage in ["route", "bm25", "fuse", "bundle"] {
        assert!(
            by_name.contains_key(stage),
            "no {stage} span among {:?}",
            by_name.keys()
        );
    }
    // The stages are children of the request span, in its trace.
    let route = by_name["route"];
    for stage in ["bm25", "fuse", "bundle"] {
        let s = by_name[stage];
        assert_eq!(s.1, route.1, "{stage} is in the request's trace");
        assert_eq!(s.3, route.2, "{stage}'s parent is the request span");
    }
}
