//! Approval policies as governed as money: an admin proposes a version at the console, a second admin approves
//! it (never its author), and only then it is in force; each version is a sealed record and a leaf of the
//! transparency log. The requirement a proposal gets is evaluated here (`requirement_for`, which the dry run
//! asks too, so both answer the same), and a version coming into force tightens the actions awaiting approval
//! or execution (`tighten_awaiting`): their recorded requirement joined with the new one, so a tightening
//! applies to them and a loosening never does.

use crate::rules::approval::SOLE_APPROVER_WINDOW_DAYS;
use crate::rules::bank_accounts::VersionState;
use crate::rules::envelope::Envelope;
use crate::rules::policy::{CounterpartyFacts, Facts, Policy, Requirement};
use crate::rules::transitions::{self, Event};
use crate::tables::approval_policies::{
    self as store, DecisionContext, PolicyRef, PolicyVersion, RequirementBody, RequirementReason,
};
use crate::tables::bank_accounts::Version;
use fiscus_domain::actions::ControlState;
use fiscus_domain::actor::ActorKind;
use fiscus_domain::audit_action::Change;
use fiscus_domain::bank_accounts::AccountNumber;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::events::{EventData, EventType, PolicyEventData};
use fiscus_domain::integrity::SealKey;
use fiscus_domain::people::{Refusal, Role};
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::record::{Announcement, AuditEntry, Subject, announce, audit};
use fiscus_kernel::governed::{Caller, Failure, new_record};
use fiscus_kernel::settings::Settings;
use fiscus_store::{StoreError, WriteTx};
use serde_json::json;
use sqlx::AnyConnection;

use crate::steps::record::{ActionChange, record};

/// The policy in force in the tenant and its reference (none: the deployment's default applies).
pub async fn in_force(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
) -> Result<Option<(Policy, PolicyRef)>, StoreError> {
    Ok(store::active(conn, key, tenant).await?.map(|v| {
        let r = PolicyRef { id: v.record.id.clone(), version: v.version, hash: v.record.content_hash.clone() };
        (v.record.body, r)
    }))
}

/// What Fiscus knows of the counterparty an envelope pays: for a counterparty it holds (`cpt_…`), when its
/// first bank details were approved, when the details in the envelope's currency were, and their country.
/// Anything else is unknown (which a rule's counterparty conditions match).
pub async fn counterparty_facts(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    envelope: &Envelope,
) -> Result<CounterpartyFacts, StoreError> {
    let counterparty = envelope.counterparty.as_str();
    if !counterparty.starts_with("cpt_") {
        return Ok(CounterpartyFacts::default());
    }
    let versions = crate::tables::bank_accounts::versions_of_counterparty(conn, key, tenant, counterparty).await?;
    let approved_at = |v: &Version| v.decision.as_ref().map(|(_, at, _)| *at);
    let ever_approved = versions.iter().filter(|v| matches!(v.state, VersionState::Active | VersionState::Superseded));
    let active =
        versions.iter().find(|v| v.state == VersionState::Active && v.record.body.currency == envelope.currency);
    let country = active.and_then(|v| match &v.record.body.number {
        AccountNumber::Iban(iban) => Some(iban.as_str()[..2].to_string()),
        AccountNumber::Local { .. } => v.record.body.address.as_ref().map(|a| a.country.clone()),
    });
    Ok(CounterpartyFacts {
        first_approved_at: ever_approved.filter_map(approved_at).min(),
        details_approved_at: active.and_then(approved_at),
        country,
    })
}

/// The requirement an envelope proposed now by `proposer_id` gets: the policy in force evaluated on its facts,
/// floored by its tier's quorum in this deployment. The proposal and the dry run both ask this.
pub async fn requirement_for(
    conn: &mut AnyConnection,
    key: &SealKey,
    settings: &Settings,
    tenant: &Tenant,
    envelope: &Envelope,
    proposer_id: &str,
) -> Result<(Option<PolicyRef>, Requirement), StoreError> {
    let policy = in_force(conn, key, tenant).await?;
    let counterparty = counterparty_facts(conn, key, tenant, envelope).await?;
    let facts = facts_of(envelope, proposer_id, counterparty, now_micros());
    let tier = envelope.risk_tier;
    let floor = super::quorum(settings, tier);
    Ok(match policy {
        Some((policy, r)) => (Some(r), policy.evaluate(&facts, tier, floor)),
        None => (None, Requirement::floor(tier, floor)),
    })
}

fn facts_of<'a>(envelope: &'a Envelope, proposer_id: &'a str, counterparty: CounterpartyFacts, now: i64) -> Facts<'a> {
    Facts {
        kind: envelope.kind,
        connector: &envelope.connector,
        execution_mode: envelope.execution_mode,
        currency: envelope.currency,
        amount_minor: envelope.amount_minor,
        proposer_id,
        counterparty,
        now,
    }
}

/// The refusal a proposal gets when a rule refuses it: 422 `policy_refused`, naming the rule and the policy.
pub fn refusal(policy: Option<&PolicyRef>, requirement: &Requirement) -> Option<Failure> {
    let refused = requirement.refused.as_ref()?;
    Some(Failure::refused_with(
        ErrorCode::PolicyRefused,
        format!("the approval policy's rule `{}` refuses this action: {}", refused.rule, refused.reason),
        vec![("rule", json!(refused.rule)), ("policy", json!(policy))],
    ))
}

/// Records the requirement of a new action (or of a tightening) beside it.
pub async fn record_requirement(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    action_id: &str,
    policy: Option<PolicyRef>,
    reason: RequirementReason,
    requirement: Requirement,
) -> Result<fiscus_store::sealed_records::Record<RequirementBody>, Failure> {
    let body = RequirementBody { action_id: action_id.to_string(), policy, reason, requirement };
    let record = new_record("action requirement", "arq", body, caller.actor.clone())?;
    store::insert_requirement(tx, tenant, &record).await?;
    Ok(record)
}

/// The operators who may not be an action's sole approver: whoever approved, within the window, the bank
/// details the action's `creditor_account` check binds it to.
pub async fn barred_approvers(
    tx: &mut WriteTx,
    tenant: &Tenant,
    loaded: &super::Loaded,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    let key = tx.seal_key().clone();
    let mut barred = Vec::new();
    let bound = loaded
        .latest
        .iter()
        .filter(|c| c.check_key == crate::rules::checks::CREDITOR_ACCOUNT)
        .filter_map(|l| loaded.checks.iter().find(|c| c.check_key == l.check_key && c.version == l.version))
        .filter(|c| c.source_type == "bank_account_version");
    for check in bound {
        let version =
            match crate::tables::bank_accounts::get_version(tx.conn(), &key, tenant, &check.source_reference).await {
                Ok(v) => v,
                // The check cites details the store no longer holds: nothing is decided on it.
                Err(StoreError::NotFound) => {
                    return Err(StoreError::Corrupt(format!(
                        "check {} cites bank details {} that are not there",
                        check.check_key, check.source_reference
                    )));
                }
                Err(e) => return Err(e),
            };
        if let Some((by, at, _)) = version.decision {
            let window = i64::from(SOLE_APPROVER_WINDOW_DAYS) * 86_400_000_000;
            if by.kind == ActorKind::Operator && now.saturating_sub(at) < window {
                barred.push(by.id);
            }
        }
    }
    Ok(barred)
}

/// What a decision was given with, sealed beside it.
pub async fn record_context(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    body: DecisionContext,
) -> Result<(), Failure> {
    let record = new_record("decision context", "dcx", body, caller.actor.clone())?;
    store::insert_context(tx, tenant, &record).await?;
    Ok(())
}

fn admin_only(caller: &Caller, role: Role) -> Result<(), Failure> {
    if caller.actor.kind != ActorKind::Operator || role != Role::Admin {
        return Err(Failure::Decision(Refusal::RoleMayNotDecide));
    }
    Ok(())
}

/// An admin proposes a new version of the tenant's policy; it is pending until a second admin approves it.
/// Every group its rules name must exist in the workspace.
pub async fn propose(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    role: Role,
    policy: Policy,
) -> Result<PolicyVersion, Failure> {
    admin_only(caller, role)?;
    let mut faults = policy.check().err().unwrap_or_default();
    let known: Vec<String> = crate::tables::approver_groups::all(tx.conn(), &tenant.workspace_id)
        .await?
        .into_iter()
        .map(|g| g.name)
        .collect();
    for group in policy.groups() {
        if !known.iter().any(|k| k == group) {
            faults.push(format!("the group `{group}` does not exist: create it first"));
        }
    }
    if !faults.is_empty() {
        return Err(Failure::Invalid(faults.into_iter().map(|f| ("policy", f)).collect()));
    }
    let key = tx.seal_key().clone();
    let versions = store::versions(tx.conn(), &key, tenant).await?;
    if versions.iter().any(|v| v.state == VersionState::Pending) {
        return Err(Failure::refused(ErrorCode::Conflict, "a change of the policy already awaits a second admin"));
    }
    let number = versions.last().map_or(1, |v| v.version + 1);
    let record = new_record("approval policy", "apv", policy, caller.actor.clone())?;
    match store::insert_version(tx, tenant, &record, number).await {
        Ok(()) => {}
        Err(StoreError::Conflict(_)) => {
            return Err(Failure::refused(ErrorCode::Conflict, "a change of the policy already awaits a second admin"));
        }
        Err(e) => return Err(e.into()),
    }
    let entry = AuditEntry::of_tenant(
        tenant,
        Change::ApprovalPolicyProposed,
        &record.id,
        json!({ "version": number, "content_hash": record.content_hash }),
        record.created_at,
    );
    audit(tx, caller, &entry).await?;
    Ok(PolicyVersion { record, version: number, state: VersionState::Pending, decision: None })
}

/// What a second admin's decision did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PolicyDecided {
    /// Actions whose requirement the new version tightened.
    pub tightened: Vec<String>,
    /// Of those, actions that were approved and went back to people.
    pub reopened: Vec<String>,
}

/// A second admin's decision on a pending version, covering exactly the hash they were shown. Its author
/// never decides it. An approval puts it in force and tightens the actions awaiting approval or execution.
#[allow(clippy::too_many_arguments)]
pub async fn decide(
    tx: &mut WriteTx,
    settings: &Settings,
    tenant: &Tenant,
    admin: &Caller,
    role: Role,
    version_id: &str,
    approve: bool,
    note: Option<&str>,
    shown_hash: &str,
) -> Result<PolicyDecided, Failure> {
    admin_only(admin, role)?;
    let key = tx.seal_key().clone();
    let v = store::get_version(tx.conn(), &key, tenant, version_id).await?;
    if v.record.content_hash != shown_hash {
        return Err(Failure::refused(ErrorCode::Conflict, "the policy is not the one shown; nothing was decided"));
    }
    if v.state != VersionState::Pending {
        return Err(Failure::refused(ErrorCode::Conflict, "the version was decided already"));
    }
    if v.record.created_by == admin.actor {
        return Err(Failure::refused(
            ErrorCode::SeparationOfDuties,
            "a second admin decides a policy change; its author never does",
        ));
    }
    let note = match note.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) if n.chars().count() > 500 => {
            return Err(Failure::Invalid(vec![("note", "at most 500 characters".into())]));
        }
        other => other,
    };
    let now = now_micros();
    let previous = if approve { store::active(tx.conn(), &key, tenant).await?.map(|p| p.version) } else { None };
    if !store::decide(tx, tenant, &v, approve, &admin.actor, now, note).await? {
        return Err(Failure::refused(ErrorCode::Conflict, "the version was decided meanwhile"));
    }
    let decided = if approve {
        let r = PolicyRef { id: v.record.id.clone(), version: v.version, hash: v.record.content_hash.clone() };
        tighten_awaiting(tx, settings, tenant, admin, &v.record.body, &r).await?
    } else {
        PolicyDecided::default()
    };
    let entry = AuditEntry::of_tenant(
        tenant,
        Change::ApprovalPolicyDecision,
        version_id,
        json!({
            "version": v.version,
            "decision": if approve { "approve" } else { "reject" },
            "content_hash": v.record.content_hash,
            "tightened": decided.tightened,
            "reopened": decided.reopened,
        }),
        now,
    );
    audit(tx, admin, &entry).await?;
    if approve {
        let data = PolicyEventData {
            policy_id: v.record.id.clone(),
            version: v.version,
            policy_hash: v.record.content_hash.clone(),
            previous_version: previous,
            tightened: decided.tightened.len() as u32,
            reopened: decided.reopened.len() as u32,
        };
        let item = Announcement {
            event_type: EventType::ApprovalPolicyChanged,
            subject: Subject { id: &v.record.id, owner: None },
            audit_details: json!({ "version": v.version, "previous_version": previous }),
            data: EventData::Policy(data),
        };
        announce(tx, tenant, admin, item, now).await?;
    }
    Ok(decided)
}

/// Applies a policy just put in force to the actions awaiting approval or execution: each one's recorded
/// requirement is joined with the new policy's (evaluated on its envelope and today's counterparty facts);
/// where that is stricter it is recorded, and an approved action whose approvals no longer meet it goes back
/// to people (`approval_invalidated`, naming the policy).
async fn tighten_awaiting(
    tx: &mut WriteTx,
    settings: &Settings,
    tenant: &Tenant,
    admin: &Caller,
    policy: &Policy,
    policy_ref: &PolicyRef,
) -> Result<PolicyDecided, Failure> {
    let key = tx.seal_key().clone();
    let mut decided = PolicyDecided::default();
    let now = now_micros();
    for action_id in store::awaiting(tx.conn(), tenant).await? {
        let loaded = super::Loaded::for_decision(tx, tenant, &action_id).await?;
        loaded.verify_sealed(tx, tenant).await?;
        let a = &loaded.action;
        let recorded = loaded.requirement(settings);
        let counterparty = counterparty_facts(tx.conn(), &key, tenant, &a.envelope).await?;
        let facts = facts_of(&a.envelope, &a.proposed_by.id, counterparty, now);
        let tier = a.envelope.risk_tier;
        let new = policy.evaluate(&facts, tier, super::quorum(settings, tier));
        let joined = recorded.join(&new);
        if !joined.stricter_than(&recorded) {
            continue;
        }
        record_requirement(
            tx,
            tenant,
            admin,
            &action_id,
            Some(policy_ref.clone()),
            RequirementReason::PolicyTightened,
            joined.clone(),
        )
        .await?;
        decided.tightened.push(action_id.clone());
        if a.state == ControlState::Approved {
            let standing = joined.standing(&loaded.approvals(), &loaded.barred(), now);
            if !standing.met {
                let next = transitions::next(a.state, Event::ApprovalInvalidated)
                    .map_err(|e| Failure::internal(e.to_string()))?;
                record(
                    tx,
                    tenant,
                    admin,
                    ActionChange::of(
                        a,
                        next,
                        EventType::ActionApprovalInvalidated,
                        json!({
                            "reason": "approval_policy_tightened",
                            "policy": policy_ref,
                            "requirement": joined.in_words(),
                            "still_needed": standing.still_needed(),
                        }),
                    ),
                )
                .await?;
                decided.reopened.push(action_id);
            }
        }
    }
    Ok(decided)
}
