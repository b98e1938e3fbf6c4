//! A new version of a pre-trade check. Earlier versions are kept; a new version on an approved action
//! invalidates the approvals, which must then be given again on the new evidence.

use crate::rules::checks::ValidCheck;
use crate::rules::transitions::{self, Event};
use crate::tables::actions::Check;
use fiscus_domain::actions::ControlState;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::events::EventType;
use fiscus_domain::evidence::seal;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use serde_json::{Value, json};

use crate::steps::record::{ActionChange, record};
use fiscus_kernel::governed::{Caller, Failure};

pub fn record_check<'a>(
    tx: &'a mut WriteTx,
    tenant: &'a Tenant,
    caller: &'a Caller,
    action_id: &'a str,
    check: ValidCheck,
) -> fiscus_store::Boxed<'a, Result<Check, Failure>> {
    Box::pin(async move {
        let loaded = super::Loaded::for_decision(tx, tenant, action_id).await?;
        // A new check version invalidates approvals given on the action as sealed: never on a row edited
        // outside Fiscus.
        loaded.verify_sealed(tx, tenant).await?;
        let action = loaded.action;
        let current = action.state;
        if !matches!(current, ControlState::Draft | ControlState::PendingApproval | ControlState::Approved) {
            return Err(Failure::refused(
                ErrorCode::ActionClosed,
                format!("the action is {}; checks can no longer change it", current.as_str()),
            ));
        }
        let now = now_micros();
        let version = crate::tables::actions::next_check_version(tx, tenant, action_id, &check.check_key).await?;
        let recorded_by = caller.actor.id.clone();
        let check_hash = seal(&check.payload(action_id, version, &recorded_by, &rfc3339(now)))
            .map_err(|_| Failure::Invalid(vec![("metrics", "numbers must be finite".into())]))?;
        let stored = Check {
            id: fiscus_domain::ids::new_id("chk"),
            check_key: check.check_key,
            version,
            status: check.status,
            source_type: check.source_type,
            source_reference: check.source_reference,
            source_hash: check.source_hash,
            metrics: Value::Array(check.metrics),
            metadata: Value::Array(check.metadata),
            check_hash,
            recorded_by,
            created_at: now,
        };
        crate::tables::actions::insert_check(tx, tenant, action_id, &stored).await?;
        let facts = json!({
            "check_id": stored.id, "check_key": stored.check_key, "version": version,
            "status": stored.status.as_str(), "check_hash": stored.check_hash,
        });
        record(tx, tenant, caller, ActionChange::of(&action, current, EventType::ActionCheckRecorded, facts)).await?;
        if current == ControlState::Approved {
            // The approval covered the previous evidence; it no longer covers this action.
            let next =
                transitions::next(current, Event::ApprovalInvalidated).map_err(|e| Failure::internal(e.to_string()))?;
            let invalidated = crate::tables::actions::invalidate_approvals(tx, tenant, action_id, now).await?;
            record(
                tx,
                tenant,
                caller,
                ActionChange::of(
                    &action,
                    next,
                    EventType::ActionApprovalInvalidated,
                    json!({ "check_key": stored.check_key, "version": version, "approvals_invalidated": invalidated }),
                ),
            )
            .await?;
        }
        Ok(stored)
    })
}
