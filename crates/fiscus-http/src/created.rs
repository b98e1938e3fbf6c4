//! The answer to a request that created something: 201 with the created thing's view and, when it has
//! an address of its own, `Location`.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// 201 with the body, and `Location` when the created thing has an address of its own.
pub fn created(location: Option<String>, body: impl Serialize) -> Response {
    let mut response = (StatusCode::CREATED, Json(body)).into_response();
    if let Some(v) = location.and_then(|l| HeaderValue::from_str(&l).ok()) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
}
