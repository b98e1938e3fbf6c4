use axum::Json;
use axum::http::HeaderMap;
use fiscus_domain::scopes::SCOPES;
use serde_json::{Value, json};

/// RFC 8414 authorization server metadata at `/.well-known/oauth-authorization-server`.
pub async fn authorization_server_metadata(headers: HeaderMap) -> Json<Value> {
    let issuer = issuer(&headers);
    Json(json!({
        "issuer": issuer,
        "token_endpoint": format!("{issuer}/api/v2/oauth/token"),
        "revocation_endpoint": format!("{issuer}/api/v2/oauth/revoke"),
        "introspection_endpoint": format!("{issuer}/api/v2/oauth/introspect"),
        "grant_types_supported": ["client_credentials"],
        "response_types_supported": [],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "scopes_supported": SCOPES.as_slice(),
        "service_documentation": format!("{issuer}/docs"),
    }))
}

/// The issuer is the origin the client reached us at (`X-Forwarded-Proto` respected behind a proxy).
pub fn issuer(headers: &HeaderMap) -> String {
    let host = headers.get(axum::http::header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("localhost");
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .filter(|s| *s == "https" || *s == "http")
        .unwrap_or("http");
    format!("{scheme}://{host}")
}
