//! An external agent's draft enters the approval lifecycle. The agent gains no approval authority.

use crate::rules::envelope::Origin;
use crate::rules::transitions::{self, Event};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::events::EventType;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use serde_json::json;

use super::Loaded;
use crate::steps::record::{ActionChange, record};
use fiscus_kernel::governed::{Caller, Failure};

pub fn submit<'a>(
    tx: &'a mut WriteTx,
    tenant: &'a Tenant,
    caller: &'a Caller,
    action_id: &'a str,
) -> fiscus_store::Boxed<'a, Result<Loaded, Failure>> {
    Box::pin(async move {
        let mut loaded = Loaded::for_decision(tx, tenant, action_id).await?;
        loaded.verify_sealed(tx, tenant).await?;
        caller.may_act_on(loaded.action.envelope.kind)?;
        let current = loaded.state();
        // Only a draft is submitted: anything else is rejected by the controls (the seed's 422), with `state`.
        let next = transitions::next(current, Event::Submit).map_err(|_| Failure::Refused {
            code: ErrorCode::SubmissionRejected,
            detail: format!("the action is {}, not a draft", current.as_str()),
            members: vec![("state", json!(current.as_str()))],
        })?;
        if loaded.action.origin != Origin::ExternalAgent {
            return Err(Failure::refused(
                ErrorCode::SubmissionRejected,
                "only external agents' proposals are submitted",
            ));
        }
        let recorded =
            record(tx, tenant, caller, ActionChange::of(&loaded.action, next, EventType::ActionSubmitted, json!({})))
                .await?;
        loaded.action.state = next;
        loaded.action.updated_at = recorded.at;
        Ok(loaded)
    })
}
