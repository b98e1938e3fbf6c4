//! Registration of a model, and what is known of it: its records and the eligibility of each gated
//! operation (the developer manifest).

use crate::rules::lqm::family::TaskFamily;
use crate::rules::lqm::licence;
use crate::rules::lqm::lifecycle::{
    self, CheckpointFacts, ModelFacts, Operation, PromotionState, Reason, Stage, Verdict,
};
use crate::rules::lqm::records::ModelBody;
use crate::rules::lqm::retraining::RequestState;
use crate::tables::lqm::models::{self, Contract, Model};
use crate::tables::lqm::supply_chain::{self, EvidencePacket, Promotion, Publication};
use crate::tables::lqm::training::{self, Checkpoint, Evaluation, Request};
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::Record;
use serde::Deserialize;
use serde_json::json;

use super::canonical;
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// `POST /lqm/models`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterRequest {
    /// Unique among the workspace's models in this environment.
    #[schema(value_type = fiscus_domain::fields::Text<1, 200>, inline, example = "S&P 500 level forecaster")]
    pub name: String,
    pub task_family: TaskFamily,
    /// What the model is for and what it must not be used for (SR 11-7's intended use).
    #[schema(
        value_type = fiscus_domain::fields::Text<1, 2000>,
        inline,
        example = "Next-day S&P 500 level forecasts for treasury liquidity planning; not for trading."
    )]
    pub intended_use: String,
    /// The model's licence: an SPDX identifier (`Apache-2.0`, `MIT`, …) or `LicenseRef-…`.
    #[schema(value_type = fiscus_domain::fields::SpdxLicence, inline)]
    pub license: String,
    /// Whether its outputs are used commercially (default `true`); data under a non-commercial licence
    /// trains only a model that is not.
    #[serde(default)]
    pub commercial_use: Option<bool>,
}

pub async fn register(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    r: RegisterRequest,
) -> Result<Model, Failure> {
    let mut errors = Vec::new();
    if !fiscus_domain::fields::text_ok(&r.name, 1, 200) {
        errors.push(("name", "from 1 to 200 characters, not blank, no control characters".to_string()));
    }
    if !fiscus_domain::fields::text_ok(&r.intended_use, 1, 2000) {
        errors.push(("intended_use", "from 1 to 2000 characters, not blank, no control characters".to_string()));
    }
    if !licence::is_spdx_identifier(&r.license) {
        errors.push(("license", format!("`{}` is not an SPDX licence identifier (or LicenseRef-…)", r.license)));
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let body = ModelBody {
        name: r.name,
        task_family: r.task_family,
        intended_use: r.intended_use,
        license: r.license,
        commercial_use: r.commercial_use.unwrap_or(true),
    };
    let (body_json, content_hash) = canonical("model", &body)?;
    let now = now_micros();
    let m = Record {
        id: fiscus_domain::ids::new_id("lqm"),
        body,
        body_json,
        content_hash,
        created_by: caller.actor.clone(),
        created_at: now,
    };
    let mut tx = services.store.begin().await?;
    match models::insert_model(&mut tx, tenant, &m).await {
        Err(fiscus_store::StoreError::Conflict(_)) => {
            return Err(Failure::refused(
                fiscus_domain::error_code::ErrorCode::Conflict,
                format!("a model named `{}` is registered already", m.body.name),
            ));
        }
        other => other?,
    }
    let entry = AuditEntry::of_tenant(
        tenant,
        Change::LqmModelRegistered,
        &m.id,
        json!({ "task_family": m.body.task_family.as_str(), "content_hash": m.content_hash }),
        now,
    );
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    Ok(m)
}

pub async fn model(services: &Services, tenant: &Tenant, id: &str) -> Result<Model, Failure> {
    let mut conn = services.store.read().await?;
    Ok(models::get_model(&mut conn, services.store.seal_key(), tenant, id).await?)
}

/// A checkpoint with what its gates read.
#[derive(Clone, Debug)]
pub struct CheckpointState {
    pub checkpoint: Checkpoint,
    pub evaluation: Option<Evaluation>,
    pub packet: Option<EvidencePacket>,
    pub publication: Option<Publication>,
    pub facts: CheckpointFacts,
}

/// Everything known of a model.
#[derive(Clone, Debug)]
pub struct Dossier {
    pub model: Model,
    pub contracts: Vec<Contract>,
    pub requests: Vec<Request>,
    /// Oldest first.
    pub checkpoints: Vec<CheckpointState>,
    /// Oldest first.
    pub promotions: Vec<Promotion>,
    pub facts: ModelFacts,
}

impl Dossier {
    pub fn newest(&self) -> Option<&CheckpointState> {
        self.checkpoints.last()
    }

    pub fn stage(&self) -> Stage {
        lifecycle::stage(&self.facts, self.newest().map(|c| &c.facts))
    }

    pub fn checkpoint(&self, id: &str) -> Option<&CheckpointState> {
        self.checkpoints.iter().find(|c| c.checkpoint.id == id)
    }

    /// Each gated operation's eligibility: model-level ones for the model, the others for its newest
    /// checkpoint.
    pub fn eligibility(&self) -> Vec<(Operation, Result<(), Vec<Reason>>)> {
        let newest = self.newest().map(|c| &c.facts);
        Operation::ALL.into_iter().map(|op| (op, lifecycle::gate(op, &self.facts, newest))).collect()
    }
}

pub async fn dossier(services: &Services, tenant: &Tenant, id: &str) -> Result<Dossier, Failure> {
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let model = models::get_model(&mut conn, key, tenant, id).await?;
    let contracts = models::contracts_of(&mut conn, key, tenant, id).await?;
    let requests = training::requests_of(&mut conn, key, tenant, id).await?;
    let promotions = supply_chain::promotions_of(&mut conn, key, tenant, id).await?;
    // Promotions only move forward: a checkpoint trained before one that was ever promoted is superseded.
    let newest_promoted = promotions
        .iter()
        .filter(|p| matches!(p.state, PromotionState::Active | PromotionState::Superseded | PromotionState::Revoked))
        .map(|p| p.record.body.checkpoint_id.clone())
        .max();
    let mut checkpoints = Vec::new();
    for c in training::checkpoints_of(&mut conn, key, tenant, id).await? {
        let mine: Vec<&Promotion> = promotions.iter().filter(|p| p.record.body.checkpoint_id == c.id).collect();
        let evaluation = training::evaluation_of(&mut conn, key, tenant, &c.id).await?;
        let packet = supply_chain::packet_of(&mut conn, key, tenant, &c.id).await?;
        let publication = supply_chain::publication_of(&mut conn, key, tenant, &c.id).await?;
        let facts = CheckpointFacts {
            verdict: evaluation.as_ref().map(|e| if e.body.passed { Verdict::Passed } else { Verdict::Failed }),
            evidence_packet: packet.is_some(),
            published: publication.is_some(),
            promotion: mine.last().map(|p| p.state),
            revoked: mine.iter().any(|p| p.state == PromotionState::Revoked),
            newer_promoted: newest_promoted.as_ref().is_some_and(|n| *n > c.id),
        };
        checkpoints.push(CheckpointState { checkpoint: c, evaluation, packet, publication, facts });
    }
    let count = |s: RequestState| requests.iter().filter(|r| r.state == s).count();
    let facts = ModelFacts {
        contracts: contracts.len(),
        pending_requests: count(RequestState::Pending),
        approved_requests: count(RequestState::Approved),
        serving: promotions.iter().any(|p| p.state == PromotionState::Active),
    };
    Ok(Dossier { model, contracts, requests, checkpoints, promotions, facts })
}
