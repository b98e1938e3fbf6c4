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
pub async fn layer(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let catalogued = catalogued_operation(&req);
    let operation = match catalogued {
        Some(op) => std::borrow::Cow::Borrowed(op.id),
        None => std::borrow::Cow::Owned(route_label(&req)),
    };
    if let Some(op) = catalogued {
        // The authentication layer reads the operation from here rather than looking it up again.
        req.extensions_mut().insert(CataloguedOperation(op));
    }
    let response = next.run(req).await;
    let seconds = started.elapsed().as_secs_f64();
    let status = response.status().as_u16();
    state.metrics.observe(&operation, status, seconds);
    // The access log line; it runs inside the request span, so it carries the request id. Successful and
    // client-error requests log at debug (as tower-http's TraceLayer does; `FISCUS_LOG=debug` shows them),
    // server errors at warn, so a default deployment logs what needs attention without a write per request.
    if status >= 500 {
        tracing::warn!(operation = %operation, status, latency_ms = seconds * 1000.0, "request failed");
    } else {
        tracing::debug!(operation = %operation, status, latency_ms = seconds * 1000.0, "request served");
    }
    response
}

/// The catalogue entry of the matched route, if it is a catalogued operation.
#[derive(Clone, Copy, Debug)]
pub struct CataloguedOperation(pub &'static fiscus_domain::catalogue::Operation);

fn catalogued_operation(req: &Request) -> Option<&'static fiscus_domain::catalogue::Operation> {
    let matched = req.extensions().get::<MatchedPath>()?;
    // HEAD is served by the GET route (without a body), so it is that operation, with that scope.
    let method = if req.method() == axum::http::Method::HEAD {
        fiscus_domain::catalogue::Method::Get
    } else {
        fiscus_domain::catalogue::Method::parse(req.method().as_str())?
    };
    fiscus_domain::catalogue::find(method, matched.as_str())
}

/// The label of a request outside the catalogue. Both parts come from fixed sets (the standard methods and
/// the router's own routes), so no request can create a new series: any other method string is `OTHER`,
/// and a path no route matched is `unmatched`.
fn route_label(req: &Request) -> String {
    use axum::http::Method;
    let method = match *req.method() {
        Method::GET | Method::HEAD | Method::POST | Method::PUT | Method::DELETE | Method::PATCH | Method::OPTIONS => {
            req.method().as_str()
        }
        _ => "OTHER",
    };
    match req.extensions().get::<MatchedPath>() {
        Some(matched) => format!("{method} {}", matched.as_str()),
        None => format!("{method} unmatched"),
    }
}
