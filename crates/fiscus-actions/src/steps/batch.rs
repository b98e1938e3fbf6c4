//! A batch of decisions one person gives at once (the console's batch approval): each action still gets its
//! own decision through `decide`, bound to the envelope and check-set hashes the person was shown for it, on
//! the locked and seal-checked action, with every rule of a single decision (the requirement, groups,
//! separation of duties). An item that changed since the page was drawn, or that this person may not decide,
//! is left out and named. The batch itself is one sealed record (a leaf of the log) listing what was decided
//! and what was left out; each decision's context names the batch.
//!
//! Decisions are written a hundred to a transaction, so a thousand-item batch never holds the database's
//! writer for long (on SQLite one writer serves every tenant); the batch's record is written last, after
//! every decision it lists.

use std::collections::BTreeMap;

use crate::rules::approval::{Decision, Outcome};
use crate::steps::decide::{Seen, decide};
use crate::tables::approval_policies::{Batch, BatchBody, DecidedItem, ItemOutcome, LeftOut};
use fiscus_domain::clock::now_micros;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::{Caller, Failure, new_record};
use fiscus_kernel::settings::Settings;
use fiscus_store::Store;
use serde::{Deserialize, Serialize};

/// The most items one batch decides.
pub const MAX_ITEMS: usize = 1_000;
const PER_TRANSACTION: usize = 100;

/// An item as the page showed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shown {
    pub action_id: String,
    pub envelope_hash: String,
    pub check_set_hash: String,
}

/// Decides every shown item as `decision`, then records the batch. A refusal of one item (it changed, it was
/// decided meanwhile, its proposer is this person, a rule refuses it) leaves it out; a failure of the store
/// ends the batch, the decisions of earlier transactions standing (each is complete on its own) and none
/// listed in a batch record.
#[allow(clippy::too_many_arguments)]
pub async fn decide_batch(
    store: &Store,
    settings: &Settings,
    tenant: &Tenant,
    caller: &Caller,
    role: Role,
    decision: Decision,
    shown: &[Shown],
    filter: BTreeMap<String, String>,
    reason: Option<&str>,
) -> Result<Batch, Failure> {
    if shown.is_empty() || shown.len() > MAX_ITEMS {
        return Err(Failure::Invalid(vec![("items", format!("1 to {MAX_ITEMS} actions a batch"))]));
    }
    let reason = reason.map(str::trim).filter(|r| !r.is_empty());
    if reason.is_some_and(|r| r.chars().count() > 500) {
        return Err(Failure::Invalid(vec![("reason", "at most 500 characters".into())]));
    }
    let batch_id = fiscus_domain::ids::new_id("apb");
    let mut decided = Vec::with_capacity(shown.len());
    let mut left_out = Vec::new();
    for chunk in shown.chunks(PER_TRANSACTION) {
        let mut tx = store.begin().await?;
        for item in chunk {
            let seen = Seen {
                envelope_hash: &item.envelope_hash,
                check_set_hash: &item.check_set_hash,
                batch_id: Some(&batch_id),
                reason,
            };
            match decide(&mut tx, settings, tenant, caller, role, &item.action_id, decision, &seen).await {
                Ok(d) => decided.push(DecidedItem {
                    action_id: item.action_id.clone(),
                    envelope_hash: item.envelope_hash.clone(),
                    check_set_hash: item.check_set_hash.clone(),
                    decision_id: d.decision_id,
                    outcome: match d.outcome {
                        Outcome::QuorumReached { .. } => ItemOutcome::Approved,
                        Outcome::Recorded { .. } => ItemOutcome::Recorded,
                        Outcome::Denied => ItemOutcome::Denied,
                    },
                }),
                // Every refusal of `decide` comes before it writes anything, so the transaction goes on.
                Err(Failure::Decision(r)) => {
                    left_out.push(LeftOut { action_id: item.action_id.clone(), reason: r.to_string() });
                }
                Err(Failure::NotFound) => left_out.push(LeftOut {
                    action_id: item.action_id.clone(),
                    reason: "no such action in this workspace and environment".into(),
                }),
                Err(e) => return Err(e),
            }
        }
        tx.commit().await?;
    }
    let body = BatchBody {
        operator_id: caller.actor.id.clone(),
        decision: decision.as_str().into(),
        filter,
        reason: reason.map(str::to_string),
        decided,
        left_out,
    };
    let mut record = new_record("approval batch", "apb", body, caller.actor.clone())?;
    record.id = batch_id;
    record.created_at = now_micros();
    let mut tx = store.begin().await?;
    crate::tables::approval_policies::insert_batch(&mut tx, tenant, &record).await?;
    tx.commit().await?;
    Ok(record)
}
