//! OAuth 2.0 client credentials (RFC 6749 §4.4) with revocation (RFC 7009), introspection (RFC 7662) and
//! authorization server metadata (RFC 8414).
//!
//! These endpoints authenticate the *client* (HTTP Basic, as RFC 6749 §2.3.1 requires servers to support,
//! or `client_id`/`client_secret` form fields, as the seed shows), not a bearer credential, and answer in
//! the RFCs' own JSON shapes rather than problem+json, because that is what unmodified OAuth client libraries
//! parse. They are outside the `Idempotency-Key` contract: a replay would have to store a live token.

mod client_auth;
mod metadata;
mod token;

pub use metadata::{authorization_server_metadata, mcp_resource_metadata};

use fiscus_http::AppState;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(token::post_token))
        .routes(routes!(token::post_revoke))
        .routes(routes!(token::post_introspect))
}
