//! Who this service is to an OAuth client: the issuer (the origin the client reached) and where the MCP
//! endpoint's protected resource metadata is served. The authentication layer names both in a 401 from
//! the MCP endpoint; the OAuth area serves the metadata documents.

use axum::http::HeaderMap;

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
