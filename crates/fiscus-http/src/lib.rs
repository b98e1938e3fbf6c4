//! Cross-cutting HTTP layers, in the order a request meets them: request id → body limit → metrics →
//! authentication (bearer credential or request signature, application status, environment, entitlement,
//! grant, scope, rate limit) → admission of the body (a budget of bytes in flight, per workspace) →
//! idempotency → the handler. Plus the extractors handlers use, the problem+json error type, the state
//! handlers share ([`AppState`]: the kernel's services and what only HTTP holds), the service's OpenAPI
//! document as handed down at start, connection limits and the docs pages.
//!
//! Invariants: this crate depends on the kernel, the domain and the store, never on an area crate or the
//! composition (a test reads `cargo metadata`); what an area needs the layers to know (a route's larger
//! body limit) is declared by the area and listed by the composition.

pub mod admission;
pub mod agent_evidence;
pub mod auth;
pub mod body;
pub mod body_limit;
pub mod columnar;
pub mod connections;
pub mod created;
pub mod ctx;
pub mod dispatched;
pub mod docs;
pub mod document;
pub mod edge;
pub mod form;
pub mod http_signature;
pub mod idempotency;
pub mod issuer;
pub mod json;
pub mod list;
pub mod metrics;
pub mod monthly_quota;
pub mod problem;
pub mod query;
pub mod rate_limit;
pub mod request_id;
pub mod signed;
pub mod standing;
pub mod state;
pub mod tables;

pub use state::AppState;
