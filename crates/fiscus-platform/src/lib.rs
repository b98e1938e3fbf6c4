//! The platform and OAuth area: the workspace, infrastructure reads, AI credits, the audit head and the
//! operation catalogue with its change ledger (`platform`, `catalogue_check`); OAuth client credentials with
//! revocation, introspection and metadata (`oauth`); evidence bundles (`evidence`); the agent-execution
//! gateway's reads (`agent_execution`); the workspace's intelligence summary (`intelligence`). Financial
//! Actions' routes are in `fiscus-actions`.
//!
//! It depends on the kernel, the HTTP crate, the domain, the store and `fiscus-actions` (the gateway reads
//! an action as the actions crate loads it), never on another area (a test reads `cargo metadata`).
//!
//! Why some types of the application layer derive `ToSchema`: a command that is a request body (a compute
//! request, a new call, a harvest request) is one type from the wire to the engine, checked once by serde
//! (`deny_unknown_fields`) and its schema's limits; a computation's answer is the result the response
//! carries, and where it is sealed (compute results, investment records) its hash is over that form. A wire
//! twin of each would be a field-by-field copy that can drift from what is sealed. Views that only present
//! stored rows live with the routes.
//!
//! How the area works, in prose: `README.md` beside this crate.

pub mod agent_execution;
pub mod catalogue_check;
pub mod evidence;
pub mod intelligence;
pub mod oauth;
pub mod platform;
pub mod tables;
pub mod views;

use fiscus_http::AppState;
use utoipa_axum::router::OpenApiRouter;

/// The area's bearer operations that only read.
pub fn reads() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().merge(platform::routes()).merge(intelligence::routes()).merge(evidence::reads())
}

/// The area's bearer operations that write or serve the agent-execution gateway (behind the idempotency and
/// request evidence layers too). The OAuth endpoints authenticate the client, not a bearer credential, and
/// are assembled apart (`oauth::routes`).
pub fn writes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().merge(agent_execution::routes()).merge(evidence::writes())
}
