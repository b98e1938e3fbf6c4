//! `Request-Id`: echoed when the client sends a sane one, minted (`req_…`) otherwise, returned on every
//! response, attached to every log line of the request and to every problem body.

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

pub static REQUEST_ID: HeaderName = HeaderName::from_static("request-id");

tokio::task_local! {
    static CURRENT: String;
}

/// The id of the request being served on this task, if any.
pub fn current() -> Option<String> {
    CURRENT.try_with(Clone::clone).ok()
}

/// `actor` as the application layer's caller on this request (its id goes into the audit event).
pub fn caller(actor: fiscus_domain::actor::Actor) -> fiscus_kernel::governed::Caller {
    fiscus_kernel::governed::Caller { request_id: current(), ..fiscus_kernel::governed::Caller::bare(actor) }
}

fn acceptable(v: &str) -> bool {
    !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic())
}

pub async fn layer(mut req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| acceptable(v))
        .map(str::to_string)
        .unwrap_or_else(|| fiscus_domain::ids::new_id("req"));
    req.extensions_mut().insert(RequestId(id.clone()));
    let span = tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.uri().path());
    let mut response = CURRENT.scope(id.clone(), next.run(req).instrument(span)).await;
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID.clone(), v);
    }
    response
}

/// The request id, as a request extension.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);
