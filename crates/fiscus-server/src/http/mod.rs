//! Cross-cutting HTTP layers, in the order a request meets them: request id → body limit → metrics →
//! authentication (bearer credential or request signature, application status, environment, entitlement,
//! grant, scope, rate limit) →
//! idempotency → the handler. Plus the extractors handlers use and the problem+json error type.

pub mod agent_evidence;
pub mod auth;
pub mod body;
pub mod body_limit;
pub mod ctx;
pub mod dispatched;
pub mod edge;
pub mod form;
pub mod idempotency;
pub mod json;
pub mod metrics;
pub mod monthly_quota;
pub mod problem;
pub mod query;
pub mod rate_limit;
pub mod request_id;
pub mod signed;
pub mod standing;
pub mod usage;
