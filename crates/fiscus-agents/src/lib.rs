//! The agents, workflows and calls area: workflow definitions, runs and their runtime ([`workflows`]),
//! Agent Spaces and their runs ([`spaces`]), client calls and transcription ([`calls`]), and their
//! operations, including the MCP and A2A gateways that dispatch tool calls through the service's own routes
//! ([`routes`]).
//!
//! It depends on the kernel, the HTTP crate, the domain and the store, never on another area (a test reads
//! `cargo metadata`).
//!
//! Why some types of the application layer derive `ToSchema`: a command that is a request body (a compute
//! request, a new call, a harvest request) is one type from the wire to the engine, checked once by serde
//! (`deny_unknown_fields`) and its schema's limits; a computation's answer is the result the response
//! carries, and where it is sealed (compute results, investment records) its hash is over that form. A wire
//! twin of each would be a field-by-field copy that can drift from what is sealed. Views that only present
//! stored rows live with the routes.
//!
//! How the area works, in prose: `README.md` beside this crate.

pub mod calls;
pub mod console;
pub mod dispatch;
pub mod routes;
pub mod rules;
pub mod spaces;
pub mod tables;
pub mod tools;
pub mod workflows;

use fiscus_http::AppState;
use utoipa_axum::router::OpenApiRouter;

/// The area's operations that only read.
pub fn reads() -> OpenApiRouter<AppState> {
    routes::workflows::routes()
}

/// The area's operations that write or serve the agent gateways (behind the idempotency and request
/// evidence layers too).
pub fn writes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(routes::workflows::writing_routes())
        .merge(routes::calls::writing_routes())
        .merge(routes::agents::routes())
}
