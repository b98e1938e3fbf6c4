//! The request log behind `GET /infrastructure/usage`: every authenticated request is counted per
//! credential, operation and UTC day in memory and flushed to the store about once a second (and at
//! shutdown), so the hot path never waits on a write.

use fiscus_store::Store;
use fiscus_store::usage::{UsageCount, UsageKey};
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
pub struct UsageRecorder {
    pending: Mutex<HashMap<UsageKey, UsageCount>>,
}

impl UsageRecorder {
    pub fn record(&self, key: UsageKey, is_error: bool) {
        let mut pending = self
            .pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let count = pending.entry(key).or_default();
        count.requests += 1;
        count.errors += i64::from(is_error);
    }

    /// Writes pending counts in one transaction; on failure they are put back for the next flush.
    pub async fn flush(&self, store: &Store) -> Result<usize, fiscus_store::StoreError> {
        let batch: Vec<(UsageKey, UsageCount)> = {
            let mut pending = self
                .pending
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            pending.drain().collect()
        };
        if batch.is_empty() {
            return Ok(0);
        }
        let result = async {
            let mut tx = store.begin().await?;
            for (key, count) in &batch {
                fiscus_store::usage::add(tx.conn(), key, *count).await?;
            }
            tx.commit().await
        }
        .await;
        match result {
            Ok(()) => Ok(batch.len()),
            Err(e) => {
                let mut pending = self
                    .pending
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                for (key, count) in batch {
                    let slot = pending.entry(key).or_default();
                    slot.requests += count.requests;
                    slot.errors += count.errors;
                }
                Err(e)
            }
        }
    }
}
