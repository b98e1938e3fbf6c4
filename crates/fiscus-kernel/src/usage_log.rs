//! The request log behind `GET /infrastructure/usage`: every authenticated request is counted per
//! credential, operation and UTC day in memory (by the HTTP layer's authentication) and flushed to the store
//! about once a second by housekeeping (and at shutdown, and before the usage read answers), so the hot path
//! never waits on a write. It lives with the services, beside the tool invocation log, so the worker that
//! flushes it takes the services and nothing of HTTP.

use crate::tables::usage::{UsageCount, UsageKey};
use fiscus_domain::clock::{MICROS_PER_SECOND, utc_day};
use fiscus_domain::tenancy::Principal;
use fiscus_store::Store;
use std::collections::HashMap;
use std::sync::Mutex;

const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;

/// Counts of one credential, by (operation, day number since the epoch).
struct CredentialUsage {
    workspace_id: String,
    environment: &'static str,
    application_id: String,
    counts: HashMap<(&'static str, i64), UsageCount>,
}

#[derive(Default)]
pub struct UsageLog {
    pending: Mutex<HashMap<String, CredentialUsage>>,
}

impl UsageLog {
    pub fn record(&self, principal: &Principal, operation: &'static str, now: i64, is_error: bool) {
        let day = now.div_euclid(MICROS_PER_DAY);
        let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // Look up before inserting so the common case allocates nothing.
        if !pending.contains_key(&principal.credential_id) {
            pending.insert(
                principal.credential_id.clone(),
                CredentialUsage {
                    workspace_id: principal.tenant.workspace_id.clone(),
                    environment: principal.tenant.environment.as_str(),
                    application_id: principal.application_id.clone(),
                    counts: HashMap::new(),
                },
            );
        }
        if let Some(usage) = pending.get_mut(&principal.credential_id) {
            let count = usage.counts.entry((operation, day)).or_default();
            count.requests += 1;
            count.errors += i64::from(is_error);
        }
    }

    fn take(&self) -> Vec<(UsageKey, UsageCount)> {
        let drained: Vec<(String, CredentialUsage)> = {
            let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            pending.drain().collect()
        };
        let mut batch = Vec::new();
        for (credential_id, usage) in drained {
            for ((operation, day), count) in usage.counts {
                batch.push((
                    UsageKey {
                        workspace_id: usage.workspace_id.clone(),
                        environment: usage.environment.to_string(),
                        application_id: usage.application_id.clone(),
                        credential_id: credential_id.clone(),
                        operation: operation.to_string(),
                        day: utc_day(day * MICROS_PER_DAY),
                    },
                    count,
                ));
            }
        }
        // In key order: nodes flushing the same counters at once then take their rows' locks in one order,
        // rather than the map's, which deadlocked two nodes' flushes (seen by bench/cluster.sh).
        batch.sort_by(|(a, _), (b, _)| a.cmp(b));
        batch
    }

    /// Writes pending counts in one transaction; on failure they are put back for the next flush.
    pub async fn flush(&self, store: &Store) -> Result<usize, fiscus_store::StoreError> {
        let batch = self.take();
        if batch.is_empty() {
            return Ok(0);
        }
        let result = async {
            let mut tx = store.begin().await?;
            for (key, count) in &batch {
                crate::tables::usage::add(tx.conn(), key, *count).await?;
            }
            tx.commit().await
        }
        .await;
        match result {
            Ok(()) => Ok(batch.len()),
            Err(e) => {
                self.restore(batch);
                Err(e)
            }
        }
    }

    fn restore(&self, batch: Vec<(UsageKey, UsageCount)>) {
        let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for (key, count) in batch {
            let Some(operation) = fiscus_domain::catalogue::by_id(&key.operation).map(|op| op.id) else { continue };
            let Some(day) = fiscus_domain::clock::parse_rfc3339(&format!("{}T00:00:00Z", key.day)) else { continue };
            let environment = if key.environment == "production" { "production" } else { "sandbox" };
            let usage = pending.entry(key.credential_id).or_insert_with(|| CredentialUsage {
                workspace_id: key.workspace_id,
                environment,
                application_id: key.application_id,
                counts: HashMap::new(),
            });
            let slot = usage.counts.entry((operation, day.div_euclid(MICROS_PER_DAY))).or_default();
            slot.requests += count.requests;
            slot.errors += count.errors;
        }
    }
}
