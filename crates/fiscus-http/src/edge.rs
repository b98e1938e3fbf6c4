//! Refusals at the very edge, before routing: what no handler should ever see.
//!
//! A percent-encoded U+0000 (`%00`) in the path or the query would reach a text column or a filter, where
//! PostgreSQL refuses it with an error while SQLite stores it; bodies are held to the same rule where they
//! are parsed (`http/json.rs`, `http/form.rs`).

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use fiscus_domain::error_code::ErrorCode;

use crate::problem::ApiError;

pub async fn layer(req: Request, next: Next) -> Response {
    let uri = req.uri();
    if uri.path().contains("%00") || uri.query().is_some_and(|q| q.contains("%00")) {
        return ApiError::new(ErrorCode::MalformedRequest)
            .detail("the path or query contains the character U+0000, which is not accepted")
            .into_response();
    }
    next.run(req).await
}
