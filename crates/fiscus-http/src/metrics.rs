//! Prometheus metrics at `GET /metrics`: request counts by operation and status, latency histograms by
//! operation, request bodies refused by admission and records set aside by workers. The operation label is the catalogue's operation id (or the route for non-API paths), never
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
pub struct TableLabel {
    pub table: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OperationLabel {
    pub operation: String,
}

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<OperationLabel, Histogram>,
    /// Bodies refused by admission (`crate::admission`): no room in their workspace's share or the node's.
    bodies_refused: Counter,
    /// Records workers set aside for failing their seals (`fiscus_store::set_aside`), by table, read from
    /// the database when scraped (every node reports the cluster's count).
    set_aside: Family<TableLabel, prometheus_client::metrics::gauge::Gauge>,
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
        let bodies_refused = Counter::default();
        registry.register(
            "fiscus_http_bodies_refused",
            "Request bodies refused for want of room in their workspace's share or the node's budget",
            bodies_refused.clone(),
        );
        let set_aside = Family::<TableLabel, prometheus_client::metrics::gauge::Gauge>::default();
        registry.register(
            "fiscus_records_set_aside",
            "Records a worker set aside for failing their seals, by table (work goes on without them)",
            set_aside.clone(),
        );
        Metrics { registry, requests, latency, bodies_refused, set_aside }
    }
}

impl Metrics {
    pub fn observe(&self, operation: &str, status: u16, seconds: f64) {
        self.requests.get_or_create(&RequestLabels { operation: operation.to_string(), status }).inc();
        self.latency.get_or_create(&OperationLabel { operation: operation.to_string() }).observe(seconds);
    }

    /// The records set aside now, by table (every table not named has none).
    pub fn records_set_aside(&self, counts: &[(String, i64)]) {
        self.set_aside.clear();
        for (table, n) in counts {
            self.set_aside.get_or_create(&TableLabel { table: table.clone() }).set(*n);
        }
    }

    pub fn body_refused(&self) {
        self.bodies_refused.inc();
    }

    pub fn encode(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

/// The two text formats `/metrics` speaks, chosen by the request's `Accept`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics 1.0 (`application/openmetrics-text`), what Prometheus asks for first.
    OpenMetrics,
    /// The Prometheus text format 0.0.4 (`text/plain`), what older scrapers and parsers read.
    Text004,
}

impl Format {
    /// The format of highest `q` the client accepts (RFC 9110 §12.5.1); OpenMetrics when it says nothing
    /// that decides (no `Accept`, `*/*`, or neither type).
    pub fn negotiate(accept: Option<&str>) -> Format {
        let mut open_metrics = None::<f32>;
        let mut text = None::<f32>;
        let mut any = None::<f32>;
        for item in accept.unwrap_or("").split(',') {
            let mut parts = item.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")))
                .find_map(|v| v.parse::<f32>().ok())
                .unwrap_or(1.0);
            let slot = match media.as_str() {
                "application/openmetrics-text" => &mut open_metrics,
                "text/plain" | "text/*" => &mut text,
                "*/*" => &mut any,
                _ => continue,
            };
            *slot = Some(slot.map_or(q, |old| old.max(q)));
        }
        let open_metrics = open_metrics.or(any).unwrap_or(0.0);
        let text = text.or(any).unwrap_or(0.0);
        if text > open_metrics { Format::Text004 } else { Format::OpenMetrics }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Text004 => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

impl Metrics {
    /// The registry in `format`.
    pub fn encode_as(&self, format: Format) -> String {
        let open_metrics = self.encode();
        match format {
            Format::OpenMetrics => open_metrics,
            Format::Text004 => text_004(&open_metrics),
        }
    }
}

/// OpenMetrics text as the Prometheus 0.0.4 text format: a counter's family is named with its `_total`
/// suffix there (its samples already carry it), there is no `# UNIT` line and no `# EOF`. Histograms and
/// gauges read the same in both.
fn text_004(open_metrics: &str) -> String {
    let mut counters = std::collections::HashSet::new();
    for line in open_metrics.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ")
            && let Some((name, "counter")) = rest.split_once(' ')
        {
            counters.insert(name.to_string());
        }
    }
    let mut out = String::with_capacity(open_metrics.len());
    for line in open_metrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# TYPE ", "# HELP "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters.contains(name).then(|| format!("{prefix}{name}_total {tail}"))
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
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
    let mut response = next.run(req).await;
    if let Some(op) = catalogued
        && let Some(d) = state.settings.deprecations.iter().find(|d| d.operation_id == op.id)
    {
        announce_deprecation(&state, d, response.headers_mut());
    }
    let seconds = started.elapsed().as_secs_f64();
    let status = response.status().as_u16();
    state.http.metrics.observe(&operation, status, seconds);
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

/// `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and a `Link` to the change ledger on every response of an
/// operation the ledger deprecates. Here because this layer is the one that knows the operation of every
/// routed request, dispatched tool calls included.
fn announce_deprecation(
    state: &AppState,
    d: &fiscus_kernel::change_ledger::Deprecation,
    headers: &mut axum::http::HeaderMap,
) {
    let ledger = format!("{}/api/v2/catalogue/ledger", state.settings.public_base_url());
    for (name, value) in fiscus_kernel::change_ledger::headers(d, &ledger) {
        if let Ok(value) = axum::http::HeaderValue::from_str(&value) {
            headers.append(name, value);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_chooses_the_format_by_q_and_openmetrics_when_undecided() {
        assert_eq!(Format::negotiate(None), Format::OpenMetrics);
        assert_eq!(Format::negotiate(Some("*/*")), Format::OpenMetrics);
        assert_eq!(Format::negotiate(Some("text/plain; version=0.0.4")), Format::Text004);
        assert_eq!(Format::negotiate(Some("application/openmetrics-text; version=1.0.0")), Format::OpenMetrics);
        // Prometheus' own scrape header prefers OpenMetrics.
        let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
        assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
        assert_eq!(Format::negotiate(Some("application/openmetrics-text;q=0.2, text/plain;q=0.9")), Format::Text004);
    }

    #[test]
    fn the_004_text_names_counter_families_with_their_total_and_has_no_eof() {
        let metrics = Metrics::default();
        metrics.observe("get_workspace", 200, 0.01);
        let text = metrics.encode_as(Format::Text004);
        assert!(text.contains("# TYPE fiscus_http_requests_total counter"), "{text}");
        assert!(text.contains("# HELP fiscus_http_requests_total "), "{text}");
        assert!(text.contains("fiscus_http_requests_total{operation=\"get_workspace\",status=\"200\"} 1"), "{text}");
        assert!(text.contains("# TYPE fiscus_http_request_duration_seconds histogram"), "{text}");
        assert!(!text.contains("# EOF"), "{text}");
        assert!(metrics.encode_as(Format::OpenMetrics).ends_with("# EOF\n"));
    }
}
