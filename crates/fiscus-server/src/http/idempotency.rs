//! `Idempotency-Key` on every POST (draft-ietf-httpapi-idempotency-key-header, Stripe semantics).
//!
//! - First request: the key is reserved (its own short transaction), the handler runs, and the response is
//!   stored. Handlers that write store it inside their own transaction via [`crate::http::ctx::Ctx::respond`],
//!   so the effect and the stored response commit together or not at all; for anything else this layer
//!   stores it afterwards.
//! - Same key, same method, path and body: the stored response, with `Idempotent-Replayed: true`.
//! - Same key, different method, path or body: 422 `idempotency_key_reused`.
//! - Same key while the first is still running: 409 `idempotency_key_in_use` with `Retry-After`.
//! - 5xx responses are never stored; the key is released so the client may retry.

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Principal;
use fiscus_store::idempotency::{self, Fingerprint, KeyRef, Reservation, StoredResponse};
use sha2::{Digest, Sha256};

use crate::http::problem::ApiError;
use crate::state::AppState;

pub static IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
pub static IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// The reservation a handler completes inside its transaction.
#[derive(Clone, Debug)]
pub struct IdempotencyHandle {
    pub workspace_id: String,
    pub application_id: String,
    pub key: String,
    pub lock_token: String,
}

impl IdempotencyHandle {
    pub fn key_ref(&self) -> KeyRef<'_> {
        KeyRef { workspace_id: &self.workspace_id, application_id: &self.application_id, key: &self.key }
    }
}

/// Marks a response whose idempotency record was already stored with the effect.
#[derive(Clone, Copy, Debug)]
pub struct Completed;

/// Headers a replay reproduces.
const REPLAYED_HEADERS: [HeaderName; 2] = [header::CONTENT_TYPE, header::LOCATION];

pub async fn layer(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let Some(raw_key) = req.headers().get(&IDEMPOTENCY_KEY) else {
        return next.run(req).await;
    };
    let key = match raw_key.to_str() {
        Ok(k) if !k.is_empty() && k.len() <= 255 && k.bytes().all(|b| b.is_ascii_graphic()) => k.to_string(),
        _ => return ApiError::new(ErrorCode::InvalidIdempotencyKey).into_response(),
    };
    let Some(principal) = req.extensions().get::<std::sync::Arc<Principal>>().cloned() else {
        tracing::error!("idempotency layer ran without an authenticated principal");
        return ApiError::internal().into_response();
    };
    let (mut parts, body) = req.into_parts();
    let bytes = match to_bytes(body, state.settings.body_limit_bytes).await {
        Ok(b) => b,
        Err(_) => return ApiError::new(ErrorCode::PayloadTooLarge).into_response(),
    };
    let body_hash = fiscus_domain::evidence::hex(&Sha256::digest(&bytes));
    let path = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
    let handle = IdempotencyHandle {
        workspace_id: principal.tenant.workspace_id.clone(),
        application_id: principal.application_id.clone(),
        key,
        lock_token: fiscus_domain::ids::new_id("lck"),
    };
    let reservation = reserve(&state, &handle, parts.method.as_str(), &path, &body_hash).await;
    match reservation {
        Err(e) => e.into_response(),
        Ok(Reservation::Mismatch) => ApiError::new(ErrorCode::IdempotencyKeyReused).into_response(),
        Ok(Reservation::InFlight) => {
            ApiError::new(ErrorCode::IdempotencyKeyInUse).header(header::RETRY_AFTER, "1").into_response()
        }
        Ok(Reservation::Replay(stored)) => replay(stored),
        Ok(Reservation::Acquired { .. }) => {
            parts.extensions.insert(handle.clone());
            let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
            settle(&state, &handle, response).await
        }
    }
}

async fn reserve(
    state: &AppState,
    handle: &IdempotencyHandle,
    method: &str,
    path: &str,
    body_hash: &str,
) -> Result<Reservation, ApiError> {
    let now = now_micros();
    let settings = &state.settings;
    let mut tx = state.store.begin().await?;
    let reservation = idempotency::reserve(
        tx.conn(),
        &handle.key_ref(),
        &Fingerprint { method, path, body: body_hash },
        &handle.lock_token,
        now,
        settings.idempotency_stale_seconds as i64 * MICROS_PER_SECOND,
        settings.idempotency_retention_seconds as i64 * MICROS_PER_SECOND,
    )
    .await?;
    tx.commit().await?;
    Ok(reservation)
}

/// After the handler: keep what it stored, release on 5xx, store anything else.
async fn settle(state: &AppState, handle: &IdempotencyHandle, response: Response) -> Response {
    if response.extensions().get::<Completed>().is_some() {
        return response;
    }
    if response.status().is_server_error() {
        if let Err(e) = release(state, handle).await {
            tracing::warn!(error = %e, "could not release an idempotency key; it goes stale on its own");
        }
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        return ApiError::internal().into_response();
    };
    let stored = StoredResponse {
        status: parts.status.as_u16(),
        headers: headers_json(&parts.headers),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    };
    let result = async {
        let mut tx = state.store.begin().await?;
        let mine = idempotency::complete(tx.conn(), &handle.key_ref(), &handle.lock_token, &stored).await?;
        tx.commit().await?;
        Ok::<bool, fiscus_store::StoreError>(mine)
    }
    .await;
    if let Err(e) = result {
        tracing::warn!(error = %e, "could not store an idempotent response");
    }
    Response::from_parts(parts, Body::from(bytes))
}

async fn release(state: &AppState, handle: &IdempotencyHandle) -> Result<(), fiscus_store::StoreError> {
    let mut tx = state.store.begin().await?;
    idempotency::release(tx.conn(), &handle.key_ref(), &handle.lock_token).await?;
    tx.commit().await
}

pub fn headers_json(headers: &HeaderMap) -> String {
    let mut map = serde_json::Map::new();
    for name in &REPLAYED_HEADERS {
        if let Some(v) = headers.get(name).and_then(|v| v.to_str().ok()) {
            map.insert(name.as_str().to_string(), serde_json::Value::String(v.to_string()));
        }
    }
    serde_json::Value::Object(map).to_string()
}

fn replay(stored: StoredResponse) -> Response {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    let mut response = (status, stored.body).into_response();
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(&stored.headers) {
        for (name, value) in map {
            if let (Ok(name), Some(Ok(value))) =
                (HeaderName::try_from(name.as_str()), value.as_str().map(HeaderValue::from_str))
            {
                response.headers_mut().insert(name, value);
            }
        }
    }
    response.headers_mut().insert(IDEMPOTENT_REPLAYED.clone(), HeaderValue::from_static("true"));
    response
}
