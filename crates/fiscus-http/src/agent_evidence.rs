//! Request evidence of the agent-execution gateway: each request to an `/agent-execution/…` operation,
//! accepted or refused, is recorded with hashes of its body and of the response and sealed, and the response
//! names it in `Agent-Request-Id` (readable at `GET /agent-execution/requests/{uid}`).

use crate::tables::agent_requests::AgentRequestRow;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use fiscus_domain::catalogue::Operation;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::evidence::{seal, seal_bytes};
use fiscus_domain::tenancy::Principal;
use serde_json::json;
use std::sync::Arc;

use crate::problem::ApiError;
use crate::request_id::RequestId;
use crate::signed::SignedClient;
use crate::state::AppState;

pub static AGENT_REQUEST_ID: HeaderName = HeaderName::from_static("agent-request-id");

pub async fn layer(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let operation = req.extensions().get::<&'static Operation>().copied();
    let Some(operation) = operation.filter(|op| op.path.starts_with("/agent-execution/")) else {
        return next.run(req).await;
    };
    let Some(principal) = req.extensions().get::<Arc<Principal>>().cloned() else {
        return ApiError::internal().into_response();
    };
    let request_id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
    // A signed read whose nonce is not on record yet: it is claimed with the evidence, and the response is
    // given only once both are committed (see `http::signed`).
    let unclaimed = req.extensions().get::<Arc<SignedClient>>().filter(|c| !c.nonce_claimed).cloned();
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let (parts, body) = req.into_parts();
    let Ok(bytes) = to_bytes(body, state.settings.body_limit_bytes).await else {
        return ApiError::new(ErrorCode::PayloadTooLarge).into_response();
    };
    let request_hash = seal_bytes(&bytes);
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    let (mut parts, body) = response.into_parts();
    let Ok(out) = to_bytes(body, usize::MAX).await else { return ApiError::internal().into_response() };
    let now = now_micros();
    let id = fiscus_domain::ids::new_id("areq");
    let mut row = AgentRequestRow {
        id: id.clone(),
        application_id: principal.application_id.clone(),
        credential_id: principal.credential_id.clone(),
        operation: operation.id.to_string(),
        method,
        path,
        status: i64::from(parts.status.as_u16()),
        request_hash,
        response_hash: seal_bytes(&out),
        evidence_hash: String::new(),
        request_id,
        created_at: now,
    };
    row.evidence_hash = seal(&json!({
        "object": "agent_request",
        "id": row.id,
        "workspace_id": principal.tenant.workspace_id,
        "environment": principal.tenant.environment.as_str(),
        "application_id": row.application_id,
        "credential_id": row.credential_id,
        "operation": row.operation,
        "method": row.method,
        "path": row.path,
        "status": row.status,
        "request_hash": row.request_hash,
        "response_hash": row.response_hash,
        "request_id": row.request_id,
        "created_at": rfc3339(now),
    }))
    .unwrap_or_default();
    let recorded = async {
        let mut tx = state.store.begin().await?;
        // An unclaimed signed read spends its nonce with this row (unique per client and nonce).
        let nonce = unclaimed.as_ref().map(|c| c.nonce.as_str());
        match crate::tables::agent_requests::insert(&mut tx, &principal.tenant, &row, nonce).await {
            Ok(()) => {}
            Err(fiscus_store::StoreError::Conflict(_)) if nonce.is_some() => return Ok(false),
            Err(e) => return Err(e),
        }
        tx.commit().await?;
        Ok::<bool, fiscus_store::StoreError>(true)
    }
    .await;
    match recorded {
        Ok(true) => {
            if let Ok(v) = HeaderValue::from_str(&id) {
                parts.headers.insert(AGENT_REQUEST_ID.clone(), v);
            }
        }
        // Another node served this signature already: this answer is never given.
        Ok(false) => return ApiError::new(ErrorCode::SignatureReplayed).into_response(),
        Err(e) if unclaimed.is_some() => {
            tracing::error!(error = %e, "could not record a signed request's nonce; the response is withheld");
            return ApiError::from(e).into_response();
        }
        Err(e) => tracing::error!(error = %e, "could not record agent request evidence"),
    }
    Response::from_parts(parts, Body::from(out))
}
