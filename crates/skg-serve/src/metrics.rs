//! Prometheus metrics (OpenMetrics text at `/metrics`).

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};

use crate::gateway::ReloadOutcome;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    method: String,
    status: u16,
    tenant: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
    tenant: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TenantLabels {
    tenant: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

fn latency_histogram() -> Histogram {
    // 0.25 ms … 4 s
    Histogram::new(exponential_buckets(0.000_25, 2.0, 15))
}

fn size_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.0, 8))
}

fn token_histogram() -> Histogram {
    Histogram::new(exponential_buckets(256.0, 2.0, 10))
}

/// The gateway's metrics.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    reloads: Family<OutcomeLabels, Counter>,
    skills: Gauge,
    routable: Gauge,
    documents: Gauge,
    vectors: Gauge,
    bundle_skills: Histogram,
    bundle_tokens: Histogram,
    query_cache: Family<OutcomeLabels, Counter>,
    rate_limited: Family<TenantLabels, Counter>,
    refusals: Family<ReasonLabels, Counter>,
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("skg");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests by route, method, status and tenant (`open` without keys, `-` when refused)",
            requests.clone(),
        );
        let latency = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by route and tenant",
            latency.clone(),
        );
        let reloads = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "index_reloads",
            "index reload attempts by outcome (reloaded, fresh, failed)",
            reloads.clone(),
        );
        let [skills, routable, documents, vectors] = [(); 4].map(|()| Gauge::default());
        registry.register("index_skills", "skills in the served index", skills.clone());
        registry.register(
            "index_routable_skills",
            "routable skills (not aliases, not quarantined) in the served index",
            routable.clone(),
        );
        registry.register(
            "index_documents",
            "documents in the served index",
            documents.clone(),
        );
        registry.register(
            "index_vectors",
            "dense vectors in the served index",
            vectors.clone(),
        );
        let bundle_skills = size_histogram();
        registry.register(
            "route_bundle_skills",
            "skills per routed bundle",
            bundle_skills.clone(),
        );
        let bundle_tokens = token_histogram();
        registry.register(
            "route_bundle_tokens",
            "tokens per routed bundle",
            bundle_tokens.clone(),
        );
        let query_cache = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "query_vector_cache",
            "query vector lookups by outcome (hit, miss)",
            query_cache.clone(),
        );
        let rate_limited = Family::<TenantLabels, Counter>::default();
        registry.register(
            "rate_limited",
            "requests refused with 429 by tenant (the key's bucket was empty)",
            rate_limited.clone(),
        );
        let refusals = Family::<ReasonLabels, Counter>::default();
        registry.register(
            "auth_refusals",
            "requests refused with 401 by reason (missing, unknown, revoked key)",
            refusals.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            reloads,
            skills,
            routable,
            documents,
            vectors,
            bundle_skills,
            bundle_tokens,
            query_cache,
            rate_limited,
            refusals,
        }
    }

    pub(crate) fn request(
        &self,
        (route, method, status): (&str, &str, u16),
        tenant: &str,
        seconds: f64,
    ) {
        self.requests
            .get_or_create(&RequestLabels {
                route: route.to_owned(),
                method: method.to_owned(),
                status,
                tenant: tenant.to_owned(),
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                route: route.to_owned(),
                tenant: tenant.to_owned(),
            })
            .observe(seconds);
    }

    pub(crate) fn rate_limited(&self, tenant: &str) {
        self.rate_limited
            .get_or_create(&TenantLabels {
                tenant: tenant.to_owned(),
            })
            .inc();
    }

    pub(crate) fn refusal(&self, reason: crate::access::Refusal) {
        self.refusals
            .get_or_create(&ReasonLabels {
                reason: reason.as_str().to_owned(),
            })
            .inc();
    }

    pub(crate) fn index_loaded(&self, index: &skg_index::Index) {
        let count = |k: &str| {
            i64::try_from(index.manifest.counts.get(k).copied().unwrap_or(0)).unwrap_or(i64::MAX)
        };
        self.skills.set(count("skills"));
        self.routable.set(count("routable"));
        self.documents.set(count("documents"));
        self.vectors.set(count("vectors"));
    }

    pub(crate) fn reload(&self, outcome: &ReloadOutcome) {
        let outcome = match outcome {
            ReloadOutcome::Reloaded { .. } => "reloaded",
            ReloadOutcome::Fresh { .. } => "fresh",
            ReloadOutcome::Failed { .. } => "failed",
        };
        self.reloads
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    pub(crate) fn bundle(&self, skills: usize, tokens: u64) {
        self.bundle_skills.observe(skills as f64);
        self.bundle_tokens.observe(tokens as f64);
    }

    pub(crate) fn query_cache(&self, hit: bool) {
        self.query_cache
            .get_or_create(&OutcomeLabels {
                outcome: if hit { "hit" } else { "miss" }.to_owned(),
            })
            .inc();
    }

    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}
