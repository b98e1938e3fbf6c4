//! The agents, workflows and calls area: workflow definitions, runs and their runtime ([`workflows`]),
//! Agent Spaces and their runs ([`spaces`]), client calls and transcription ([`calls`]), and their
//! operations, including the MCP and A2A gateways that dispatch tool calls through the service's own routes
//! ([`routes`]).
//!
//! It depends on the kernel, the HTTP crate, the domain and the store, never on another area (a test reads
//! `cargo metadata`).
//!
//! How the area works, in prose: `README.md` beside this crate.

pub mod calls;
pub mod console;
pub mod dispatch;
pub mod routes;
pub mod spaces;
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
