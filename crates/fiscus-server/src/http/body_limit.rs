//! Refuses bodies over the configured limit with a problem+json 413, before any handler or idempotency
//! bookkeeping runs. Bodies without a `Content-Length` (chunked) are cut at the same limit when read.

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use fiscus_domain::error_code::ErrorCode;

use crate::http::problem::ApiError;
use crate::state::AppState;

pub async fn layer(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let limit = if is_upload(req.uri().path()) {
        state.settings.body_limit_bytes.max(crate::calls::UPLOAD_BODY_LIMIT)
    } else {
        state.settings.body_limit_bytes
    };
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return ApiError::new(ErrorCode::PayloadTooLarge)
            .detail(format!("the body limit is {limit} bytes"))
            .into_response();
    }
    next.run(req).await
}

/// A call recording's upload (`POST /api/v2/client-intelligence/calls/{uid}/recordings`), whose body carries
/// the audio and may be larger than any other request's; its route reads at most that much.
fn is_upload(path: &str) -> bool {
    path.strip_prefix("/api/v2/client-intelligence/calls/")
        .and_then(|rest| rest.strip_suffix("/recordings"))
        .is_some_and(|uid| !uid.is_empty() && !uid.contains('/'))
}
