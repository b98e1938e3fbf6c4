//! The services every application layer and worker is given: the store, the settings, the keys, the pools
//! computations run on, the caches, the speech runtime, outbound HTTP and the hooks areas register. Nothing
//! of HTTP is here (rate limits, metrics, signature nonces live in the HTTP crate's state), so no
//! application layer or worker can reach them.

use fiscus_store::Store;
use std::sync::Arc;

use crate::book::Book;
use crate::invocation_log::InvocationLog;
use crate::secret_key::KeySource;
use crate::settings::Settings;

/// A cheap handle (one `Arc`) to the node's services.
#[derive(Clone)]
pub struct Services(Arc<Inner>);

pub struct Inner {
    pub store: Store,
    pub settings: Settings,
    /// HMAC key for credential hashes; never logged, never returned.
    pub server_key: Vec<u8>,
    pub key_source: KeySource,
    /// Invocation rows of read tool calls waiting for the next flush.
    pub invocations: InvocationLog,
    /// Pinned answers for webhook host names (from the settings; tests may change them at run time).
    pub webhook_hosts: crate::outbound::HostPins,
    /// Decoded price series of immutable datasets (`series_cache`).
    pub series: crate::series_cache::SeriesCache,
    /// The CPU pool computations run on (`pool::Pool`).
    pub compute: crate::pool::Pool,
    /// Wakes this node's workflow worker when a run becomes due here (a run started, a review decided).
    pub workflows_wake: tokio::sync::Notify,
    /// Wakes this node's agent worker when an Agent Space run is queued here.
    pub spaces_wake: tokio::sync::Notify,
    /// The local speech runtime, loaded at the first transcription.
    pub speech: crate::speech::Speech,
    /// Where requests' CPU-heavy steps run (`cpu`).
    pub cpu: crate::cpu::Cpu,
    /// Where a settled investment order moves the portfolio book (the investment area's).
    pub book: Arc<dyn Book>,
    /// What this node's workers have done, for waiting until what is due is worked off (`progress`).
    pub progress: crate::progress::Progress,
    /// Requests counted per credential, operation and day, waiting for the next flush (`usage_log`).
    pub usage: crate::usage_log::UsageLog,
    /// The node is stopping: `/readyz` answers 503 while it still serves (a balancer drains it first), and
    /// its workers claim nothing more.
    pub draining: std::sync::atomic::AtomicBool,
}

impl Services {
    pub fn new(
        store: Store,
        settings: Settings,
        server_key: Vec<u8>,
        key_source: KeySource,
        book: Arc<dyn Book>,
    ) -> Services {
        let webhook_hosts = crate::outbound::HostPins::new(settings.webhook_hosts.clone());
        let compute = match settings.compute_threads {
            0 => crate::pool::Pool::for_this_machine(),
            n => crate::pool::Pool::new(n),
        }
        .with_limits(
            settings.compute_jobs_per_workspace,
            std::time::Duration::from_millis(settings.inline_compute_budget_ms.max(1)),
        );
        let cpu = match settings.cpu_heavy_threads {
            0 => crate::cpu::Cpu::for_this_machine(),
            n => crate::cpu::Cpu::new(n),
        };
        Services(Arc::new(Inner {
            store,
            settings,
            server_key,
            key_source,
            invocations: InvocationLog::default(),
            webhook_hosts,
            series: crate::series_cache::SeriesCache::new(crate::series_cache::DEFAULT_MAX_BARS, cpu.clone()),
            compute,
            workflows_wake: tokio::sync::Notify::new(),
            spaces_wake: tokio::sync::Notify::new(),
            speech: crate::speech::Speech::default(),
            progress: crate::progress::Progress::default(),
            usage: crate::usage_log::UsageLog::default(),
            draining: std::sync::atomic::AtomicBool::new(false),
            cpu,
            book,
        }))
    }
}

impl std::ops::Deref for Services {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}
