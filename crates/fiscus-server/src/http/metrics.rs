//! Prometheus metrics at `GET /metrics`: request counts by operation and status, and latency histograms by
//! operation. The operation label is the catalogue's operation id (or the route for non-API paths), never
//! the raw path, so label cardinality stays bounded.

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::time::Instant;

use crate::state::AppState;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub operation: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OperationLabel {
    pub operation: String,
}

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<OperationLabel, Histogram>,
}

fn latency_histogram() -> Histogram {
    // 100 µs … ~6.5 s in doublings.
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(0.0001, 2.0, 17))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<OperationLabel, Histogram>::new_with_constructor(latency_histogram as fn() -> Histogram);
        registry.register("fiscus_http_requests", "HTTP requests by operation and status", requests.clone());
        registry.register("fiscus_http_request_duration_seconds", "HTTP request latency by operation", latency.clone());
        Metrics { registry, requests, latency }
    }
}

impl Metrics {
    pub fn observe(&self, operation: &str, status: u16, seconds: f64) {
        self.requests.get_or_create(&RequestLabels { operation: operation.to_string(), status }).inc();
        self.latency.get_or_create(&OperationLabel { operation: operation.to_string() }).observe(seconds);
    }

    pub fn encode(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

/// Route layer (runs after routing, so the matched route is known).
pub async fn layer(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let operation = operation_label(&req);
    let response = next.run(req).await;
    let seconds = started.elapsed().as_secs_f64();
    let status = response.status().as_u16();
    state.metrics.observe(&operation, status, seconds);
    // The access log line; it runs inside the request span, so it carries the request id.
    tracing::info!(operation = %operation, status, latency_ms = seconds * 1000.0, "request served");
    response
}

fn operation_label(req: &Request) -> String {
    let Some(matched) = req.extensions().get::<MatchedPath>() else {
        return String::from("unmatched");
    };
    let method = fiscus_domain::catalogue::Method::parse(req.method().as_str());
    match method.and_then(|m| fiscus_domain::catalogue::find(m, matched.as_str())) {
        Some(op) => op.id.to_string(),
        None => format!("{} {}", req.method(), matched.as_str()),
    }
}
