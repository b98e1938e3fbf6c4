//! The bank file worker: puts executed bank-file payments in `pain.001` files and publishes them
//! (`fiscus_platform::actions::bank_files`), then imports what the bank dropped in the inbound directory
//! (`fiscus_platform::actions::bank_messages`).

use fiscus_kernel::Services;
use fiscus_platform::actions::{bank_files, bank_messages};

/// One pass; returns how much it did (files written or published, messages read).
pub async fn run_once(state: &Services, worker: &str) -> anyhow::Result<usize> {
    let files = bank_files::run_once(state, worker).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let read = bank_messages::import_inbound(state, worker).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    Ok(files.filed + files.published + read)
}
