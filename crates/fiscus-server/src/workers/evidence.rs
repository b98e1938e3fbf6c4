//! The evidence worker: integrates the workspaces' transparency logs and signs their checkpoints
//! (`fiscus_kernel::evidence`). Any number of nodes may run one: an integration checks the tree unchanged
//! before it writes, and a checkpoint of a size already signed is kept once. It reports its passes like every
//! worker, so the tests' drain waits until what was logged is integrated.

use fiscus_kernel::Services;
use fiscus_kernel::progress;

/// The evidence worker as the node runs it: passes back to back while logs are behind, polling every
/// `worker_interval_ms` (at most a second) when none is.
pub struct Evidence;

impl super::Worker for Evidence {
    const NAME: &'static str = "evidence";
    const SLOT: Option<progress::Worker> = Some(progress::Worker::Evidence);

    fn pace(&self, services: &Services) -> super::Pace {
        super::Pace::WhenIdle(std::time::Duration::from_millis(services.settings.worker_interval_ms.clamp(10, 1000)))
    }

    async fn pass(&mut self, services: &Services) -> anyhow::Result<usize> {
        Ok(fiscus_kernel::evidence::run_once(services).await?)
    }
}
