//! `Idempotency-Key` on every POST (draft-ietf-httpapi-idempotency-key-header, Stripe semantics).
//!
//! - If the operation's handler is one short transaction ending in [`crate::ctx::Ctx::respond`] with
//!   no effect outside it ([`RECORDED_WITH_EFFECT`]), the handler runs at once and the completed record is
//!   inserted in the effect's own transaction (one commit per request, no lookup before); if a record is
//!   already there, the effect is discarded and the answer is what that record says (below). Otherwise the
//!   key is looked up without writing (settled keys are answered from that read), then reserved in its own
//!   short transaction first, the handler runs, and the response is stored: handlers that write store it inside
//!   their own transaction via `Ctx::respond`, so the effect and the stored response commit together or not
//!   at all; for anything else this layer stores it afterwards.
//! - Same key, same method, path and body: the stored response, with `Idempotent-Replayed: true`.
//! - Same key, different method, path or body: 409 `idempotency_key_reused`, never retryable (no
//!   `Retry-After`). The draft says 422; here 422 means the body breaks a rule of the document, and this
//!   body breaks none: it conflicts with the server's record of the key (RFC 9110 §15.5.10).
//! - Same key while the first is still running: 409 `idempotency_key_in_use` with `Retry-After`. For an
//!   operation recorded with its effect, duplicates racing each other may all run their handler, but only
//!   the first record inserted keeps its effect: the others roll their own effect back and answer with what
//!   they then find, the first one's response replayed (`Idempotent-Replayed: true`) once it is durable,
//!   or 409 while its transaction is still open on another node. Either way exactly one effect commits.
//! - 5xx responses are never stored; the key is released so the client may retry.

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Principal;
use fiscus_store::appends::{KeyRecord, KeyWrite};
use fiscus_store::idempotency::{self, Fingerprint, KeyRef, Reservation, StoredResponse};
use sha2::{Digest, Sha256};

use crate::problem::ApiError;
use crate::state::AppState;

pub static IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
pub static IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// Operations whose handler is one short transaction ending in `Ctx::respond`, with no effect outside the
/// database before it: their key is recorded in the effect's transaction instead of being reserved first
/// (see the module documentation). Add an operation here only after checking its handler is such.
pub const RECORDED_WITH_EFFECT: &[&str] = &["post_actions_autonomy_assessment_evidence"];

/// The reservation a handler completes inside its transaction.
#[derive(Clone, Debug)]
pub struct IdempotencyHandle {
    pub workspace_id: String,
    pub application_id: String,
    pub key: String,
    pub lock_token: String,
    /// Set when the key was not reserved: the handler's transaction records it (see [`RECORDED_WITH_EFFECT`]).
    pub record: Option<RecordWithEffect>,
}

/// What recording a key with the effect needs beyond the key.
#[derive(Clone, Debug)]
pub struct RecordWithEffect {
    pub method: String,
    pub path: String,
    pub body_hash: String,
    pub stale_after: i64,
    pub retain_for: i64,
}

impl IdempotencyHandle {
    pub fn key_ref(&self) -> KeyRef<'_> {
        KeyRef { workspace_id: &self.workspace_id, application_id: &self.application_id, key: &self.key }
    }

    /// Stores `response` as this key's outcome inside `tx`. `Ok(None)` when stored; `Ok(Some(response))`
    /// when the key turned out to be someone else's: the effect in `tx` was discarded and `response` is the
    /// answer (a replay, 409 or 422) to give once `tx` is committed.
    pub async fn store_in(
        &self,
        tx: &mut fiscus_store::WriteTx,
        response: &StoredResponse,
    ) -> Result<Option<Response>, ApiError> {
        match &self.record {
            None => {
                if idempotency::complete(tx.conn(), &self.key_ref(), &self.lock_token, response).await? {
                    return Ok(None);
                }
                // A retry took the key over while this request ran; its effect is the one that counts.
                tx.discard_changes().await?;
                Ok(Some(ApiError::new(ErrorCode::IdempotencyKeyInUse).header(header::RETRY_AFTER, "1").into_response()))
            }
            Some(record) => {
                let fp = Fingerprint { method: &record.method, path: &record.path, body: &record.body_hash };
                let now = now_micros();
                let found = idempotency::record(
                    tx.conn(),
                    &self.key_ref(),
                    &fp,
                    &self.lock_token,
                    response,
                    now,
                    record.stale_after,
                    record.retain_for,
                )
                .await?;
                let Some(found) = found else { return Ok(None) };
                tx.discard_changes().await?;
                Ok(Some(answer(Ok(found))))
            }
        }
    }
}

impl IdempotencyHandle {
    /// How this key is written with a write handed to the store as appends (see `fiscus_store::appends`):
    /// recorded with it, or completing the reservation taken before the handler ran.
    pub fn key_write(&self, response: StoredResponse) -> KeyWrite {
        match &self.record {
            Some(record) => KeyWrite::Record(KeyRecord {
                workspace_id: self.workspace_id.clone(),
                application_id: self.application_id.clone(),
                key: self.key.clone(),
                method: record.method.clone(),
                path: record.path.clone(),
                fingerprint: record.body_hash.clone(),
                lock_token: self.lock_token.clone(),
                response,
                now: now_micros(),
                stale_after: record.stale_after,
                retain_for: record.retain_for,
            }),
            None => KeyWrite::Complete {
                workspace_id: self.workspace_id.clone(),
                application_id: self.application_id.clone(),
                key: self.key.clone(),
                lock_token: self.lock_token.clone(),
                response,
            },
        }
    }
}

/// The answer to a request whose appends were not written because its key is held (a replay, 409 or 422).
pub fn held(found: Reservation) -> Response {
    answer(Ok(found))
}

/// The response to a request whose key is held by a record (or could not be looked up).
fn answer(found: Result<Reservation, ApiError>) -> Response {
    let mut response = match found {
        Err(e) => e.into_response(),
        Ok(Reservation::Mismatch) => ApiError::new(ErrorCode::IdempotencyKeyReused).into_response(),
        Ok(Reservation::InFlight) => {
            ApiError::new(ErrorCode::IdempotencyKeyInUse).header(header::RETRY_AFTER, "1").into_response()
        }
        Ok(Reservation::Replay(stored)) => replay(stored),
        Ok(Reservation::Acquired { .. }) => {
            tracing::error!("an idempotency record was found acquired by this request");
            ApiError::internal().into_response()
        }
    };
    // Nothing is left to store for it.
    response.extensions_mut().insert(Completed);
    response
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
    // A route that takes larger bodies (inline panels, a CSV import) takes them with a key too.
    let limit = crate::body_limit::limit_for(&state, req.uri().path());
    let (mut parts, body) = req.into_parts();
    let bytes = match to_bytes(body, limit).await {
        Ok(b) => b,
        Err(_) => return ApiError::new(ErrorCode::PayloadTooLarge).into_response(),
    };
    let body_hash = fiscus_domain::evidence::hex(&Sha256::digest(&bytes));
    let path = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
    let operation = parts.extensions.get::<&'static fiscus_domain::catalogue::Operation>().copied();
    let settings = &state.settings;
    let mut handle = IdempotencyHandle {
        workspace_id: principal.tenant.workspace_id.clone(),
        application_id: principal.application_id.clone(),
        key,
        lock_token: fiscus_domain::ids::new_id("lck"),
        record: None,
    };
    let method = parts.method.as_str().to_string();
    let fp = Fingerprint { method: &method, path: &path, body: &body_hash };
    if operation.is_some_and(|op| RECORDED_WITH_EFFECT.contains(&op.id)) {
        // No lookup first: the record inserted with the effect finds any earlier one (and then this request's
        // effect is discarded), so a first request costs no extra round trip.
        handle.record = Some(RecordWithEffect {
            method: method.clone(),
            path: path.clone(),
            body_hash: body_hash.clone(),
            stale_after: settings.idempotency_stale_seconds as i64 * MICROS_PER_SECOND,
            retain_for: settings.idempotency_retention_seconds as i64 * MICROS_PER_SECOND,
        });
        parts.extensions.insert(handle.clone());
        let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
        return settle(&state, &handle, response).await;
    }
    // Settled keys are answered from a read, without a write transaction.
    let peeked = async {
        let mut conn = state.store.read().await?;
        idempotency::peek(&mut conn, &handle.key_ref(), &fp, now_micros()).await
    }
    .await;
    match peeked {
        Err(e) => return ApiError::from(e).into_response(),
        Ok(Some(Reservation::InFlight)) | Ok(Some(Reservation::Acquired { .. })) | Ok(None) => {}
        Ok(Some(settled)) => return without_marker(answer(Ok(settled))),
    }
    let reservation = reserve(&state, &handle, &method, &path, &body_hash).await;
    match reservation {
        Ok(Reservation::Acquired { .. }) => {
            parts.extensions.insert(handle.clone());
            let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
            settle(&state, &handle, response).await
        }
        other => without_marker(answer(other)),
    }
}

/// The `Completed` marker is for handlers' responses; a layer's own answer carries none.
fn without_marker(mut response: Response) -> Response {
    response.extensions_mut().remove::<Completed>();
    response
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
        if handle.record.is_some() {
            // Nothing was reserved, so nothing is released.
            return response;
        }
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
        let answer = handle.store_in(&mut tx, &stored).await?;
        tx.commit().await?;
        Ok::<Option<Response>, ApiError>(answer)
    }
    .await;
    match result {
        Ok(None) => {}
        // The key turned out to be held by another request's record: answer with it.
        Ok(Some(answer)) => return answer,
        Err(_) if handle.record.is_none() => {
            tracing::warn!("could not store an idempotent response");
        }
        // Nothing was recorded, so the response must not be given as if it were: a retry runs afresh.
        Err(e) => return e.into_response(),
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
