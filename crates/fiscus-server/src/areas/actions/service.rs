//! Orchestration shared by the action handlers: load an action with its evidence, shape views, and record
//! state changes with their history, audit event and outbox event in the caller's transaction.

use fiscus_domain::actions::approval;
use fiscus_domain::actions::checks::{CheckStatus, LatestCheck, check_set_hash};
use fiscus_domain::actions::envelope::{ActionKind, Envelope, ExecutionMode, RiskTier};
use fiscus_domain::actions::state::{ControlState, ReconciliationStatus};
use fiscus_domain::api::actions::{
    ActionView, AgentActionView, ApprovalStatusView, CheckVersionView, EnvelopeView, HistoryView, ProposerView,
};
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::Connection as AnyConnection;
use fiscus_store::WriteTx;
use fiscus_store::actions::{ActionRow, CheckRow, DecisionRow, HistoryEntry};
use fiscus_store::seals;
use serde_json::{Value, json};

use crate::http::problem::ApiError;
use crate::settings::Settings;

/// An action with everything decisions and views need.
pub struct Loaded {
    pub row: ActionRow,
    pub state: ControlState,
    pub checks: Vec<CheckRow>,
    pub latest: Vec<LatestCheck>,
    pub check_set_hash: String,
    pub decisions: Vec<DecisionRow>,
}

fn corrupt(what: &str, value: &str) -> ApiError {
    tracing::error!(what, value, "stored action data is not what the code expects");
    ApiError::internal()
}

pub fn parse_state(s: &str) -> Result<ControlState, ApiError> {
    ControlState::parse(s).ok_or_else(|| corrupt("control_state", s))
}

pub async fn load(conn: &mut AnyConnection, tenant: &Tenant, row: ActionRow) -> Result<Loaded, ApiError> {
    let state = parse_state(&row.control_state)?;
    let checks = fiscus_store::actions::checks(conn, tenant, &row.id).await?;
    let decisions = fiscus_store::actions::decisions(conn, tenant, &row.id).await?;
    let latest = latest_checks(&checks)?;
    let check_set_hash = check_set_hash(&latest);
    Ok(Loaded { row, state, checks, latest, check_set_hash, decisions })
}

/// The latest version of each check (rows come ordered by key, then version).
fn latest_checks(rows: &[CheckRow]) -> Result<Vec<LatestCheck>, ApiError> {
    let mut latest: Vec<LatestCheck> = Vec::new();
    for r in rows {
        let status = CheckStatus::parse(&r.status).ok_or_else(|| corrupt("check status", &r.status))?;
        let entry = LatestCheck {
            check_key: r.check_key.clone(),
            version: r.version,
            status,
            check_hash: r.check_hash.clone(),
        };
        match latest.last_mut() {
            Some(last) if last.check_key == r.check_key => *last = entry,
            _ => latest.push(entry),
        }
    }
    Ok(latest)
}

fn kind_of(row: &ActionRow) -> Result<ActionKind, ApiError> {
    ActionKind::parse(&row.kind).ok_or_else(|| corrupt("kind", &row.kind))
}

/// An action's envelope, rebuilt strictly from its row (an unknown stored value refuses); what its
/// `envelope_hash` must be the seal of.
pub fn envelope_of(r: &ActionRow) -> Result<Envelope, ApiError> {
    Ok(Envelope {
        kind: kind_of(r)?,
        amount_minor: r.amount_minor,
        currency: Currency::parse(&r.currency).ok_or_else(|| corrupt("currency", &r.currency))?,
        counterparty: r.counterparty.clone(),
        connector: r.connector.clone(),
        execution_mode: ExecutionMode::parse(&r.execution_mode)
            .ok_or_else(|| corrupt("execution_mode", &r.execution_mode))?,
        delegation_id: r.delegation_id.clone(),
        risk_tier: risk_tier(r)?,
        reference: r.reference.clone(),
        required_checks: serde_json::from_str(&r.required_checks)
            .map_err(|_| corrupt("required_checks", &r.required_checks))?,
        metadata: serde_json::from_str(&r.metadata).map_err(|_| corrupt("metadata", &r.metadata))?,
    })
}

pub fn risk_tier(row: &ActionRow) -> Result<RiskTier, ApiError> {
    RiskTier::parse(&row.risk_tier).ok_or_else(|| corrupt("risk_tier", &row.risk_tier))
}

pub fn quorum(settings: &Settings, tier: RiskTier) -> u32 {
    let configured = match tier {
        RiskTier::T1 => settings.approval_quorum_t1,
        RiskTier::T2 => settings.approval_quorum_t2,
    };
    approval::quorum(tier, Some(configured))
}

impl Loaded {
    /// Distinct operators whose standing approval covers the current envelope hash and check set.
    pub fn current_approvals(&self) -> u32 {
        let mut ops: Vec<&str> = self
            .decisions
            .iter()
            .filter(|d| {
                d.decision == "approve"
                    && d.invalidated_at.is_none()
                    && d.envelope_hash == self.row.envelope_hash
                    && d.check_set_hash == self.check_set_hash
            })
            .map(|d| d.operator_id.as_str())
            .collect();
        ops.sort_unstable();
        ops.dedup();
        ops.len() as u32
    }

    pub fn approval_status(&self, settings: &Settings) -> Result<ApprovalStatusView, ApiError> {
        Ok(ApprovalStatusView { current: self.current_approvals(), required: quorum(settings, risk_tier(&self.row)?) })
    }

    pub fn required_checks(&self) -> Result<Vec<String>, ApiError> {
        serde_json::from_str(&self.row.required_checks)
            .map_err(|_| corrupt("required_checks", &self.row.required_checks))
    }

    /// The envelope as stored, rebuilt strictly from the row (an unknown stored value refuses).
    pub fn envelope(&self) -> Result<Envelope, ApiError> {
        envelope_of(&self.row)
    }

    /// Before anything is decided on this action: its row, check versions and decisions must still match
    /// their keyed seals, and the envelope hash recomputed from the row must be the stored one (which every
    /// approval names). Anything else was changed outside Fiscus, and the decision is refused.
    pub async fn verify_sealed(&self, tx: &mut WriteTx, tenant: &Tenant) -> Result<(), ApiError> {
        let key = tx.seal_key().clone();
        let ws = &tenant.workspace_id;
        let id = &self.row.id;
        fiscus_store::seals::check(tx.conn(), &key, &seals::ACTIONS, ws, "id", id).await?;
        fiscus_store::seals::check(tx.conn(), &key, &seals::ACTION_CHECKS, ws, "action_id", id).await?;
        fiscus_store::seals::check(tx.conn(), &key, &seals::ACTION_DECISIONS, ws, "action_id", id).await?;
        let recomputed = self.envelope()?.hash(id, ws, tenant.environment.as_str());
        if recomputed.as_deref() != Some(self.row.envelope_hash.as_str()) {
            return Err(fiscus_store::StoreError::Tampered(format!("actions {id}: envelope hash")).into());
        }
        Ok(())
    }

    pub fn execution_mode(&self) -> Result<ExecutionMode, ApiError> {
        match self.row.execution_mode.as_str() {
            "human_approved" => Ok(ExecutionMode::HumanApproved),
            "machine_delegated" => Ok(ExecutionMode::MachineDelegated),
            other => Err(corrupt("execution_mode", other)),
        }
    }

    fn kind(&self) -> Result<ActionKind, ApiError> {
        kind_of(&self.row)
    }

    pub fn view(&self, settings: &Settings, history: Option<Vec<HistoryView>>) -> Result<ActionView, ApiError> {
        let r = &self.row;
        let latest_rows: Vec<&CheckRow> = self
            .latest
            .iter()
            .filter_map(|l| self.checks.iter().find(|c| c.check_key == l.check_key && c.version == l.version))
            .collect();
        Ok(ActionView {
            object: "financial_action".into(),
            id: r.id.clone(),
            environment: r.environment.clone(),
            control_state: self.state,
            reconciliation_status: ReconciliationStatus::of(self.state),
            envelope: EnvelopeView::from(self.envelope()?),
            envelope_hash: r.envelope_hash.clone(),
            origin: r.origin.clone(),
            proposed_by: ProposerView { kind: r.proposed_by_kind.clone(), id: r.proposed_by_id.clone() },
            approvals: self.approval_status(settings)?,
            checks: latest_rows.into_iter().map(check_view).collect::<Result<_, _>>()?,
            check_set_hash: self.check_set_hash.clone(),
            executes_on_creation: false,
            created_at: rfc3339(r.created_at),
            updated_at: rfc3339(r.updated_at),
            history,
        })
    }

    pub fn agent_view(&self, settings: &Settings) -> Result<AgentActionView, ApiError> {
        let r = &self.row;
        Ok(AgentActionView {
            object: "financial_action_status".into(),
            id: r.id.clone(),
            control_state: self.state,
            reconciliation_status: ReconciliationStatus::of(self.state),
            kind: self.kind()?,
            amount_minor: r.amount_minor,
            currency: r.currency.clone(),
            reference: r.reference.clone(),
            envelope_hash: r.envelope_hash.clone(),
            approvals: self.approval_status(settings)?,
            updated_at: rfc3339(r.updated_at),
        })
    }
}

pub fn check_view(c: &CheckRow) -> Result<CheckVersionView, ApiError> {
    Ok(CheckVersionView {
        object: "pre_trade_check".into(),
        id: c.id.clone(),
        check_key: c.check_key.clone(),
        version: c.version,
        status: CheckStatus::parse(&c.status).ok_or_else(|| corrupt("check status", &c.status))?,
        source_type: c.source_type.clone(),
        source_reference: c.source_reference.clone(),
        source_hash: c.source_hash.clone(),
        metrics: serde_json::from_str(&c.metrics).unwrap_or(Value::Null),
        metadata: serde_json::from_str(&c.metadata).unwrap_or(Value::Null),
        check_hash: c.check_hash.clone(),
        recorded_by: c.recorded_by.clone(),
        created_at: rfc3339(c.created_at),
    })
}

pub async fn history(conn: &mut AnyConnection, tenant: &Tenant, action_id: &str) -> Result<Vec<HistoryView>, ApiError> {
    Ok(fiscus_store::actions::history(conn, tenant, action_id)
        .await?
        .into_iter()
        .map(|h| HistoryView {
            from_state: h.from_state,
            to_state: h.to_state,
            event: h.event,
            actor: ProposerView { kind: h.actor_kind, id: h.actor_id },
            detail: serde_json::from_str(&h.detail).unwrap_or(Value::Null),
            at: rfc3339(h.created_at),
        })
        .collect())
}

/// Records a new proposal: the envelope, its hash, its first history entry and its outbox event, in `tx`.
/// Proposing executes nothing.
pub async fn insert_proposal(
    tx: &mut WriteTx,
    tenant: &Tenant,
    envelope: &fiscus_domain::actions::envelope::Envelope,
    origin: &str,
    initial: ControlState,
    proposer: &Actor<'_>,
) -> Result<ActionRow, ApiError> {
    let id = fiscus_domain::ids::new_id("act");
    let envelope_hash = envelope
        .hash(&id, &tenant.workspace_id, tenant.environment.as_str())
        .ok_or_else(|| ApiError::invalid_request("metadata", "numbers must be finite"))?;
    let now = now_micros();
    let row = ActionRow {
        id: id.clone(),
        environment: tenant.environment.as_str().into(),
        kind: envelope.kind.as_str().into(),
        amount_minor: envelope.amount_minor,
        currency: envelope.currency.code().into(),
        counterparty: envelope.counterparty.clone(),
        connector: envelope.connector.clone(),
        execution_mode: envelope.execution_mode.as_str().into(),
        delegation_id: envelope.delegation_id.clone(),
        risk_tier: envelope.risk_tier.as_str().into(),
        reference: envelope.reference.clone(),
        required_checks: serde_json::to_string(&envelope.required_checks).unwrap_or_else(|_| "[]".into()),
        metadata: envelope.metadata.to_string(),
        envelope_hash: envelope_hash.clone(),
        control_state: initial.as_str().into(),
        origin: origin.into(),
        proposed_by_kind: proposer.kind.into(),
        proposed_by_id: proposer.id.into(),
        created_at: now,
        updated_at: now,
    };
    fiscus_store::actions::insert(tx, tenant, &row).await?;
    record_transition(
        tx,
        tenant,
        &id,
        None,
        initial,
        "action.proposed",
        proposer,
        json!({ "origin": origin, "envelope_hash": envelope_hash }),
    )
    .await?;
    Ok(row)
}

/// Who made a change, for history and audit.
pub struct Actor<'a> {
    pub kind: &'a str,
    pub id: &'a str,
}

/// Records a state change: the conditional update, its history entry and its outbox event, in `tx`.
#[expect(
    clippy::too_many_arguments,
    reason = "a state change is these facts together; a struct would only rename them at every call site"
)]
pub async fn record_transition(
    tx: &mut WriteTx,
    tenant: &Tenant,
    action_id: &str,
    from: Option<ControlState>,
    to: ControlState,
    event: &str,
    actor: &Actor<'_>,
    detail: Value,
) -> Result<(), ApiError> {
    let now = now_micros();
    if let Some(from) = from {
        fiscus_store::actions::transition(tx, tenant, action_id, from.as_str(), to.as_str(), now).await?;
    }
    fiscus_store::actions::record_history(
        tx,
        tenant,
        &HistoryEntry {
            action_id,
            from_state: from.map(ControlState::as_str),
            to_state: to.as_str(),
            event,
            actor_kind: actor.kind,
            actor_id: actor.id,
            detail: detail.clone(),
            created_at: now,
        },
    )
    .await?;
    let payload = json!({
        "type": event,
        "action_id": action_id,
        "environment": tenant.environment.as_str(),
        "from_state": from.map(ControlState::as_str),
        "to_state": to.as_str(),
        "actor": { "kind": actor.kind, "id": actor.id },
        "detail": detail,
        "occurred_at": rfc3339(now),
    });
    fiscus_store::actions::enqueue_event(tx, tenant, event, action_id, &payload, now).await?;
    Ok(())
}
