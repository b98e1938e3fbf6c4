//! Promotion: a credential requests that an exact evaluated, published checkpoint serve in the Quant
//! Models catalogue; only an operator at the console approves or denies it, and may revoke it later.
//! Approving supersedes the model's earlier promotion in the same transaction, so a model serves one
//! checkpoint at a time.

use crate::rules::lqm::lifecycle::{self, Operation, PromotionState};
use crate::rules::lqm::promotion::{self as rules, PromotionDecision};
use crate::rules::lqm::records::PromotionBody;
use crate::tables::lqm::models::Model;
use crate::tables::lqm::supply_chain::{self, Promotion};
use crate::tables::lqm::training::Review;
use fiscus_domain::actor::ActorKind;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::Record;
use serde_json::json;

use super::registry::{self, Dossier};
use super::{canonical, gate_closed};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

fn gate(d: &Dossier, checkpoint_id: &str) -> Result<(), Failure> {
    let here = d.checkpoint(checkpoint_id).ok_or(Failure::NotFound)?;
    lifecycle::gate(Operation::Promotion, &d.facts, Some(&here.facts))
        .map_err(|r| gate_closed(Operation::Promotion, &r))
}

/// Requests the promotion of a checkpoint (awaiting an operator); the request carries its control evidence.
pub async fn request(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    checkpoint_id: &str,
    note: Option<String>,
) -> Result<Promotion, Failure> {
    if note.as_ref().is_some_and(|n| !fiscus_domain::fields::prose_ok(n, 2000)) {
        return Err(Failure::Invalid(vec![("note", "at most 2000 characters".into())]));
    }
    let (c, _) = super::training::checkpoint(services, tenant, checkpoint_id).await?;
    let d = registry::dossier(services, tenant, &c.body.model_id).await?;
    gate(&d, checkpoint_id)?;
    let here = d.checkpoint(checkpoint_id).ok_or(Failure::NotFound)?;
    let (Some(e), Some(p), Some(publication)) = (&here.evaluation, &here.packet, &here.publication) else {
        return Err(Failure::internal("a promotable checkpoint lacks its evaluation, packet or publication"));
    };
    let body = PromotionBody {
        model_id: d.model.id.clone(),
        checkpoint_id: c.id.clone(),
        checkpoint_hash: c.content_hash.clone(),
        evaluation_hash: e.content_hash.clone(),
        evidence_packet_hash: p.content_hash.clone(),
        publication_id: publication.id.clone(),
        publication_head: publication.content_hash.clone(),
        note,
    };
    let (body_json, content_hash) = canonical("promotion", &body)?;
    let now = now_micros();
    let record = Record {
        id: fiscus_domain::ids::new_id("lpm"),
        body,
        body_json,
        content_hash,
        created_by: caller.actor.clone(),
        created_at: now,
    };
    let mut tx = services.store.begin().await?;
    supply_chain::insert_promotion(&mut tx, tenant, &record).await?;
    let details =
        json!({ "checkpoint": c.id, "checkpoint_hash": c.content_hash, "promotion_hash": record.content_hash });
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::LqmPromotionRequested, &record.id, details, now))
        .await?;
    tx.commit().await?;
    Ok(Promotion { record, state: PromotionState::Pending, decision: None, ended: None })
}

fn operator_only(caller: &Caller) -> Result<(), Failure> {
    if caller.actor.kind == ActorKind::Operator {
        Ok(())
    } else {
        Err(Failure::refused(ErrorCode::Conflict, "only an operator at the console decides a promotion"))
    }
}

async fn load(services: &Services, tenant: &Tenant, id: &str) -> Result<Promotion, Failure> {
    let mut conn = services.store.read().await?;
    Ok(supply_chain::get_promotion(&mut conn, services.store.seal_key(), tenant, id).await?)
}

/// An operator's decision. `checkpoint_hash` is the hash the operator's page showed: a promotion of any
/// other checkpoint is not decided. Approval re-checks the checkpoint's gate (revoked, superseded,
/// unpublished or failed checkpoints are never served) and supersedes the model's active promotion.
pub async fn decide(
    services: &Services,
    operator: &Caller,
    tenant: &Tenant,
    id: &str,
    decision: PromotionDecision,
    checkpoint_hash: &str,
) -> Result<Promotion, Failure> {
    operator_only(operator)?;
    let p = load(services, tenant, id).await?;
    if p.record.body.checkpoint_hash != checkpoint_hash {
        return Err(Failure::refused(
            ErrorCode::Conflict,
            "the promotion is not of the checkpoint shown; nothing was decided",
        ));
    }
    let to = rules::decide(p.state, decision).map_err(|e| Failure::refused(ErrorCode::Conflict, e.to_string()))?;
    let d = registry::dossier(services, tenant, &p.record.body.model_id).await?;
    if to == PromotionState::Active {
        let here = d.checkpoint(&p.record.body.checkpoint_id).ok_or(Failure::NotFound)?;
        // The request itself holds the checkpoint's promotion `pending`; the rest of the gate must be open.
        let mut facts = here.facts;
        facts.promotion = None;
        if let Err(reasons) = lifecycle::gate(Operation::Promotion, &d.facts, Some(&facts)) {
            return Err(gate_closed(Operation::Promotion, &reasons));
        }
    }
    let now = now_micros();
    let by = operator.actor.clone();
    let review = Review { by: by.clone(), at: now, note: None };
    let mut tx = services.store.begin().await?;
    if !supply_chain::decide_promotion(&mut tx, tenant, id, to, &review).await? {
        return Err(Failure::refused(ErrorCode::Conflict, "the promotion was decided meanwhile"));
    }
    let mut superseded = Vec::new();
    if to == PromotionState::Active {
        for other in d.promotions.iter().filter(|o| o.state == PromotionState::Active && o.record.id != id) {
            supply_chain::end_promotion(&mut tx, tenant, &other.record.id, PromotionState::Superseded, &by, now)
                .await?;
            superseded.push(other.record.id.clone());
        }
    }
    let action = if to == PromotionState::Active { Change::LqmPromotionApproved } else { Change::LqmPromotionDenied };
    let details = json!({ "checkpoint": p.record.body.checkpoint_id, "checkpoint_hash": checkpoint_hash, "superseded": superseded });
    audit(&mut tx, operator, &AuditEntry::of_tenant(tenant, action, id, details, now)).await?;
    tx.commit().await?;
    load(services, tenant, id).await
}

/// An operator revokes an active promotion: the checkpoint serves nothing from then on, and QLM versions
/// pinning it refuse to run until an operator rebinds them.
pub async fn revoke(
    services: &Services,
    operator: &Caller,
    tenant: &Tenant,
    id: &str,
    checkpoint_hash: &str,
) -> Result<Promotion, Failure> {
    operator_only(operator)?;
    let p = load(services, tenant, id).await?;
    if p.record.body.checkpoint_hash != checkpoint_hash {
        return Err(Failure::refused(
            ErrorCode::Conflict,
            "the promotion is not of the checkpoint shown; nothing was revoked",
        ));
    }
    let to = rules::revoke(p.state).map_err(|e| Failure::refused(ErrorCode::Conflict, e.to_string()))?;
    let now = now_micros();
    let by = operator.actor.clone();
    let mut tx = services.store.begin().await?;
    if !supply_chain::end_promotion(&mut tx, tenant, id, to, &by, now).await? {
        return Err(Failure::refused(ErrorCode::Conflict, "the promotion ended meanwhile"));
    }
    let details =
        json!({ "checkpoint": p.record.body.checkpoint_id, "checkpoint_hash": p.record.body.checkpoint_hash });
    audit(&mut tx, operator, &AuditEntry::of_tenant(tenant, Change::LqmPromotionRevoked, id, details, now)).await?;
    tx.commit().await?;
    load(services, tenant, id).await
}

/// A model's promotion history, oldest first.
pub async fn history(services: &Services, tenant: &Tenant, model_id: &str) -> Result<Vec<Promotion>, Failure> {
    registry::model(services, tenant, model_id).await?;
    let mut conn = services.store.read().await?;
    Ok(supply_chain::promotions_of(&mut conn, services.store.seal_key(), tenant, model_id).await?)
}

/// The promotions in one state (the console's queues, and the catalogue's active ones) with their models.
pub async fn in_state(
    services: &Services,
    tenant: &Tenant,
    s: PromotionState,
) -> Result<Vec<(Model, Promotion)>, Failure> {
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let mut out = Vec::new();
    for p in supply_chain::promotions_in(&mut conn, key, tenant, s).await? {
        let m = crate::tables::lqm::models::get_model(&mut conn, key, tenant, &p.record.body.model_id).await?;
        out.push((m, p));
    }
    Ok(out)
}

/// The checkpoint a model serves, if an active promotion serves one.
pub async fn serving(
    services: &Services,
    tenant: &Tenant,
    model_id: &str,
) -> Result<Option<(Model, Promotion)>, Failure> {
    let d = registry::dossier(services, tenant, model_id).await?;
    Ok(d.promotions.iter().find(|p| p.state == PromotionState::Active).cloned().map(|p| (d.model, p)))
}
