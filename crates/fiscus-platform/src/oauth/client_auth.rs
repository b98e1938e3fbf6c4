//! Client authentication and the RFC 6749 §5.2 error response.

use crate::views::OAuthErrorResponse;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::credentials;
use fiscus_domain::ijson::has_nul;
use fiscus_store::credentials::OAuthClientRow;
use std::collections::HashMap;
use std::net::SocketAddr;

use fiscus_http::AppState;
use fiscus_http::form::FormRefusal;
use fiscus_kernel::settings::ServiceClass;

/// An RFC 6749 §5.2 error.
pub struct OAuthError {
    pub status: StatusCode,
    pub error: &'static str,
    pub description: String,
    /// Seconds to wait, on a throttled request (429 with `Retry-After`).
    pub retry_after: Option<u64>,
}

impl OAuthError {
    pub fn bad_request(error: &'static str, description: impl Into<String>) -> OAuthError {
        OAuthError { status: StatusCode::BAD_REQUEST, error, description: description.into(), retry_after: None }
    }

    pub fn invalid_client() -> OAuthError {
        OAuthError {
            status: StatusCode::UNAUTHORIZED,
            error: "invalid_client",
            description: "client authentication failed".into(),
            retry_after: None,
        }
    }

    pub fn server_error() -> OAuthError {
        OAuthError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            error: "server_error",
            description: "internal error".into(),
            retry_after: None,
        }
    }
}

/// The token endpoint's throttle: every request counts, failed ones included, so that guessing secrets or
/// minting tokens in a loop is slowed per client id and per network address alike.
pub fn throttle(state: &AppState, bucket: &str, class: &ServiceClass) -> Result<(), OAuthError> {
    let now = (now_micros() / MICROS_PER_SECOND) as u64;
    let decision = state.http.rate_limiter.check(bucket, class, now);
    if decision.allowed {
        return Ok(());
    }
    Err(OAuthError {
        status: StatusCode::TOO_MANY_REQUESTS,
        // RFC 6749 §4.1.2.1's name for "cannot handle the request now"; the status and Retry-After say why.
        error: "temporarily_unavailable",
        description: format!("too many requests; retry in {} s", decision.reset_in),
        retry_after: Some(decision.reset_in),
    })
}

/// Counts the request against its network address's bucket (when the address is known) before the
/// endpoint reads anything; the OAuth handlers take it as their first extractor.
pub struct AddressThrottle;

impl FromRequestParts<AppState> for AddressThrottle {
    type Rejection = OAuthError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, OAuthError> {
        match parts.extensions.get::<ConnectInfo<SocketAddr>>() {
            Some(ConnectInfo(peer)) => {
                let bucket = format!("oauth-address:{}", peer.ip());
                throttle(state, &bucket, &state.settings.token_requests_per_address).map(|()| AddressThrottle)
            }
            None => Ok(AddressThrottle),
        }
    }
}

impl From<fiscus_store::StoreError> for OAuthError {
    fn from(e: fiscus_store::StoreError) -> OAuthError {
        tracing::error!(error = %e, "store error at the token endpoint");
        OAuthError::server_error()
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let body = OAuthErrorResponse { error: self.error.into(), error_description: Some(self.description) };
        let mut response = (self.status, axum::Json(body)).into_response();
        no_store(response.headers_mut());
        if let Some(seconds) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&seconds.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        // RFC 9110 §15.5.2: every 401 carries a challenge; RFC 6749 §2.3.1 names HTTP Basic as the scheme.
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"fiscus\""));
        }
        response
    }
}

/// RFC 6749 §5.1: responses carrying tokens must not be cached.
pub fn no_store(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}

/// The parameters the OAuth endpoints read; any other is ignored.
const KNOWN_PARAMETERS: [&str; 6] = ["grant_type", "scope", "client_id", "client_secret", "token", "token_type_hint"];

/// Parses an `application/x-www-form-urlencoded` body; a repeated parameter is an error (RFC 6749 §3.2).
pub fn parse_form(headers: &HeaderMap, body: &[u8]) -> Result<HashMap<String, String>, OAuthError> {
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !content_type.to_ascii_lowercase().starts_with("application/x-www-form-urlencoded") {
        return Err(OAuthError::bad_request("invalid_request", "the body must be application/x-www-form-urlencoded"));
    }
    let pairs = fiscus_http::form::pairs(body).map_err(|refusal| match refusal {
        FormRefusal::Malformed => OAuthError::bad_request("invalid_request", "the form body is malformed"),
        FormRefusal::Nul(name) => OAuthError::bad_request(
            "invalid_request",
            format!("parameter `{}` contains the character U+0000, which is not accepted", name.replace('\0', "")),
        ),
    })?;
    // RFC 6749 §3.1: no parameter may be repeated (whatever its name or value); then a parameter without a
    // value is as if omitted, and an unknown one is ignored.
    let mut names = std::collections::HashSet::new();
    if let Some((k, _)) = pairs.iter().find(|(k, _)| !names.insert(k.as_str())) {
        return Err(OAuthError::bad_request("invalid_request", format!("parameter `{k}` is repeated")));
    }
    Ok(pairs.into_iter().filter(|(k, v)| !v.is_empty() && KNOWN_PARAMETERS.contains(&k.as_str())).collect())
}

/// Authenticates the client by HTTP Basic or by form fields (not both), and returns its row.
pub async fn authenticate_client(
    state: &AppState,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<OAuthClientRow, OAuthError> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .map(|(_, rest)| rest.trim().to_string());
    let in_form = form.contains_key("client_secret");
    let (client_id, secret) = match (basic, in_form) {
        (Some(_), true) => {
            return Err(OAuthError::bad_request("invalid_request", "use one client authentication method, not two"));
        }
        (Some(encoded), false) => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or(OAuthError::invalid_client())?;
            let (id, secret) = decoded.split_once(':').ok_or(OAuthError::invalid_client())?;
            let (id, secret) = (form_decode(id), form_decode(secret));
            if has_nul(&id) || has_nul(&secret) {
                return Err(OAuthError::bad_request(
                    "invalid_request",
                    "the Basic credentials contain the character U+0000, which is not accepted",
                ));
            }
            (id, secret)
        }
        (None, true) => {
            (form.get("client_id").cloned().unwrap_or_default(), form.get("client_secret").cloned().unwrap_or_default())
        }
        (None, false) => return Err(OAuthError::invalid_client()),
    };
    if client_id.is_empty() || client_id.len() > 64 {
        return Err(OAuthError::invalid_client());
    }
    throttle(state, &format!("oauth-client:{client_id}"), &state.settings.token_requests_per_client)?;
    let mut conn = state.store.read().await?;
    let client = fiscus_store::credentials::find_oauth_client(&mut conn, &client_id)
        .await?
        .ok_or(OAuthError::invalid_client())?;
    let shaped = credentials::parse(&secret).is_some_and(|p| p.kind == credentials::SecretKind::ClientSecret);
    if !shaped
        || client.status != credentials::CredentialStatus::Active
        || !credentials::verify(&state.server_key, &secret, &client.secret_hash)
    {
        return Err(OAuthError::invalid_client());
    }
    Ok(client)
}

/// `application/x-www-form-urlencoded` decoding of one Basic credential half (RFC 6749 §2.3.1).
fn form_decode(s: &str) -> String {
    serde_urlencoded::from_str::<Vec<(String, String)>>(&format!("v={s}"))
        .ok()
        .and_then(|mut v| v.pop())
        .map(|(_, v)| v)
        .unwrap_or_default()
}
