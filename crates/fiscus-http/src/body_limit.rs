//! Refuses bodies over the configured limit with a problem+json 413, before any handler or idempotency
//! bookkeeping runs. Bodies without a `Content-Length` (chunked) are cut at the same limit when read.

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use fiscus_domain::error_code::ErrorCode;

use crate::problem::ApiError;
use crate::state::AppState;

/// A route whose bodies may be larger than the configured limit: the area that serves it declares it (a
/// call recording's upload carries the audio), the composition lists it in the state.
#[derive(Clone, Copy)]
pub struct LargeBody {
    /// Whether a request path is the route's.
    pub path: fn(&str) -> bool,
    /// Its limit, in bytes (the configured limit still applies when larger).
    pub limit: usize,
}

/// The body limit of a request path: the configured one, or a larger route's.
pub fn limit_for(state: &AppState, path: &str) -> usize {
    let large = state.http.large_bodies.iter().filter(|l| (l.path)(path)).map(|l| l.limit).max();
    state.settings.body_limit_bytes.max(large.unwrap_or(0))
}

pub async fn layer(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let limit = limit_for(&state, req.uri().path());
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return ApiError::new(ErrorCode::PayloadTooLarge)
            .detail(format!("the body limit is {limit} bytes"))
            .into_response();
    }
    next.run(req).await
}
