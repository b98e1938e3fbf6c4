//! Approval policies' versions, the requirement each action got and the groups each approver was in at a
//! decision: sealed records (leaves of the transparency log). A policy's versions behave as bank details'
//! do: a change is the next version, `pending` until a second admin decides it (guarded on `pending`), and
//! an approval supersedes the active version in the same transaction; the schema's partial unique indexes
//! hold one pending and one active version per tenant. Requirements and decision contexts are only ever inserted:
//! an action's newest requirement is the one that counts. A batch of decisions (`steps::batch`) is one record.

use std::collections::{BTreeMap, HashMap};

use crate::rules::bank_accounts::VersionState;
use crate::rules::policy::{Policy, Requirement};
use fiscus_domain::actor::Actor;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::payment_tables::{ACTION_REQUIREMENTS, APPROVAL_BATCHES, APPROVAL_POLICIES, DECISION_CONTEXTS};
use fiscus_store::sealed_records::{
    Fields, Record, columns_differ, insert_record, opt_text, select_where, text, update_guarded,
};
use fiscus_store::{Result, StoreError, WriteTx, seals};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;

/// A version of a tenant's policy and where it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyVersion {
    pub record: Record<Policy>,
    pub version: i64,
    pub state: VersionState,
    /// The second admin's decision: who, when, and their note.
    pub decision: Option<(Actor, i64, Option<String>)>,
}

fn policy_version(f: &Fields) -> Result<PolicyVersion> {
    let note = f.opt_text("decision_note")?;
    Ok(PolicyVersion {
        record: f.record()?,
        version: f.int("version")?,
        state: f.parsed("state", VersionState::parse)?,
        decision: f.stamp("decided_by", "decided_at")?.map(|(by, at)| (by, at, note)),
    })
}

/// Inserts a pending version; `Conflict` when the tenant has a pending version already or the number is taken
/// (two changes proposed at once: one of them wins).
pub async fn insert_version(tx: &mut WriteTx, tenant: &Tenant, record: &Record<Policy>, version: i64) -> Result<()> {
    let own = [("version", Stored::Integer(version)), ("state", text(VersionState::Pending.as_str()))];
    insert_record(tx, &APPROVAL_POLICIES, tenant, record, &own).await
}

/// Every version of the tenant's policy, oldest first.
pub async fn versions(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant) -> Result<Vec<PolicyVersion>> {
    let rows = seals::select_sealed(
        conn,
        key,
        &APPROVAL_POLICIES,
        "workspace_id = $1 AND environment = $2 ORDER BY version",
        &[Stored::Text(tenant.workspace_id.clone()), Stored::Text(tenant.environment.as_str().into())],
    )
    .await?;
    rows.into_iter().map(|columns| policy_version(&Fields { table: APPROVAL_POLICIES.table, columns })).collect()
}

pub async fn get_version(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<PolicyVersion> {
    let rows = select_where(conn, key, &APPROVAL_POLICIES, tenant, "id", text(id)).await?;
    rows.first().map(policy_version).transpose()?.ok_or(StoreError::NotFound)
}

/// The version in force, if an admin pair ever approved one.
pub async fn active(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant) -> Result<Option<PolicyVersion>> {
    let rows =
        select_where(conn, key, &APPROVAL_POLICIES, tenant, "state", text(VersionState::Active.as_str())).await?;
    rows.first().map(policy_version).transpose()
}

/// Records the second admin's decision on a pending version: `Rejected`, or `Active` with the version in
/// force (if any) `Superseded` first, in `tx`. `false` when the version was no longer pending.
pub async fn decide(
    tx: &mut WriteTx,
    tenant: &Tenant,
    v: &PolicyVersion,
    approve: bool,
    by: &Actor,
    at: i64,
    note: Option<&str>,
) -> Result<bool> {
    let stamp = |state: VersionState| {
        [
            ("state", text(state.as_str())),
            ("decided_by", text(&by.label())),
            ("decided_at", Stored::Integer(at)),
            ("decision_note", opt_text(note)),
        ]
    };
    if !approve {
        let set = stamp(VersionState::Rejected);
        return update_guarded(tx, &APPROVAL_POLICIES, tenant, &v.record.id, &set, ("state", "pending")).await;
    }
    let in_force: Option<(String,)> = sqlx::query_as(
        "SELECT id FROM approval_policies WHERE workspace_id = $1 AND environment = $2 AND state = 'active'",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .fetch_optional(tx.conn())
    .await?;
    if let Some((previous,)) = in_force {
        let set = [("state", text(VersionState::Superseded.as_str()))];
        if !update_guarded(tx, &APPROVAL_POLICIES, tenant, &previous, &set, ("state", "active")).await? {
            return Err(StoreError::Conflict("approval_policies_one_active".into()));
        }
    }
    update_guarded(tx, &APPROVAL_POLICIES, tenant, &v.record.id, &stamp(VersionState::Active), ("state", "pending"))
        .await
}

// ------------------------------------------------------------------------------------------- requirements

/// The policy version a requirement was evaluated under.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyRef {
    /// `apv_…`
    pub id: String,
    pub version: i64,
    /// `sha256:` of the policy's RFC 8785 form.
    pub hash: String,
}

/// Why a requirement was recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RequirementReason {
    /// Evaluated when the action was proposed.
    Proposal,
    /// A stricter policy came into force while the action awaited execution.
    PolicyTightened,
}

/// A requirement as recorded beside its action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequirementBody {
    pub action_id: String,
    /// None: no policy was in force, and the deployment's default applied.
    pub policy: Option<PolicyRef>,
    pub reason: RequirementReason,
    pub requirement: Requirement,
}

fn requirement(f: &Fields) -> Result<Record<RequirementBody>> {
    let record: Record<RequirementBody> = f.record()?;
    let same = f.text("action_id")? == record.body.action_id
        && f.opt_text("policy_id")? == record.body.policy.as_ref().map(|p| p.id.clone());
    if !same {
        return Err(columns_differ(ACTION_REQUIREMENTS.table, &record.id));
    }
    Ok(record)
}

pub async fn insert_requirement(tx: &mut WriteTx, tenant: &Tenant, r: &Record<RequirementBody>) -> Result<()> {
    let own = [
        ("action_id", text(&r.body.action_id)),
        ("policy_id", opt_text(r.body.policy.as_ref().map(|p| p.id.as_str()))),
    ];
    insert_record(tx, &ACTION_REQUIREMENTS, tenant, r, &own).await
}

/// Rows of `table` for these actions of the tenant, seals checked, in a read per 500 actions.
async fn of_actions(
    conn: &mut AnyConnection,
    key: &SealKey,
    table: &seals::SealedTable,
    tenant: &Tenant,
    ids: &[&str],
) -> Result<Vec<Fields>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(500) {
        let placeholders: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 3)).collect();
        let filter = format!(
            "workspace_id = $1 AND environment = $2 AND action_id IN ({}) ORDER BY created_at, id",
            placeholders.join(", ")
        );
        let mut binds =
            vec![Stored::Text(tenant.workspace_id.clone()), Stored::Text(tenant.environment.as_str().into())];
        binds.extend(chunk.iter().map(|id| Stored::Text((*id).to_string())));
        let rows = seals::select_sealed(conn, key, table, &filter, &binds).await?;
        out.extend(rows.into_iter().map(|columns| Fields { table: table.table, columns }));
    }
    Ok(out)
}

/// Every requirement recorded for these actions, oldest first, by action (the last one counts).
pub async fn requirements_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    ids: &[&str],
) -> Result<HashMap<String, Vec<Record<RequirementBody>>>> {
    let mut by_action: HashMap<String, Vec<Record<RequirementBody>>> = HashMap::new();
    for f in of_actions(conn, key, &ACTION_REQUIREMENTS, tenant, ids).await? {
        let r = requirement(&f)?;
        by_action.entry(r.body.action_id.clone()).or_default().push(r);
    }
    Ok(by_action)
}

/// The tenant's actions awaiting approval or execution, for a new policy to tighten: their ids, oldest first.
pub async fn awaiting(conn: &mut AnyConnection, tenant: &Tenant) -> Result<Vec<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT id FROM actions WHERE workspace_id = $1 AND environment = $2 \
         AND control_state IN ('draft', 'pending_approval', 'approved') ORDER BY id",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

// ------------------------------------------------------------------------------------- decision contexts

/// What a decision was given with: the approver groups its operator was in, the separation-of-duties bar,
/// the batch it was part of and the reason the person gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionContext {
    pub decision_id: String,
    pub action_id: String,
    pub operator_id: String,
    pub groups: Vec<String>,
    /// The operator approved the counterparty's bank details within the separation-of-duties window, so
    /// this approval never suffices alone.
    pub sole_approver_barred: bool,
    /// The batch (`apb_…`) the decision was given in, at the console's batch approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
    /// The person's reason, as they wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

fn context(f: &Fields) -> Result<Record<DecisionContext>> {
    let record: Record<DecisionContext> = f.record()?;
    let b = &record.body;
    if f.text("action_id")? != b.action_id || f.text("operator_id")? != b.operator_id {
        return Err(columns_differ(DECISION_CONTEXTS.table, &record.id));
    }
    Ok(record)
}

/// Inserts the context of a decision (a record of its own, `dcx_…`: a leaf of the log is found by its id).
pub async fn insert_context(tx: &mut WriteTx, tenant: &Tenant, m: &Record<DecisionContext>) -> Result<()> {
    let own = [("action_id", text(&m.body.action_id)), ("operator_id", text(&m.body.operator_id))];
    insert_record(tx, &DECISION_CONTEXTS, tenant, m, &own).await
}

/// What each decision's operator was (groups, the sole-approver duty), by decision id, for these actions.
pub async fn contexts_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    ids: &[&str],
) -> Result<HashMap<String, DecisionContext>> {
    let mut by_decision = HashMap::new();
    for f in of_actions(conn, key, &DECISION_CONTEXTS, tenant, ids).await? {
        let m = context(&f)?;
        by_decision.insert(m.body.decision_id.clone(), m.body);
    }
    Ok(by_decision)
}

// --------------------------------------------------------------------------------------------------- batches

/// An item decided: its own decision and what it did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecidedItem {
    pub action_id: String,
    pub envelope_hash: String,
    pub check_set_hash: String,
    pub decision_id: String,
    pub outcome: ItemOutcome,
}

/// What a batch's decision did to its action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemOutcome {
    /// Its requirement is met: the action is approved.
    Approved,
    /// Recorded; more people must approve.
    Recorded,
    Denied,
}

/// An item left out, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeftOut {
    pub action_id: String,
    pub reason: String,
}

/// The batch's sealed record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchBody {
    pub operator_id: String,
    /// `approve` or `deny`.
    pub decision: String,
    /// The filter the page was drawn with, as the person set it.
    pub filter: BTreeMap<String, String>,
    pub reason: Option<String>,
    pub decided: Vec<DecidedItem>,
    pub left_out: Vec<LeftOut>,
}

pub type Batch = Record<BatchBody>;

pub async fn insert_batch(tx: &mut WriteTx, tenant: &Tenant, b: &Batch) -> Result<()> {
    let own = [("operator_id", text(&b.body.operator_id))];
    insert_record(tx, &APPROVAL_BATCHES, tenant, b, &own).await
}

/// A batch of the tenant by id, its seal checked.
pub async fn get_batch(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Batch> {
    let rows = select_where(conn, key, &APPROVAL_BATCHES, tenant, "id", text(id)).await?;
    let f = rows.first().ok_or(StoreError::NotFound)?;
    let b: Batch = f.record()?;
    if f.text("operator_id")? != b.body.operator_id {
        return Err(columns_differ(APPROVAL_BATCHES.table, &b.id));
    }
    Ok(b)
}
