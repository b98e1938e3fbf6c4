//! The monthly request quota of signed execution clients (their grant's `monthly_quota`), per UTC calendar
//! month.
//!
//! A node counts in memory, starting from what the usage counters already hold for the month when it first
//! sees the client that month (`usage_counters`, flushed by every node about once a second). So one node's
//! count is exact for the requests it serves plus everything flushed before it started counting; with
//! several nodes, each may admit what the others served since then, as the per-minute limits do (see
//! `http::rate_limit`). The quota is a service level, not a limit on money.

use fiscus_domain::clock::{MICROS_PER_SECOND, utc_month};
use fiscus_store::{Store, StoreError};
use std::collections::HashMap;
use std::sync::Mutex;

use crate::signed::SignedClient;

#[derive(Default)]
pub struct MonthlyQuota {
    /// client id → (month, requests counted).
    counts: Mutex<HashMap<String, (String, u64)>>,
}

/// What counting one request found.
#[derive(Clone, Copy, Debug)]
pub struct MonthOutcome {
    pub allowed: bool,
    /// Requests this month, including this one when allowed.
    pub used: u64,
    /// Seconds until the month ends (UTC).
    pub resets_in: u64,
}

impl MonthlyQuota {
    /// Counts one request of `client` at `now` against its grant's monthly quota.
    pub async fn count(
        &self,
        store: &Store,
        workspace_id: &str,
        client: &SignedClient,
        now: i64,
    ) -> Result<MonthOutcome, StoreError> {
        let (month, next) = utc_month(now);
        let resets_in = u64::try_from((next - now) / MICROS_PER_SECOND).unwrap_or(0).max(1);
        self.seed(store, workspace_id, &client.client_id, &month).await?;
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let entry = counts.entry(client.client_id.clone()).or_insert_with(|| (month.clone(), 0));
        if entry.1 >= client.grant.monthly_quota {
            return Ok(MonthOutcome { allowed: false, used: entry.1, resets_in });
        }
        entry.1 += 1;
        Ok(MonthOutcome { allowed: true, used: entry.1, resets_in })
    }

    /// Requests of `client_id` this month as this node counts them (without counting one).
    pub async fn used(&self, store: &Store, workspace_id: &str, client_id: &str, now: i64) -> Result<u64, StoreError> {
        let (month, _) = utc_month(now);
        self.seed(store, workspace_id, client_id, &month).await?;
        let counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        Ok(counts.get(client_id).map_or(0, |(_, n)| *n))
    }

    /// Starts the month's count from the usage counters the first time this node sees the client in it.
    async fn seed(&self, store: &Store, workspace_id: &str, client_id: &str, month: &str) -> Result<(), StoreError> {
        let current = {
            let counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
            counts.get(client_id).is_some_and(|(m, _)| m == month)
        };
        if current {
            return Ok(());
        }
        let mut conn = store.read().await?;
        let flushed =
            fiscus_store::execution_clients::requests_since(&mut conn, workspace_id, client_id, &format!("{month}-01"))
                .await?;
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        // Another request may have seeded it meanwhile; the first seed stands.
        if counts.get(client_id).is_none_or(|(m, _)| m != month) {
            counts.insert(client_id.to_string(), (month.to_string(), u64::try_from(flushed).unwrap_or(0)));
        }
        Ok(())
    }
}
