//! The OAuth metadata documents: RFC 8414 authorization server metadata and the MCP endpoint's RFC 9728
//! protected resource metadata, both naming the issuer the client reached.

use axum::Json;
use axum::http::HeaderMap;
use fiscus_domain::scopes::SCOPES;

use fiscus_http::issuer::issuer;
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
