//! An action with everything decisions and views need, read in one place.

use crate::rules::approval::Decision;
use crate::rules::checks::{LatestCheck, check_set_hash};
use crate::rules::policy::{Approval, Requirement, Standing};
use crate::rules::transitions::ReconciliationStatus;
use crate::tables::actions::{Action, ActionDecision, Check, HistoryEntry};
use crate::tables::approval_policies::{DecisionContext, PolicyRef, RequirementBody};
use crate::views::{ActionView, AgentActionView, ApprovalStatusView, CheckVersionView, EnvelopeView, HistoryView};
use fiscus_domain::actions::ControlState;
use fiscus_domain::clock::rfc3339;
use fiscus_domain::integrity::SealKey;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::Record;
use fiscus_store::{Connection, StoreError, WriteTx, seals};
use std::collections::HashMap;

use fiscus_kernel::settings::Settings;

pub struct Loaded {
    pub action: Action,
    /// Every version of every check, ordered by key, then version.
    pub checks: Vec<Check>,
    /// The latest version of each check.
    pub latest: Vec<LatestCheck>,
    /// What approvals cover beside the envelope hash.
    pub check_set_hash: String,
    pub decisions: Vec<ActionDecision>,
    /// The requirement recorded at proposal, or the latest tightening of it (none for an action proposed
    /// before policies existed: its tier's quorum applies).
    pub requirement: Option<Record<RequirementBody>>,
    /// What each decision's operator was when deciding (groups, the sole-approver duty), by decision id.
    pub contexts: HashMap<String, DecisionContext>,
}

/// How one check stands now against how it stood when a decision was taken.
#[derive(Debug)]
pub struct CheckChange<'a> {
    pub check_key: &'a str,
    /// The version the decision saw (none: the check was not recorded yet).
    pub then: Option<&'a Check>,
    pub now: &'a Check,
}

impl Loaded {
    /// What changed in the checks since `at` (a decision's time): each check whose latest version now is not
    /// the one that was latest then. An approval covers the envelope hash and the check-set hash; the
    /// envelope never changes after a proposal, so this is exactly what an invalidated approval no longer
    /// covers.
    pub fn checks_changed_since(&self, at: i64) -> Vec<CheckChange<'_>> {
        let mut out = Vec::new();
        for latest in &self.latest {
            let key = latest.check_key.as_str();
            let of_key = self.checks.iter().filter(|c| c.check_key == key);
            let Some(now) = of_key.clone().max_by_key(|c| c.version) else { continue };
            let then = of_key.filter(|c| c.created_at <= at).max_by_key(|c| c.version);
            if then.map(|c| c.version) != Some(now.version) {
                out.push(CheckChange { check_key: key, then, now });
            }
        }
        out
    }

    /// The action with its evidence, as read to be shown: its row, check versions and decisions checked
    /// against their seals and its envelope hash recomputed ([`Loaded::verify`]); anything changed outside
    /// Fiscus is `Tampered`, never shown as authentic.
    pub async fn load(
        conn: &mut Connection,
        key: &SealKey,
        tenant: &Tenant,
        action: Action,
    ) -> Result<Loaded, StoreError> {
        let loaded = Loaded::assemble(conn, key, tenant, action).await?;
        loaded.verify(conn, key, tenant).await?;
        Ok(loaded)
    }

    /// A page of actions as read by `crate::tables::actions::list` (whose rows it checked), with their
    /// evidence: the page's check versions and decisions checked against their seals in one read each, and
    /// every envelope hash recomputed.
    pub async fn load_page(
        conn: &mut Connection,
        key: &SealKey,
        tenant: &Tenant,
        actions: Vec<Action>,
    ) -> Result<Vec<Loaded>, StoreError> {
        let ws = &tenant.workspace_id;
        let ids: Vec<String> = actions.iter().map(|a| a.id.clone()).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        seals::check_keys(conn, key, &seals::ACTION_CHECKS, ws, "action_id", &ids).await?;
        seals::check_keys(conn, key, &seals::ACTION_DECISIONS, ws, "action_id", &ids).await?;
        let mut checks = crate::tables::actions::checks_of_many(conn, tenant, &ids).await?;
        let mut decisions = crate::tables::actions::decisions_of_many(conn, tenant, &ids).await?;
        let mut requirements = crate::tables::approval_policies::requirements_of(conn, key, tenant, &ids).await?;
        let mut contexts = crate::tables::approval_policies::contexts_of(conn, key, tenant, &ids).await?;
        let mut page = Vec::with_capacity(actions.len());
        for action in actions {
            let checks = checks.remove(&action.id).unwrap_or_default();
            let decisions = decisions.remove(&action.id).unwrap_or_default();
            let requirement = requirements.remove(&action.id).and_then(|mut r| r.pop());
            let contexts = decisions.iter().filter_map(|d| contexts.remove(&d.id).map(|g| (d.id.clone(), g))).collect();
            let latest = latest_checks(&checks);
            let check_set_hash = check_set_hash(&latest);
            let loaded = Loaded { action, checks, latest, check_set_hash, decisions, requirement, contexts };
            loaded.envelope_matches(tenant)?;
            page.push(loaded);
        }
        Ok(page)
    }

    async fn assemble(
        conn: &mut Connection,
        key: &SealKey,
        tenant: &Tenant,
        action: Action,
    ) -> Result<Loaded, StoreError> {
        let checks = crate::tables::actions::checks(conn, tenant, &action.id).await?;
        let decisions = crate::tables::actions::decisions(conn, tenant, &action.id).await?;
        let ids = [action.id.as_str()];
        let requirement = crate::tables::approval_policies::requirements_of(conn, key, tenant, &ids)
            .await?
            .remove(&action.id)
            .and_then(|mut r| r.pop());
        let contexts = crate::tables::approval_policies::contexts_of(conn, key, tenant, &ids).await?;
        let latest = latest_checks(&checks);
        let check_set_hash = check_set_hash(&latest);
        Ok(Loaded { action, checks, latest, check_set_hash, decisions, requirement, contexts })
    }

    /// The action by id, locked for a decision in `tx`, with its evidence; its seals are checked by
    /// [`Loaded::verify_sealed`] before anything is decided on it.
    pub async fn for_decision(tx: &mut WriteTx, tenant: &Tenant, id: &str) -> Result<Loaded, StoreError> {
        let action = crate::tables::actions::get_for_decision(tx, tenant, id).await?;
        let key = tx.seal_key().clone();
        Loaded::assemble(tx.conn(), &key, tenant, action).await
    }

    pub fn state(&self) -> ControlState {
        self.action.state
    }

    /// Whether a decision no longer covers the action as it stands: invalidated (the action's approval was
    /// withdrawn by new evidence), or given on a check set (or envelope) that is no longer the current one, as
    /// when a check arrives while a quorum is still being gathered.
    pub fn is_stale(&self, d: &ActionDecision) -> bool {
        d.invalidated_at.is_some()
            || d.envelope_hash != self.action.envelope_hash
            || d.check_set_hash != self.check_set_hash
    }

    /// Who must approve: the recorded requirement, or for an action proposed before policies existed, its
    /// tier's quorum in this deployment.
    pub fn requirement(&self, settings: &Settings) -> Requirement {
        self.requirement.as_ref().map(|r| r.body.requirement.clone()).unwrap_or_else(|| {
            let tier = self.action.envelope.risk_tier;
            Requirement::floor(tier, super::quorum(settings, tier))
        })
    }

    /// The policy version the requirement was evaluated under (none: the deployment's default).
    pub fn policy(&self) -> Option<&PolicyRef> {
        self.requirement.as_ref().and_then(|r| r.body.policy.as_ref())
    }

    /// The standing approvals that cover the current envelope hash and check set, each with the groups its
    /// operator was in when deciding.
    pub fn approvals(&self) -> Vec<Approval<'_>> {
        self.decisions
            .iter()
            .filter(|d| d.decision == Decision::Approve && !self.is_stale(d))
            .map(|d| Approval {
                operator_id: &d.operator_id,
                groups: self.contexts.get(&d.id).map(|m| m.groups.as_slice()).unwrap_or(&[]),
                at: d.created_at,
            })
            .collect()
    }

    /// The operators whose approval was recorded as never sufficing alone (separation of duties).
    pub fn barred(&self) -> Vec<&str> {
        self.contexts.values().filter(|m| m.sole_approver_barred).map(|m| m.operator_id.as_str()).collect()
    }

    /// How the standing approvals meet the requirement at `now`.
    pub fn standing(&self, settings: &Settings, now: i64) -> Standing {
        self.requirement(settings).standing(&self.approvals(), &self.barred(), now)
    }

    pub fn approval_status(&self, settings: &Settings) -> ApprovalStatusView {
        let requirement = self.requirement(settings);
        let standing = requirement.standing(&self.approvals(), &self.barred(), fiscus_domain::clock::now_micros());
        ApprovalStatusView {
            current: standing.approvals,
            required: standing.quorum,
            met: standing.met,
            still_needed: standing.still_needed(),
            in_words: requirement.in_words(),
            requirement,
            policy: self.policy().cloned(),
        }
    }

    /// Before anything is decided on this action: its row, check versions and decisions must still match
    /// their keyed seals, and the envelope hash recomputed from the row must be the stored one (which every
    /// approval names). Anything else was changed outside Fiscus, and the decision is refused.
    pub async fn verify_sealed(&self, tx: &mut WriteTx, tenant: &Tenant) -> Result<(), StoreError> {
        let key = tx.seal_key().clone();
        self.verify(tx.conn(), &key, tenant).await
    }

    /// Its row, check versions and decisions against their keyed seals, and its envelope hash recomputed.
    pub async fn verify(&self, conn: &mut Connection, key: &SealKey, tenant: &Tenant) -> Result<(), StoreError> {
        let ws = &tenant.workspace_id;
        let id = &self.action.id;
        seals::check(conn, key, &seals::ACTIONS, ws, "id", id).await?;
        seals::check(conn, key, &seals::ACTION_CHECKS, ws, "action_id", id).await?;
        seals::check(conn, key, &seals::ACTION_DECISIONS, ws, "action_id", id).await?;
        self.envelope_matches(tenant)
    }

    /// The envelope hash recomputed from the row must be the stored one (which every approval names).
    fn envelope_matches(&self, tenant: &Tenant) -> Result<(), StoreError> {
        let id = &self.action.id;
        let recomputed = self.action.envelope.hash(id, &tenant.workspace_id, tenant.environment.as_str());
        if recomputed.as_deref() != Some(self.action.envelope_hash.as_str()) {
            return Err(StoreError::Tampered(format!("actions {id}: envelope hash")));
        }
        Ok(())
    }

    pub fn view(&self, settings: &Settings, history: Option<Vec<HistoryView>>) -> ActionView {
        let a = &self.action;
        let latest_rows = self
            .latest
            .iter()
            .filter_map(|l| self.checks.iter().find(|c| c.check_key == l.check_key && c.version == l.version));
        ActionView {
            object: "financial_action".into(),
            id: a.id.clone(),
            environment: a.environment,
            control_state: a.state,
            reconciliation_status: ReconciliationStatus::of(a.state),
            envelope: EnvelopeView::from(a.envelope.clone()),
            envelope_hash: a.envelope_hash.clone(),
            origin: a.origin,
            proposed_by: a.proposed_by.clone(),
            approvals: self.approval_status(settings),
            checks: latest_rows.map(check_view).collect(),
            check_set_hash: self.check_set_hash.clone(),
            executes_on_creation: false,
            created_at: rfc3339(a.created_at),
            updated_at: rfc3339(a.updated_at),
            history,
        }
    }

    pub fn agent_view(&self, settings: &Settings) -> AgentActionView {
        let a = &self.action;
        AgentActionView {
            object: "financial_action_status".into(),
            id: a.id.clone(),
            control_state: a.state,
            reconciliation_status: ReconciliationStatus::of(a.state),
            kind: a.envelope.kind,
            amount_minor: a.envelope.amount_minor,
            currency: a.envelope.currency.code().to_string(),
            reference: a.envelope.reference.clone(),
            envelope_hash: a.envelope_hash.clone(),
            approvals: self.approval_status(settings),
            updated_at: rfc3339(a.updated_at),
        }
    }
}

/// The latest version of each check (rows come ordered by key, then version).
fn latest_checks(rows: &[Check]) -> Vec<LatestCheck> {
    let mut latest: Vec<LatestCheck> = Vec::new();
    for r in rows {
        let entry = LatestCheck {
            check_key: r.check_key.clone(),
            version: r.version,
            status: r.status,
            check_hash: r.check_hash.clone(),
        };
        match latest.last_mut() {
            Some(last) if last.check_key == r.check_key => *last = entry,
            _ => latest.push(entry),
        }
    }
    latest
}

pub fn check_view(c: &Check) -> CheckVersionView {
    CheckVersionView {
        object: "pre_trade_check".into(),
        id: c.id.clone(),
        check_key: c.check_key.clone(),
        version: c.version,
        status: c.status,
        source_type: c.source_type.clone(),
        source_reference: c.source_reference.clone(),
        source_hash: c.source_hash.clone(),
        metrics: c.metrics.clone(),
        metadata: c.metadata.clone(),
        check_hash: c.check_hash.clone(),
        recorded_by: c.recorded_by.clone(),
        created_at: rfc3339(c.created_at),
    }
}

pub fn history_view(h: HistoryEntry) -> HistoryView {
    HistoryView {
        from_state: h.from_state,
        to_state: h.to_state,
        event: h.event,
        actor: h.actor,
        detail: h.detail,
        at: rfc3339(h.created_at),
    }
}

/// An action's history, oldest first, as the API shows it.
pub async fn history(conn: &mut Connection, tenant: &Tenant, action_id: &str) -> Result<Vec<HistoryView>, StoreError> {
    Ok(crate::tables::actions::history(conn, tenant, action_id).await?.into_iter().map(history_view).collect())
}
