//! The bank file worker: puts executed bank-file payments in `pain.001` files and publishes them
//! (`fiscus_platform::actions::bank_files`), then imports what the bank dropped in the inbound directory
//! (`fiscus_platform::actions::bank_inbound`). Each half runs whatever the other did: a failing pass of one
//! (the database, say) never keeps the other from its work.

use fiscus_kernel::Services;
use fiscus_platform::actions::{bank_files, bank_inbound};

/// One pass; returns how much it did (files written, published or set aside, messages read).
pub async fn run_once(state: &Services, worker: &str) -> anyhow::Result<usize> {
    let files = bank_files::run_once(state, worker).await;
    let read = bank_inbound::import_inbound(state, worker).await;
    match (files, read) {
        (Ok(files), Ok(read)) => Ok(files.filed + files.published + files.set_aside + read),
        (Err(e), _) => Err(anyhow::anyhow!("payment files: {e:?}")),
        (_, Err(e)) => Err(anyhow::anyhow!("inbound messages: {e:?}")),
    }
}
