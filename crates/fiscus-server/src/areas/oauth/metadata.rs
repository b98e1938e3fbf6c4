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

/// Where the RFC 9728 metadata of the bearer MCP endpoint is served; a 401 from that endpoint points there.
pub const MCP_RESOURCE_METADATA: &str = "/.well-known/oauth-protected-resource/api/mcp";

/// RFC 9728 protected resource metadata of the MCP endpoint (`/api/mcp`), as MCP's authorization section
/// asks: the resource, the authorization server that issues its tokens, and the scope it needs.
pub async fn mcp_resource_metadata(headers: HeaderMap) -> Json<Value> {
    let issuer = issuer(&headers);
    Json(json!({
        "resource": format!("{issuer}/api/mcp"),
        "authorization_servers": [issuer],
        "scopes_supported": ["agents:mcp:read"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Fiscus MCP server",
        "resource_documentation": format!("{issuer}/docs"),
    }))
}
