//! A new proposal: the envelope, its hash and its `action.proposed` event. Proposing executes nothing.

use crate::rules::checks::{CREDITOR_ACCOUNT, CheckStatus, DEBTOR_ACCOUNT, ValidCheck, check_set_hash};
use crate::rules::envelope::{Envelope, Origin};
use crate::tables::actions::Action;
use fiscus_domain::actions::ActionKind;
use fiscus_domain::actions::ControlState;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::events::EventType;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use serde_json::json;

use super::Loaded;
use crate::connectors::{ISO20022, connector_for};
use crate::steps::record::{ActionChange, record};
use fiscus_kernel::governed::{Caller, Failure};
use fiscus_kernel::settings::Settings;

/// Records a proposal of `envelope` by `caller`. An external agent's proposal is a draft until submitted;
/// any other awaits approval at once.
///
/// A payment or transfer to a counterparty Fiscus holds (`cpt_…`) is bound to the bank details a person
/// approved for it in the envelope's currency: Fiscus requires the check `creditor_account` and records it
/// passed, citing that version and its hash, so the approvers approve those details and no others (a later
/// change of them fails the check again: `crate::steps::bank_accounts::decide`).
///
/// A payment through a bank file (connector `iso20022`) must pay such a counterparty, and is bound the same
/// way to the workspace's own account it is debited from (`debtor_account`): the one named by the envelope's
/// `metadata.debtor_account_id`, or else the workspace's one approved own account in the currency.
pub fn propose<'a>(
    tx: &'a mut WriteTx,
    settings: &'a Settings,
    tenant: &'a Tenant,
    caller: &'a Caller,
    mut envelope: Envelope,
    origin: Origin,
) -> fiscus_store::Boxed<'a, Result<Loaded, Failure>> {
    Box::pin(async move {
        caller.may_act_on(envelope.kind)?;
        // What the execution gates would refuse for good is refused now, before anyone is asked to approve an
        // action that could never run: a connector this environment does not have, a delegation that does not
        // exist. The gates check both again at execution (a delegation can be revoked meanwhile).
        if connector_for(&envelope.connector, tenant.environment, settings).is_none() {
            return Err(Failure::missing(
                "connector",
                format!(
                    "the connector `{}` is not available in the {} environment",
                    envelope.connector,
                    tenant.environment.as_str()
                ),
            ));
        }
        if let Some(delegation_id) = envelope.delegation_id.as_deref() {
            let key = tx.seal_key().clone();
            match crate::tables::delegations::get_delegation(tx.conn(), &key, tenant, delegation_id).await {
                Ok(_) => {}
                Err(fiscus_store::StoreError::NotFound) => {
                    return Err(Failure::missing(
                        "delegation_id",
                        format!("no delegation `{delegation_id}` in this workspace and environment"),
                    ));
                }
                Err(e) => return Err(e.into()),
            }
        }
        let creditor = creditor_account(tx, tenant, &envelope).await?;
        let debtor = if envelope.connector == ISO20022 {
            if !matches!(envelope.kind, ActionKind::Payment | ActionKind::Transfer) {
                return Err(Failure::Invalid(vec![(
                    "connector",
                    "the iso20022 connector sends credit transfers (pain.001): payments and transfers only".into(),
                )]));
            }
            if creditor.is_none() {
                return Err(Failure::Invalid(vec![(
                "counterparty",
                "a payment through a bank file pays a counterparty Fiscus holds (`cpt_…`) with approved bank details"
                    .into(),
            )]));
            }
            Some(debtor_account(tx, tenant, &envelope).await?)
        } else {
            None
        };
        let bound = [(CREDITOR_ACCOUNT, creditor.is_some()), (DEBTOR_ACCOUNT, debtor.is_some())];
        for (key, _) in bound.iter().filter(|(_, b)| *b) {
            if !envelope.required_checks.iter().any(|k| k == key) {
                if envelope.required_checks.len() >= 32 {
                    return Err(Failure::Invalid(vec![(
                        "required_checks",
                        format!("this payment also requires {key}, which Fiscus records: name fewer checks"),
                    )]));
                }
                envelope.required_checks.push(key.to_string());
            }
        }
        // The organisation's rules decide who must approve (never the proposer's tier alone), or refuse now.
        let key = tx.seal_key().clone();
        let (policy, requirement) =
            super::policies::requirement_for(tx.conn(), &key, settings, tenant, &envelope, &caller.actor.id).await?;
        if let Some(refused) = super::policies::refusal(policy.as_ref(), &requirement) {
            return Err(refused);
        }
        let id = fiscus_domain::ids::new_id("act");
        let envelope_hash = envelope
            .hash(&id, &tenant.workspace_id, tenant.environment.as_str())
            .ok_or_else(|| Failure::Invalid(vec![("metadata", "numbers must be finite".into())]))?;
        let initial = match origin {
            Origin::ExternalAgent => ControlState::Draft,
            Origin::Application | Origin::Operator => ControlState::PendingApproval,
        };
        let now = now_micros();
        let action = Action {
            id: id.clone(),
            environment: tenant.environment,
            envelope,
            envelope_hash: envelope_hash.clone(),
            state: initial,
            origin,
            proposed_by: caller.actor.clone(),
            created_at: now,
            updated_at: now,
        };
        crate::tables::actions::insert(tx, tenant, &action).await?;
        // The requirement is recorded first, so the `approval.requested` event `record` writes can name it.
        let requirement = super::policies::record_requirement(
            tx,
            tenant,
            caller,
            &id,
            policy,
            crate::tables::approval_policies::RequirementReason::Proposal,
            requirement,
        )
        .await?;
        record(
            tx,
            tenant,
            caller,
            ActionChange {
                from: None,
                ..ActionChange::of(&action, initial, EventType::ActionProposed, json!({ "origin": origin.as_str() }))
            },
        )
        .await?;
        if creditor.is_some() || debtor.is_some() {
            for (key, version) in [(CREDITOR_ACCOUNT, creditor), (DEBTOR_ACCOUNT, debtor)] {
                let Some(version) = version else { continue };
                let body = &version.record.body;
                let check = ValidCheck {
                    check_key: key.to_string(),
                    status: CheckStatus::Passed,
                    source_type: "bank_account_version".to_string(),
                    source_reference: version.record.id.clone(),
                    source_hash: version.record.content_hash.clone(),
                    metrics: Vec::new(),
                    metadata: vec![json!({ "account_id": body.account_id, "version": body.version })],
                };
                super::check::record_check(tx, tenant, caller, &id, check).await?;
            }
            return Ok(Loaded::for_decision(tx, tenant, &id).await?);
        }
        Ok(Loaded {
            action,
            checks: Vec::new(),
            latest: Vec::new(),
            check_set_hash: check_set_hash(&[]),
            decisions: Vec::new(),
            requirement: Some(requirement),
            contexts: Default::default(),
        })
    })
}

/// The approved bank details a payment or transfer to a counterparty Fiscus holds must use: its one active
/// account in the envelope's currency. `None` for other kinds and for counterparties named only by text.
async fn creditor_account(
    tx: &mut WriteTx,
    tenant: &Tenant,
    envelope: &Envelope,
) -> Result<Option<crate::tables::bank_accounts::Version>, Failure> {
    let counterparty = envelope.counterparty.as_str();
    if !matches!(envelope.kind, ActionKind::Payment | ActionKind::Transfer) || !counterparty.starts_with("cpt_") {
        return Ok(None);
    }
    let key = tx.seal_key().clone();
    match crate::tables::bank_accounts::get_counterparty(tx.conn(), &key, tenant, counterparty).await {
        Ok(_) => {}
        Err(fiscus_store::StoreError::NotFound) => {
            return Err(Failure::missing(
                "counterparty",
                format!("no counterparty `{counterparty}` in this workspace and environment"),
            ));
        }
        Err(e) => return Err(e.into()),
    }
    let mut active =
        crate::tables::bank_accounts::active_for(tx.conn(), &key, tenant, counterparty, envelope.currency).await?;
    match active.len() {
        1 => Ok(active.pop()),
        0 => Err(Failure::missing(
            "counterparty",
            format!(
                "the counterparty has no approved bank account in {}: a person approves one at the console first",
                envelope.currency.code()
            ),
        )),
        _ => Err(Failure::refused(
            ErrorCode::Conflict,
            format!("the counterparty has several approved bank accounts in {}", envelope.currency.code()),
        )),
    }
}

/// The workspace's own approved account a bank-file payment is debited from: the one the envelope's
/// `metadata.debtor_account_id` names, or else its one approved own account in the currency.
async fn debtor_account(
    tx: &mut WriteTx,
    tenant: &Tenant,
    envelope: &Envelope,
) -> Result<crate::tables::bank_accounts::Version, Failure> {
    let key = tx.seal_key().clone();
    let currency = envelope.currency;
    let named = match envelope.metadata.get("debtor_account_id") {
        None => None,
        Some(serde_json::Value::String(id)) => Some(id.clone()),
        Some(_) => {
            return Err(Failure::Invalid(vec![("metadata", "debtor_account_id must be a `bac_…` id".into())]));
        }
    };
    let mut own: Vec<_> = crate::tables::bank_accounts::active_own(tx.conn(), &key, tenant, currency)
        .await?
        .into_iter()
        .filter(|v| named.as_deref().is_none_or(|id| v.record.body.account_id == id))
        .collect();
    match (own.len(), named) {
        (1, _) => Ok(own.pop().expect("one")),
        (0, Some(id)) => Err(Failure::missing(
            "metadata",
            format!("`{id}` is not an approved own account of this workspace in {}", currency.code()),
        )),
        (0, None) => Err(Failure::missing(
            "metadata",
            format!("the workspace has no approved own account in {} to pay from", currency.code()),
        )),
        _ => Err(Failure::Invalid(vec![(
            "metadata",
            format!(
                "the workspace has several approved own accounts in {}: name one as metadata.debtor_account_id",
                currency.code()
            ),
        )])),
    }
}
