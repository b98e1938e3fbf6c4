//! The bank file worker: puts executed bank-file payments in `pain.001` files and publishes them
//! (`fiscus_actions::bank_files`), then imports what the bank dropped in the inbound directory
//! (`fiscus_actions::bank_inbound`). Each half runs whatever the other did: a failing pass of one
//! (the database, say) never keeps the other from its work.

use fiscus_actions::{bank_files, bank_inbound};
use fiscus_kernel::Services;

/// One pass; returns how much it did (files written, published or set aside, messages read).
pub async fn run_once(services: &Services, worker: &str) -> anyhow::Result<usize> {
    let files = bank_files::run_once(services, worker).await;
    let read = bank_inbound::import_inbound(services, worker).await;
    match (files, read) {
        (Ok(files), Ok(read)) => Ok(files.filed + files.published + files.set_aside + read),
        (Err(e), _) => Err(anyhow::anyhow!("payment files: {e:?}")),
        (_, Err(e)) => Err(anyhow::anyhow!("inbound messages: {e:?}")),
    }
}

/// The bank file worker as the node runs it: a pass every `worker_interval_ms` over the folders.
pub struct BankFiles {
    pub claimer: String,
}

impl super::Worker for BankFiles {
    const NAME: &'static str = "bank files";
    const SLOT: Option<fiscus_kernel::progress::Worker> = Some(fiscus_kernel::progress::Worker::BankFiles);

    fn pace(&self, services: &fiscus_kernel::Services) -> super::Pace {
        super::Pace::Every(std::time::Duration::from_millis(services.settings.worker_interval_ms.max(10)))
    }

    async fn pass(&mut self, services: &fiscus_kernel::Services) -> anyhow::Result<usize> {
        run_once(services, &self.claimer).await
    }
}
