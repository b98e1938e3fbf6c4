//! `fiscus verify audit`: recomputes each workspace's chain from the stored rows, page by page.

use fiscus_domain::audit::{ChainBreak, ChainVerifier};
use fiscus_store::Store;

pub struct ChainReport {
    pub workspace_id: String,
    pub events: i64,
    pub result: Result<(), ChainBreak>,
}

const PAGE: i64 = 1000;

pub async fn verify_workspace(store: &Store, workspace_id: &str) -> anyhow::Result<ChainReport> {
    let mut conn = store.read().await?;
    let (head_seq, head_hash) = fiscus_store::audit::head(&mut conn, workspace_id).await?;
    let mut verifier = ChainVerifier::default();
    loop {
        let page = fiscus_store::audit::events_after(&mut conn, workspace_id, verifier.verified(), PAGE).await?;
        if page.is_empty() {
            break;
        }
        for (event, hash) in &page {
            if let Err(b) = verifier.push(event, hash) {
                return Ok(ChainReport {
                    workspace_id: workspace_id.into(),
                    events: verifier.verified(),
                    result: Err(b),
                });
            }
        }
    }
    let result = verifier.finish(head_seq, &head_hash).map(|_| ());
    Ok(ChainReport { workspace_id: workspace_id.into(), events: verifier.verified(), result })
}

pub fn describe(b: &ChainBreak) -> String {
    match b {
        ChainBreak::ContentAltered { seq } => {
            format!("event {seq} was altered: its stored hash does not match its content")
        }
        ChainBreak::LinkBroken { seq } => {
            format!("event {seq} does not link to its predecessor's hash (an earlier event was altered or removed)")
        }
        ChainBreak::SequenceGap { expected, found } => {
            format!("expected event {expected}, found {found} (events removed or inserted)")
        }
        ChainBreak::HeadMismatch { head_seq, last_seq } => {
            format!("the head says {head_seq} events but the chain ends at {last_seq}")
        }
    }
}
