//! The state every handler shares.

use crate::areas::agents::invocation_log::InvocationLog;
use crate::http::metrics::Metrics;
use crate::http::monthly_quota::MonthlyQuota;
use crate::http::rate_limit::RateLimiter;
use crate::http::signed::NonceMemory;
use crate::http::usage::UsageRecorder;
use crate::secret_key::KeySource;
use crate::settings::Settings;
use fiscus_store::Store;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub store: Store,
    pub settings: Settings,
    /// HMAC key for credential hashes; never logged, never returned.
    pub server_key: Vec<u8>,
    pub key_source: KeySource,
    pub rate_limiter: RateLimiter,
    pub metrics: Metrics,
    pub usage: UsageRecorder,
    /// Signature nonces this node accepted (signed execution clients).
    pub nonces: NonceMemory,
    /// Monthly request counts of signed execution clients.
    pub monthly: MonthlyQuota,
    /// Invocation rows of read tool calls waiting for the next flush.
    pub invocations: InvocationLog,
    /// Pinned answers for webhook host names (from the settings; tests may change them at run time).
    pub webhook_hosts: crate::outbound::HostPins,
    /// The service's own router, set once built: tool calls are dispatched through it
    /// (`areas::agents::dispatch`).
    pub router: std::sync::OnceLock<axum::Router>,
    /// Decoded price series of immutable datasets (`series_cache`).
    pub series: crate::series_cache::SeriesCache,
    /// The CPU pool computations run on (`compute::Pool`).
    pub compute: crate::compute::Pool,
    /// Wakes this node's workflow worker when a run becomes due here (a run started, a review decided).
    pub workflows_wake: tokio::sync::Notify,
    /// Wakes this node's agent worker when an Agent Space run is queued here.
    pub spaces_wake: tokio::sync::Notify,
    /// The local speech runtime, loaded at the first transcription.
    pub speech: crate::calls::Speech,
    /// Where requests' CPU-heavy steps run (`cpu`).
    pub cpu: crate::cpu::Cpu,
}

impl AppState {
    pub fn new(store: Store, settings: Settings, server_key: Vec<u8>, key_source: KeySource) -> AppState {
        let webhook_hosts = crate::outbound::HostPins::new(settings.webhook_hosts.clone());
        let compute = match settings.compute_threads {
            0 => crate::compute::Pool::for_this_machine(),
            n => crate::compute::Pool::new(n),
        }
        .with_limits(
            settings.compute_jobs_per_workspace,
            std::time::Duration::from_millis(settings.inline_compute_budget_ms.max(1)),
        );
        let cpu = match settings.cpu_heavy_threads {
            0 => crate::cpu::Cpu::for_this_machine(),
            n => crate::cpu::Cpu::new(n),
        };
        AppState(Arc::new(Inner {
            store,
            settings,
            server_key,
            key_source,
            rate_limiter: RateLimiter::default(),
            metrics: Metrics::default(),
            usage: UsageRecorder::default(),
            nonces: NonceMemory::default(),
            monthly: MonthlyQuota::default(),
            invocations: InvocationLog::default(),
            webhook_hosts,
            router: std::sync::OnceLock::new(),
            series: crate::series_cache::SeriesCache::new(crate::series_cache::DEFAULT_MAX_BARS, cpu.clone()),
            compute,
            workflows_wake: tokio::sync::Notify::new(),
            spaces_wake: tokio::sync::Notify::new(),
            speech: crate::calls::Speech::default(),
            cpu,
        }))
    }
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}
