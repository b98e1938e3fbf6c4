//! The state every handler shares: the node's [`Services`] (what application layers and workers are given)
//! and, apart from them, what only the HTTP layer holds (rate limits, metrics, signature nonces, monthly
//! quotas, the body budget). It dereferences to the services, so a handler passes `&state` where an
//! application function takes `&Services`. It holds no router: tool calls are dispatched through what the
//! composition hands the agents area (`fiscus_agents::dispatch::Dispatcher`).

use fiscus_kernel::Services;
use std::sync::Arc;

use crate::body_limit::LargeBody;
use crate::metrics::Metrics;
use crate::monthly_quota::MonthlyQuota;
use crate::rate_limit::RateLimiter;
use crate::signed::NonceMemory;

#[derive(Clone)]
pub struct AppState {
    pub services: Services,
    pub http: Arc<HttpParts>,
}

/// What only the HTTP layer holds.
#[derive(Default)]
pub struct HttpParts {
    pub rate_limiter: RateLimiter,
    pub metrics: Metrics,
    /// Signature nonces this node accepted (signed execution clients).
    pub nonces: NonceMemory,
    /// Monthly request counts of signed execution clients.
    pub monthly: MonthlyQuota,
    /// The service's OpenAPI document, set once with the router (`app::build`).
    pub api: std::sync::OnceLock<Arc<crate::document::ApiDocument>>,
    /// Routes whose bodies may be larger than the configured limit (`http::body_limit`).
    pub large_bodies: Vec<LargeBody>,
    /// The budget of request body bytes in flight (`http::admission`).
    pub admission: crate::admission::Admission,
}

impl AppState {
    pub fn new(services: Services, large_bodies: Vec<LargeBody>) -> AppState {
        let s = &services.settings;
        let largest = large_bodies.iter().map(|l| l.limit).max().unwrap_or(0).max(s.body_limit_bytes);
        let admission = crate::admission::Admission::new(
            s.body_bytes_in_flight,
            s.body_bytes_in_flight_per_workspace,
            largest,
            std::time::Duration::from_millis(s.body_admission_wait_ms),
        );
        AppState { services, http: Arc::new(HttpParts { large_bodies, admission, ..HttpParts::default() }) }
    }
}

impl std::ops::Deref for AppState {
    type Target = Services;
    fn deref(&self) -> &Services {
        &self.services
    }
}
