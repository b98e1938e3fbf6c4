//! Signed execution clients on the machine plane: RFC 9421 request signatures (Ed25519) and RFC 9530
//! `Content-Digest`, checked in this order and failing closed at the first refusal:
//!
//! 1. the request is on the agent-execution gateway and carries no bearer credential as well (401);
//! 2. `Signature-Input`/`Signature` parse, cover what must be covered, and `created` is fresh (401);
//! 3. `keyid` names a client whose latest decision grants it, unexpired, under an active application in
//!    an environment it may use (401/403);
//! 4. the body matches its `Content-Digest`, and the signature verifies over the request as it arrived (401);
//! 5. the grant allows the operation (422 `outside_grant`);
//! 6. the nonce was not used before (401 `signature_replayed`): in this node's memory at once, and durably —
//!    before the handler for a request that may change something, and in the same transaction as the
//!    request evidence for a read (whose response is withheld until then, see `http::agent_evidence`).
//!
//! Then the same scope check, rate limit and usage accounting as a bearer credential follow (`http::auth`),
//! plus the client's own per-minute limit and monthly quota. A signature proves which client asks; it never
//! approves or executes anything by itself (the action gates decide, as for any application).

use crate::http_signature::{self, RequestParts};
use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{Method, header};
use fiscus_domain::catalogue::Operation;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::credentials::{AppStatus, Environment};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::execution_client::{ClientStatus, Grant};
use fiscus_domain::tenancy::{CredentialKind, Principal, Tenant};
use std::collections::HashMap;
use std::sync::Mutex;

use crate::auth::Authenticated;
use crate::problem::ApiError;
use crate::state::AppState;

pub static SIGNATURE_INPUT: header::HeaderName = header::HeaderName::from_static("signature-input");
pub static SIGNATURE: header::HeaderName = header::HeaderName::from_static("signature");

/// A little clock skew tolerated for `created` in the future.
const SKEW_SECONDS: i64 = 5;

/// Who signed the request, and what their grant allows; in the request's extensions for handlers.
#[derive(Clone, Debug)]
pub struct SignedClient {
    pub client_id: String,
    pub name: String,
    pub grant: Grant,
    pub decision_version: i64,
    pub decision_hash: String,
    /// The nonce this request used, and until when it must stay on record.
    pub nonce: String,
    pub nonce_expires_at: i64,
    /// Whether the nonce is already on record (claimed before the handler); otherwise the request evidence
    /// claims it.
    pub nonce_claimed: bool,
}

pub fn is_signed(req: &Request) -> bool {
    req.headers().contains_key(&SIGNATURE_INPUT) || req.headers().contains_key(&SIGNATURE)
}

fn refused(detail: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidSignature).detail(detail)
}

fn replayed() -> ApiError {
    ApiError::new(ErrorCode::SignatureReplayed)
}

/// All values of a header, combined as RFC 9110 section 5.3 combines field lines.
fn combined(req: &Request, name: &header::HeaderName) -> Option<String> {
    let values: Vec<&str> = req.headers().get_all(name).iter().filter_map(|v| v.to_str().ok()).collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// Authenticates a signed request; returns the request (its body read and put back), the principal, and
/// the client.
pub async fn authenticate(
    state: &AppState,
    req: Request,
    operation: &'static Operation,
) -> Result<(Request, Authenticated, SignedClient), ApiError> {
    if !operation.path.starts_with("/agent-execution/") {
        return Err(refused(
            "signed requests are accepted on the agent-execution gateway only (/api/v2/agent-execution/…)",
        ));
    }
    if req.headers().contains_key(header::AUTHORIZATION) {
        return Err(refused("send either a bearer credential or a request signature, not both"));
    }
    let (Some(input), Some(signature)) = (combined(&req, &SIGNATURE_INPUT), combined(&req, &SIGNATURE)) else {
        return Err(refused("a signed request carries both Signature-Input and Signature (RFC 9421)"));
    };
    let signed = http_signature::parse(&input, &signature).map_err(|r| refused(r.to_string()))?;
    let now = now_micros();
    let now_s = now / MICROS_PER_SECOND;
    let window = i64::try_from(state.settings.signature_window_seconds).unwrap_or(300);
    signed.check_freshness(now_s, window, SKEW_SECONDS).map_err(|r| refused(r.to_string()))?;

    // The client named by keyid, and the standing it acts with.
    let resolved = state.store.resolve_client(&signed.keyid).await?;
    let unknown = || refused("the keyid does not name an active signed client");
    let Some(resolved) = resolved else { return Err(unknown()) };
    let standing = &resolved.standing;
    let grant = match (standing.status(), standing.grant()) {
        (ClientStatus::Active, Some(grant)) => grant.clone(),
        _ => return Err(unknown()),
    };
    if grant.expires_at.is_some_and(|at| at <= now) {
        return Err(refused("the client's grant has expired"));
    }
    match AppStatus::parse(&resolved.app_status) {
        Some(AppStatus::Active) => {}
        _ => return Err(refused("the client's application is not active")),
    }
    let environment = standing.client.environment;
    if grant.environment != environment {
        return Err(ApiError::internal());
    }
    if environment == Environment::Production && !resolved.production_access {
        return Err(ApiError::new(ErrorCode::ProductionAccessDisabled));
    }
    let Some(key) = resolved.verifying_key else {
        tracing::error!(client = %standing.client.id, "a stored client key does not decode");
        return Err(ApiError::internal());
    };

    // The body, its digest and the signature over the request as it arrived.
    let (parts, body) = req.into_parts();
    let bytes =
        to_bytes(body, state.settings.body_limit_bytes).await.map_err(|_| ApiError::new(ErrorCode::PayloadTooLarge))?;
    let has_body = !bytes.is_empty();
    signed.check_coverage(has_body).map_err(|r| refused(r.to_string()))?;
    let digest_header = parts.headers.get("content-digest").and_then(|v| v.to_str().ok());
    if has_body || digest_header.is_some() {
        http_signature::check_content_digest(digest_header, &bytes).map_err(|r| refused(r.to_string()))?;
    }
    let (scheme, authority) = match &state.settings.public_url {
        Some(url) => split_origin(url),
        None => (
            "http".to_string(),
            parts.headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("").to_string(),
        ),
    };
    // Scoped: the header lookup borrows the request and must not live across an await.
    {
        let headers = &parts.headers;
        let lookup = |name: &str| -> Vec<String> {
            headers.get_all(name).iter().filter_map(|v| v.to_str().ok()).map(str::to_string).collect()
        };
        let request = RequestParts {
            method: parts.method.as_str(),
            scheme: &scheme,
            authority: &authority,
            path: parts.uri.path(),
            query: parts.uri.query(),
            header: &lookup,
        };
        signed.verify(&request, &key).map_err(|r| refused(r.to_string()))?;
    }

    // A valid signature outside the grant: refused before its nonce is spent.
    if !grant.allows(operation.id) {
        return Err(ApiError::new(ErrorCode::OutsideGrant)
            .detail(format!("the grant of client {} does not include the operation {}", signed.keyid, operation.id)));
    }

    // The nonce: once per client while the signature could be fresh.
    let nonce_expires_at = (signed.created + window + SKEW_SECONDS + 1) * MICROS_PER_SECOND;
    let nonce = signed.nonce.clone().ok_or_else(ApiError::internal)?;
    if !state.http.nonces.first_use(&signed.keyid, &nonce, nonce_expires_at, now) {
        return Err(replayed());
    }
    let safe = parts.method == Method::GET || parts.method == Method::HEAD;
    if !safe {
        let mut tx = state.store.begin().await?;
        if !fiscus_store::execution_clients::claim_nonce(&mut tx, &signed.keyid, &nonce, nonce_expires_at).await? {
            return Err(replayed());
        }
        tx.commit().await?;
    }

    let latest = standing.latest.as_ref().ok_or_else(ApiError::internal)?;
    let workspace = resolved.workspace_entitlement;
    let principal = Principal {
        tenant: Tenant { workspace_id: resolved.workspace_id.clone(), environment },
        application_id: standing.client.application_id.clone(),
        credential_id: standing.client.id.clone(),
        credential_kind: CredentialKind::SignedClient,
        scopes: resolved.app_scopes.intersection(&workspace),
        service_class: resolved.service_class.clone(),
    };
    let client = SignedClient {
        client_id: standing.client.id.clone(),
        name: standing.client.name.clone(),
        grant,
        decision_version: latest.version,
        decision_hash: latest.decision_hash.clone(),
        nonce,
        nonce_expires_at,
        nonce_claimed: !safe,
    };
    Ok((
        Request::from_parts(parts, Body::from(bytes)),
        Authenticated { principal, workspace_entitlement: workspace },
        client,
    ))
}

/// `("https", "fiscus.example:8443")` of a configured public URL.
fn split_origin(url: &str) -> (String, String) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split('/').next().unwrap_or("");
    (scheme.to_ascii_lowercase(), authority.to_string())
}

/// Nonces this node accepted, until their signatures could no longer be fresh: a replay to the same node is
/// refused before anything runs. The durable record (`signature_nonces`) covers other nodes and restarts.
#[derive(Default)]
pub struct NonceMemory {
    seen: Mutex<HashMap<(String, String), i64>>,
}

/// Beyond this many remembered nonces, expired ones are forgotten; if none has expired, the oldest half is,
/// and the durable record still refuses their replays.
const MAX_REMEMBERED: usize = 200_000;

impl NonceMemory {
    /// Records the nonce; `false` when this node saw it already.
    pub fn first_use(&self, client_id: &str, nonce: &str, expires_at: i64, now: i64) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() >= MAX_REMEMBERED {
            seen.retain(|_, until| *until > now);
            if seen.len() >= MAX_REMEMBERED {
                let mut untils: Vec<i64> = seen.values().copied().collect();
                untils.sort_unstable();
                let cut = untils[untils.len() / 2];
                seen.retain(|_, until| *until > cut);
            }
        }
        let key = (client_id.to_string(), nonce.to_string());
        match seen.get(&key) {
            Some(until) if *until > now => false,
            _ => {
                seen.insert(key, expires_at);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nonce_is_accepted_once_per_client_until_it_expires() {
        let m = NonceMemory::default();
        assert!(m.first_use("ecl_a", "n1", 100, 0));
        assert!(!m.first_use("ecl_a", "n1", 100, 50));
        assert!(m.first_use("ecl_b", "n1", 100, 50));
        assert!(m.first_use("ecl_a", "n1", 300, 101));
    }

    #[test]
    fn the_origin_of_a_public_url() {
        assert_eq!(split_origin("https://Fiscus.example:8443/base"), ("https".into(), "Fiscus.example:8443".into()));
        assert_eq!(split_origin("http://localhost:8080"), ("http".into(), "localhost:8080".into()));
    }
}
