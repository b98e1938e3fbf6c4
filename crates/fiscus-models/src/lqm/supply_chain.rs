//! Evidence packets and publication: the hashes that make a checkpoint's case, and its bundle published
//! to the model hub as one link of the tenant's hash-linked supply chain, with SLSA provenance in the
//! in-toto statement format so that standard verifiers can read it.

use crate::rules::lqm::lifecycle::{self, Operation, Reason};
use crate::rules::lqm::records::{
    Artifact, Builder, EvidencePacketBody, GENESIS_HEAD, PacketCheckpoint, PacketContract, PacketEvaluation,
    PacketModel, PacketRequest, PublicationBody,
};
use crate::tables::lqm::supply_chain::{self, EvidencePacket, Publication};
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use fiscus_store::sealed_records::Record;
use serde_json::{Value, json};

use super::hub;
use super::registry::{self, Dossier};
use super::{canonical, gate_closed};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// The builder's identity in provenance (SLSA `runDetails.builder.id`).
pub const BUILDER_ID: &str = "https://fiscus.dev/builders/lqm@v1";
/// What a build is (SLSA `buildDefinition.buildType`): a checkpoint fitted under an approved request.
pub const BUILD_TYPE: &str = "https://fiscus.dev/lqm/training@v1";

fn open(d: &Dossier, op: Operation, checkpoint_id: &str) -> Result<(), Failure> {
    let here = d.checkpoint(checkpoint_id).ok_or(Failure::NotFound)?;
    lifecycle::gate(op, &d.facts, Some(&here.facts)).map_err(|reasons| gate_closed(op, &reasons))
}

async fn dossier_of(services: &Services, tenant: &Tenant, checkpoint_id: &str) -> Result<Dossier, Failure> {
    let (c, _) = super::training::checkpoint(services, tenant, checkpoint_id).await?;
    registry::dossier(services, tenant, &c.body.model_id).await
}

/// Issues the evidence packet of a checkpoint whose evaluation passed: model, contract, review, checkpoint
/// and evaluation, each by its hash.
pub async fn issue_packet(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    checkpoint_id: &str,
) -> Result<EvidencePacket, Failure> {
    let d = dossier_of(services, tenant, checkpoint_id).await?;
    open(&d, Operation::EvidencePacket, checkpoint_id)?;
    let here = d.checkpoint(checkpoint_id).ok_or(Failure::NotFound)?;
    let c = &here.checkpoint;
    let e = here.evaluation.as_ref().ok_or_else(|| Failure::internal("a passed checkpoint has no evaluation"))?;
    let r = d
        .requests
        .iter()
        .find(|r| r.record.id == c.body.request_id)
        .ok_or_else(|| Failure::internal("a checkpoint's request is not its model's"))?;
    let review = r.review.as_ref().ok_or_else(|| Failure::internal("a trained request has no review"))?;
    let k = d
        .contracts
        .iter()
        .find(|k| k.id == r.record.body.contract_id)
        .ok_or_else(|| Failure::internal("a request's contract is not its model's"))?;
    let m = &d.model;
    let body = EvidencePacketBody {
        model: PacketModel {
            id: m.id.clone(),
            registration_hash: m.content_hash.clone(),
            name: m.body.name.clone(),
            task_family: m.body.task_family,
            intended_use: m.body.intended_use.clone(),
            license: m.body.license.clone(),
        },
        contract: PacketContract {
            id: k.id.clone(),
            contract_hash: k.content_hash.clone(),
            dataset: k.body.dataset.id,
            licence: k.body.dataset.licence.clone(),
            licence_terms: k.body.licence_terms,
            source_hash: k.body.source_hash.clone(),
            feature_schema_hash: k.body.feature_schema_hash.clone(),
            lineage_hash: k.body.lineage_hash.clone(),
            data_hash: k.body.data_hash.clone(),
        },
        retraining_request: PacketRequest {
            id: r.record.id.clone(),
            request_hash: r.record.content_hash.clone(),
            requested_by: r.record.created_by.clone(),
            reviewed_by: review.by.clone(),
            reviewed_at: rfc3339(review.at),
        },
        checkpoint: PacketCheckpoint {
            id: c.id.clone(),
            checkpoint_hash: c.content_hash.clone(),
            algorithm: c.body.algorithm,
            trained_by: c.created_by.clone(),
            engine: c.body.engine.clone(),
        },
        evaluation: PacketEvaluation {
            id: e.id.clone(),
            evaluation_hash: e.content_hash.clone(),
            passed: e.body.passed,
            independent: e.body.independent,
            evaluated_by: e.body.evaluated_by.clone(),
            metrics: e.body.metrics.clone(),
        },
    };
    let (body_json, content_hash) = canonical("evidence packet", &body)?;
    let now = now_micros();
    let p = Record {
        id: fiscus_domain::ids::new_id("lep"),
        body,
        body_json,
        content_hash,
        created_by: caller.actor.clone(),
        created_at: now,
    };
    let mut tx = services.store.begin().await?;
    match supply_chain::insert_packet(&mut tx, tenant, &p).await {
        Err(StoreError::Conflict(_)) => {
            return Err(gate_closed(Operation::EvidencePacket, &[Reason::EvidencePacketIssued]));
        }
        other => other?,
    }
    let entry = AuditEntry::of_tenant(
        tenant,
        Change::LqmEvidencePacketIssued,
        &p.id,
        json!({ "checkpoint": checkpoint_id, "packet_hash": p.content_hash }),
        now,
    );
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    Ok(p)
}

fn hex(sha256: &str) -> &str {
    sha256.strip_prefix("sha256:").unwrap_or(sha256)
}

/// The SLSA v1 provenance of a checkpoint, as an in-toto v1 statement about the bundle's files.
fn provenance(d: &Dossier, checkpoint_id: &str, subjects: &[Artifact]) -> Result<Value, Failure> {
    let here = d.checkpoint(checkpoint_id).ok_or(Failure::NotFound)?;
    let c = &here.checkpoint;
    let r = d.requests.iter().find(|r| r.record.id == c.body.request_id).ok_or(Failure::NotFound)?;
    let reviewed = r.review.as_ref().map(|v| rfc3339(v.at));
    Ok(json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": subjects.iter().map(|a| json!({ "name": a.name, "digest": { "sha256": hex(&a.sha256) } })).collect::<Vec<_>>(),
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "model": d.model.id, "retraining_request": r.record.id,
                    "algorithm": c.body.algorithm.as_str(), "hyperparameters": c.body.hyperparameters,
                },
                "internalParameters": { "engine": c.body.engine },
                "resolvedDependencies": [{
                    "uri": format!("fiscus:dataset/{}", c.body.data_version.dataset),
                    "digest": { "sha256": hex(&c.body.data_version.dataset_content_hash) },
                    "annotations": { "contract_hash": c.body.data_version.contract_hash,
                                     "training_data_hash": c.body.data_version.data_hash },
                }],
            },
            "runDetails": {
                "builder": { "id": BUILDER_ID, "version": { "fiscus": env!("CARGO_PKG_VERSION") } },
                "metadata": { "invocationId": c.id, "startedOn": reviewed, "finishedOn": rfc3339(c.created_at) },
            },
        },
    }))
}

/// Publishes a checkpoint with its evidence packet: its bundle (checkpoint, evaluation, evidence packet and
/// provenance) into the model hub, and a publication linked to the tenant's supply-chain head.
pub async fn publish(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    checkpoint_id: &str,
) -> Result<Publication, Failure> {
    let d = dossier_of(services, tenant, checkpoint_id).await?;
    open(&d, Operation::Publishing, checkpoint_id)?;
    let here = d.checkpoint(checkpoint_id).ok_or(Failure::NotFound)?;
    let (c, e, p) = match (&here.evaluation, &here.packet) {
        (Some(e), Some(p)) => (&here.checkpoint, e, p),
        _ => return Err(Failure::internal("a publishable checkpoint lacks its evaluation or packet")),
    };
    let files = vec![
        ("checkpoint.json", c.body_json.clone().into_bytes()),
        ("evaluation.json", e.body_json.clone().into_bytes()),
        ("evidence-packet.json", p.body_json.clone().into_bytes()),
    ];
    let mut artifacts: Vec<Artifact> = files
        .iter()
        .map(|(name, bytes)| Artifact {
            name: (*name).to_string(),
            sha256: fiscus_domain::evidence::seal_bytes(bytes),
            size: bytes.len() as i64,
        })
        .collect();
    let statement = canonical("provenance", &provenance(&d, checkpoint_id, &artifacts)?)?.0.into_bytes();
    artifacts.push(Artifact {
        name: "provenance.intoto.json".into(),
        sha256: fiscus_domain::evidence::seal_bytes(&statement),
        size: statement.len() as i64,
    });
    let mut blobs: Vec<Vec<u8>> = files.into_iter().map(|(_, b)| b).collect();
    blobs.push(statement);
    let bundle_hash = canonical("bundle", &artifacts)?.1;
    let by = caller.actor.clone();
    // Two publications racing for the same head: the second insert is refused by the unique previous head
    // and tries again on the new head.
    for _ in 0..5 {
        let mut conn = services.store.read().await?;
        let key = services.store.seal_key();
        let previous = supply_chain::head(&mut conn, key, tenant).await?.map(|h| h.content_hash);
        let revision = supply_chain::publications_of(&mut conn, key, tenant, &d.model.id).await?.len() as i64 + 1;
        drop(conn);
        let now = now_micros();
        let body = PublicationBody {
            repository: format!("fiscus-hub://{}/{}/{}", tenant.workspace_id, tenant.environment.as_str(), d.model.id),
            revision,
            model_id: d.model.id.clone(),
            checkpoint_id: c.id.clone(),
            checkpoint_hash: c.content_hash.clone(),
            evaluation_hash: e.content_hash.clone(),
            evidence_packet_hash: p.content_hash.clone(),
            builder: Builder {
                id: BUILDER_ID.into(),
                version: env!("CARGO_PKG_VERSION").into(),
                trained_by: c.created_by.clone(),
                published_by: by.clone(),
            },
            bundle_hash: bundle_hash.clone(),
            artifacts: artifacts.clone(),
            previous_head: previous.unwrap_or_else(|| GENESIS_HEAD.to_string()),
            published_at: rfc3339(now),
        };
        let (body_json, content_hash) = canonical("publication", &body)?;
        let publication = Record {
            id: fiscus_domain::ids::new_id("lpb"),
            body,
            body_json,
            content_hash,
            created_by: by.clone(),
            created_at: now,
        };
        let mut tx = services.store.begin().await?;
        match supply_chain::insert_publication(&mut tx, tenant, &publication).await {
            Err(StoreError::Conflict(_)) => {
                drop(tx);
                let mut conn = services.store.read().await?;
                if supply_chain::publication_of(&mut conn, services.store.seal_key(), tenant, &c.id).await?.is_some() {
                    return Err(gate_closed(Operation::Publishing, &[Reason::AlreadyPublished]));
                }
                continue;
            }
            other => other?,
        }
        // The artifacts go with their publication, in its transaction: a publication never names an
        // artifact the hub lacks, on any node.
        for blob in &blobs {
            hub::put(&mut tx, &tenant.workspace_id, blob).await?;
        }
        let entry = AuditEntry::of_tenant(
            tenant,
            Change::LqmCheckpointPublished,
            &publication.id,
            json!({ "checkpoint": c.id, "head": publication.content_hash,
                             "previous_head": publication.body.previous_head, "bundle_hash": bundle_hash }),
            now,
        );
        audit(&mut tx, caller, &entry).await?;
        tx.commit().await?;
        return Ok(publication);
    }
    Err(Failure::refused(
        fiscus_domain::error_code::ErrorCode::Conflict,
        "the supply chain's head kept moving; publish again",
    ))
}

/// A publication and the tenant's current supply-chain head.
pub async fn publication(services: &Services, tenant: &Tenant, id: &str) -> Result<(Publication, String), Failure> {
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let p = supply_chain::get_publication(&mut conn, key, tenant, id).await?;
    let head =
        supply_chain::head(&mut conn, key, tenant).await?.map_or_else(|| p.content_hash.clone(), |h| h.content_hash);
    Ok((p, head))
}
