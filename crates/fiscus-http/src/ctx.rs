//! `Ctx`: what a handler of an authenticated operation knows about its request, and the one way it writes.
//!
//! A writing handler opens a transaction, makes its change, calls [`Ctx::audit`] and finishes with
//! [`Ctx::respond`], which stores the idempotent response (when the request carried a key) and commits:
//! the change, its audit event and its idempotency record land together or not at all.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use fiscus_domain::actor::Actor;
use fiscus_domain::catalogue::Operation;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::{Principal, Tenant};
use fiscus_store::appends::{Appended, Appends};
use fiscus_store::idempotency::StoredResponse;
use fiscus_store::{Store, WriteTx};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

use crate::document::ApiDocument;
use crate::idempotency::{Completed, IdempotencyHandle, headers_json};
use crate::problem::ApiError;
use crate::request_id::RequestId;
use crate::signed::SignedClient;
use fiscus_kernel::governed::Caller;
use fiscus_kernel::governed::record::AuditEntry;

pub struct Ctx {
    pub principal: Arc<Principal>,
    pub operation: &'static Operation,
    pub request_id: String,
    pub idempotency: Option<IdempotencyHandle>,
    /// The signed execution client, when the request was signed (RFC 9421) rather than bearer-authenticated.
    pub signed: Option<Arc<SignedClient>>,
    /// The service's OpenAPI document (what it serves, the tools generated from it).
    pub api: Arc<ApiDocument>,
}

impl<S: Send + Sync> FromRequestParts<S> for Ctx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        // Both are put there by the authentication layer; their absence means the route was wired without
        // it, and the request is refused rather than served unauthenticated.
        let principal = parts.extensions.get::<Arc<Principal>>().cloned();
        let operation = parts.extensions.get::<&'static Operation>().copied();
        let api = parts.extensions.get::<Arc<ApiDocument>>().cloned();
        let (Some(principal), Some(operation), Some(api)) = (principal, operation, api) else {
            tracing::error!("handler reached without authentication");
            return Err(ApiError::new(ErrorCode::AuthenticationRequired));
        };
        Ok(Ctx {
            principal,
            operation,
            request_id: parts.extensions.get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default(),
            idempotency: parts.extensions.get::<IdempotencyHandle>().cloned(),
            signed: parts.extensions.get::<Arc<SignedClient>>().cloned(),
            api,
        })
    }
}

impl Ctx {
    pub fn tenant(&self) -> &Tenant {
        &self.principal.tenant
    }

    /// Who this request acts as, for the application layer: the application, with its request, credential
    /// and operation.
    pub fn caller(&self) -> Caller {
        Caller {
            actor: Actor::application(self.principal.application_id.clone()),
            request_id: Some(self.request_id.clone()),
            credential_id: Some(self.principal.credential_id.clone()),
            operation: Some(self.operation.id),
            action_kinds: self.signed.as_ref().map(|c| c.grant.action_kinds.clone()),
        }
    }

    /// Appends this request's audit event (a change that announces no lifecycle event) inside `tx`.
    pub async fn audit(&self, tx: &mut WriteTx, subject: Option<&str>, details: Value) -> Result<(), ApiError> {
        fiscus_kernel::governed::record::audit(tx, &self.caller(), &self.audit_entry(subject, details)).await?;
        Ok(())
    }

    /// Adds this request's audit event to `appends` (see [`Ctx::respond_appended`]).
    pub fn audit_appended(&self, appends: &mut Appends, subject: Option<&str>, details: Value) {
        fiscus_kernel::governed::record::audit_appended(appends, &self.caller(), &self.audit_entry(subject, details));
    }

    /// This request's audit entry: its operation, in its workspace and environment, now.
    fn audit_entry<'a>(&'a self, subject: Option<&'a str>, details: Value) -> AuditEntry<'a> {
        let tenant = &self.principal.tenant;
        AuditEntry {
            workspace_id: &tenant.workspace_id,
            environment: Some(tenant.environment),
            action: fiscus_domain::audit_action::AuditAction::Operation(self.operation),
            subject,
            details,
            occurred_at: now_micros(),
        }
    }

    /// Hands `appends` to the store with the idempotent response (if keyed), and answers once they are
    /// durable: the rows, their audit event and the key land together or not at all. If the key turned out
    /// to be held (a concurrent duplicate, a replay), nothing was written and the answer is what holds it.
    pub async fn respond_appended<T: Serialize>(
        &self,
        store: &Store,
        mut appends: Appends,
        status: StatusCode,
        body: &T,
    ) -> Result<Response, ApiError> {
        let (mut response, stored) = json_response(status, body)?;
        if let Some(handle) = &self.idempotency {
            appends.key(handle.key_write(stored));
            response.extensions_mut().insert(Completed);
        }
        match store.append(appends).await? {
            Appended::Written => Ok(response),
            Appended::Held(found) => Ok(crate::idempotency::held(found)),
        }
    }

    /// Stores the idempotent response with the effect (if keyed) and commits. If the key turned out to be
    /// held by another request (a concurrent duplicate), this request's effect is discarded and the answer
    /// is that request's outcome (see `http::idempotency`), given once the commit returned.
    pub async fn respond<T: Serialize>(
        &self,
        mut tx: WriteTx,
        status: StatusCode,
        body: &T,
    ) -> Result<Response, ApiError> {
        let response = self.respond_with(&mut tx, status, body).await?;
        tx.commit().await?;
        Ok(response)
    }

    /// As [`Ctx::respond`], but the idempotency record keeps `stored` instead of `body`: for a response that
    /// carries a secret shown once (a replay answers without it; the secret is never stored in clear).
    pub async fn respond_once<T: Serialize, S: Serialize>(
        &self,
        mut tx: WriteTx,
        status: StatusCode,
        body: &T,
        stored: &S,
    ) -> Result<Response, ApiError> {
        let mut response = self.respond_with(&mut tx, status, stored).await?;
        if response.extensions().get::<Completed>().is_some() || self.idempotency.is_none() {
            let bytes = serde_json::to_vec(body).map_err(|e| ApiError::from(anyhow::Error::from(e)))?;
            let (mut parts, _) = response.into_parts();
            parts.headers.remove(header::CONTENT_LENGTH);
            response = Response::from_parts(parts, axum::body::Body::from(bytes));
        }
        tx.commit().await?;
        Ok(response)
    }

    async fn respond_with<T: Serialize>(
        &self,
        tx: &mut WriteTx,
        status: StatusCode,
        body: &T,
    ) -> Result<Response, ApiError> {
        let (mut response, stored) = json_response(status, body)?;
        if let Some(handle) = &self.idempotency {
            if let Some(answer) = handle.store_in(tx, &stored).await? {
                return Ok(answer);
            }
            response.extensions_mut().insert(Completed);
        }
        Ok(response)
    }
}

/// `body` as a JSON response, and as the idempotency record stores it.
fn json_response<T: Serialize>(status: StatusCode, body: &T) -> Result<(Response, StoredResponse), ApiError> {
    let bytes = serde_json::to_vec(body).map_err(|e| ApiError::from(anyhow::Error::from(e)))?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let mut response = (status, bytes).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let stored = StoredResponse { status: status.as_u16(), headers: headers_json(response.headers()), body: text };
    Ok((response, stored))
}
