//! Invocation rows of read tools, buffered in memory and written in one transaction about once a second (and
//! at shutdown, and before `GET /agents/invocations` answers), so a read through MCP costs no write of its
//! own. A tool that can change something, and a refused call, is recorded before its answer is given.
//! The trade-off, as for the usage counters: a crash loses at most the last second of read-call rows; every
//! change a tool made is in the audit chain regardless.

use crate::tables::tool_invocations::Invocation;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Store, StoreError};
use std::sync::Mutex;

#[derive(Default)]
pub struct InvocationLog {
    pending: Mutex<Vec<(Tenant, Invocation)>>,
}

/// Beyond this many rows waiting, a read call writes its row at once rather than grow the buffer.
const MAX_PENDING: usize = 100_000;

impl InvocationLog {
    /// Keeps the row for the next flush; gives it back when the buffer is full (the caller writes it itself).
    #[expect(clippy::result_large_err, reason = "the row is handed back to be written, not an error to box")]
    pub fn defer(&self, tenant: &Tenant, row: Invocation) -> Result<(), Invocation> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.len() >= MAX_PENDING {
            return Err(row);
        }
        pending.push((tenant.clone(), row));
        Ok(())
    }

    /// Writes what is waiting; on failure the rows are kept for the next try.
    pub async fn flush(&self, store: &Store) -> Result<usize, StoreError> {
        let batch = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
        if batch.is_empty() {
            return Ok(0);
        }
        let written = async {
            let mut tx = store.begin().await?;
            for (tenant, row) in &batch {
                crate::tables::tool_invocations::insert(&mut tx, tenant, row).await?;
            }
            tx.commit().await
        }
        .await;
        match written {
            Ok(()) => Ok(batch.len()),
            Err(e) => {
                let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
                let newer = std::mem::take(&mut *pending);
                *pending = batch;
                pending.extend(newer);
                Err(e)
            }
        }
    }
}
