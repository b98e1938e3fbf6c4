//! The quant and models area: compute jobs on the numeric engine (optimisation, simulation, backtests,
//! model runs, scenarios, forecasts, generative markets, tournaments, research runs) in [`compute`], LQM
//! Builder and QLMs in [`lqm`], and their operations in [`routes`].
//!
//! It depends on the kernel, the HTTP crate, the domain, the store and the engine, never on another area
//! (a test reads `cargo metadata`).
//!
//! Why some types of the application layer derive `ToSchema`: a command that is a request body (a compute
//! request, a new call, a harvest request) is one type from the wire to the engine, checked once by serde
//! (`deny_unknown_fields`) and its schema's limits; a computation's answer is the result the response
//! carries, and where it is sealed (compute results, investment records) its hash is over that form. A wire
//! twin of each would be a field-by-field copy that can drift from what is sealed. Views that only present
//! stored rows live with the routes.
//!
//! How the area works, in prose: `README.md` beside this crate.

pub mod compute;
pub mod console;
pub mod lqm;
pub mod routes;
pub mod rules;
pub mod tables;

use fiscus_http::AppState;
use utoipa_axum::router::OpenApiRouter;

/// The area's operations that only read.
pub fn reads() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(routes::quant::routes())
        .merge(routes::ml::routes())
        .merge(routes::planning::routes())
        .merge(routes::generative::routes())
        .merge(routes::lqm::routes())
}

/// The area's operations that write (behind the idempotency layer too).
pub fn writes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(routes::quant::writing_routes())
        .merge(routes::ml::writing_routes())
        .merge(routes::planning::writing_routes())
        .merge(routes::generative::writing_routes())
        .merge(routes::lqm::writing_routes())
}
