//! Evidence packets, publications (the hash-linked supply chain) and promotions, and the QLM tables, which
//! are sealed from the start; the promotion and QLM repositories come with the operations that write them.

use super::training::Review;
use super::{Fields, insert_record, select_one, select_page, select_where, text, update_guarded};
use crate::rules::lqm::records::{EvidencePacketBody, PromotionBody, PublicationBody};
use fiscus_domain::actor::Actor;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::lqm::PromotionState;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::Record;
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

pub use fiscus_store::model_tables::EVIDENCE_PACKETS_SEALED;
pub use fiscus_store::model_tables::PROMOTIONS_SEALED;
pub use fiscus_store::model_tables::PUBLICATIONS_SEALED;
pub use fiscus_store::model_tables::QLM_RUNS_SEALED;
pub use fiscus_store::model_tables::QLM_VERSIONS_SEALED;
pub use fiscus_store::model_tables::QLMS_SEALED;

pub type EvidencePacket = Record<EvidencePacketBody>;
pub type Publication = Record<PublicationBody>;

fn packet(f: &Fields) -> Result<EvidencePacket> {
    let p: EvidencePacket = f.record()?;
    if f.text("checkpoint_id")? != p.body.checkpoint.id {
        return Err(StoreError::Corrupt(format!("lqm_evidence_packets {}: columns differ from the body", p.id)));
    }
    Ok(p)
}

/// Records a checkpoint's evidence packet; a second one of the same checkpoint is `Conflict`.
pub async fn insert_packet(tx: &mut WriteTx, tenant: &Tenant, p: &EvidencePacket) -> Result<()> {
    insert_record(tx, &EVIDENCE_PACKETS_SEALED, tenant, p, &[("checkpoint_id", text(&p.body.checkpoint.id))]).await
}

/// The evidence packet of a checkpoint, if one was issued.
pub async fn packet_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    checkpoint_id: &str,
) -> Result<Option<EvidencePacket>> {
    select_where(conn, key, &EVIDENCE_PACKETS_SEALED, tenant, "checkpoint_id", text(checkpoint_id))
        .await?
        .first()
        .map(packet)
        .transpose()
}

fn publication(f: &Fields) -> Result<Publication> {
    let p: Publication = f.record()?;
    let b = &p.body;
    if f.text("model_id")? != b.model_id
        || f.text("checkpoint_id")? != b.checkpoint_id
        || f.int("revision")? != b.revision
        || f.text("previous_head")? != b.previous_head
    {
        return Err(StoreError::Corrupt(format!("lqm_publications {}: columns differ from the body", p.id)));
    }
    Ok(p)
}

/// Appends a publication to the tenant's chain. Another publication that took the same previous head
/// first, or the same revision of the model, is `Conflict`: the chain never forks.
pub async fn insert_publication(tx: &mut WriteTx, tenant: &Tenant, p: &Publication) -> Result<()> {
    let own = [
        ("model_id", text(&p.body.model_id)),
        ("checkpoint_id", text(&p.body.checkpoint_id)),
        ("revision", Stored::Integer(p.body.revision)),
        ("previous_head", text(&p.body.previous_head)),
    ];
    insert_record(tx, &PUBLICATIONS_SEALED, tenant, p, &own).await
}

pub async fn get_publication(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    id: &str,
) -> Result<Publication> {
    publication(&select_one(conn, key, &PUBLICATIONS_SEALED, tenant, id).await?)
}

/// The publication of a checkpoint, if it was published.
pub async fn publication_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    checkpoint_id: &str,
) -> Result<Option<Publication>> {
    select_where(conn, key, &PUBLICATIONS_SEALED, tenant, "checkpoint_id", text(checkpoint_id))
        .await?
        .first()
        .map(publication)
        .transpose()
}

/// A model's publications, oldest first.
pub async fn publications_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    model_id: &str,
) -> Result<Vec<Publication>> {
    select_where(conn, key, &PUBLICATIONS_SEALED, tenant, "model_id", text(model_id))
        .await?
        .iter()
        .map(publication)
        .collect()
}

/// The tenant's newest publication: the supply chain's head.
pub async fn head(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant) -> Result<Option<Publication>> {
    select_page(conn, key, &PUBLICATIONS_SEALED, tenant, None, 0).await?.first().map(publication).transpose()
}

/// Every publication of the tenant, as stored (for verification, which follows their links itself).
pub async fn chain(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant) -> Result<Vec<Publication>> {
    let rows = fiscus_store::seals::select_sealed(
        conn,
        key,
        &PUBLICATIONS_SEALED,
        "workspace_id = $1 AND environment = $2 ORDER BY id",
        &[Stored::Text(tenant.workspace_id.clone()), Stored::Text(tenant.environment.as_str().into())],
    )
    .await?;
    rows.into_iter().map(|columns| publication(&Fields { table: PUBLICATIONS_SEALED.table, columns })).collect()
}

/// A promotion and where it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Promotion {
    pub record: Record<PromotionBody>,
    pub state: PromotionState,
    /// The operator's decision.
    pub decision: Option<Review>,
    /// Who superseded or revoked it, and when.
    pub ended: Option<(Actor, i64)>,
}

fn promotion(f: &Fields) -> Result<Promotion> {
    let record: Record<PromotionBody> = f.record()?;
    if f.text("model_id")? != record.body.model_id || f.text("checkpoint_id")? != record.body.checkpoint_id {
        return Err(StoreError::Corrupt(format!("lqm_promotions {}: columns differ from the body", record.id)));
    }
    let note = f.opt_text("decision_note")?;
    let decision = f.stamp("decided_by", "decided_at")?.map(|(by, at)| Review { by, at, note });
    let ended = f.stamp("ended_by", "ended_at")?;
    Ok(Promotion { state: f.parsed("state", PromotionState::parse)?, decision, ended, record })
}

pub async fn insert_promotion(tx: &mut WriteTx, tenant: &Tenant, p: &Record<PromotionBody>) -> Result<()> {
    let own = [
        ("model_id", text(&p.body.model_id)),
        ("checkpoint_id", text(&p.body.checkpoint_id)),
        ("state", text(PromotionState::Pending.as_str())),
    ];
    insert_record(tx, &PROMOTIONS_SEALED, tenant, p, &own).await
}

pub async fn get_promotion(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Promotion> {
    promotion(&select_one(conn, key, &PROMOTIONS_SEALED, tenant, id).await?)
}

/// A model's promotions, oldest first.
pub async fn promotions_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    model_id: &str,
) -> Result<Vec<Promotion>> {
    select_where(conn, key, &PROMOTIONS_SEALED, tenant, "model_id", text(model_id))
        .await?
        .iter()
        .map(promotion)
        .collect()
}

/// The tenant's promotions in one state, oldest first.
pub async fn promotions_in(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    state: PromotionState,
) -> Result<Vec<Promotion>> {
    select_where(conn, key, &PROMOTIONS_SEALED, tenant, "state", text(state.as_str()))
        .await?
        .iter()
        .map(promotion)
        .collect()
}

/// Records an operator's decision on a pending promotion; `false` when it was no longer pending.
pub async fn decide_promotion(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    to: PromotionState,
    review: &Review,
) -> Result<bool> {
    let set = [
        ("state", text(to.as_str())),
        ("decided_by", text(&review.by.label())),
        ("decided_at", Stored::Integer(review.at)),
        ("decision_note", super::opt_text(review.note.as_deref())),
    ];
    update_guarded(tx, &PROMOTIONS_SEALED, tenant, id, &set, ("state", PromotionState::Pending.as_str())).await
}

/// Ends an active promotion (superseded or revoked); `false` when it was no longer active.
pub async fn end_promotion(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    to: PromotionState,
    by: &Actor,
    at: i64,
) -> Result<bool> {
    let set = [("state", text(to.as_str())), ("ended_by", text(&by.label())), ("ended_at", Stored::Integer(at))];
    update_guarded(tx, &PROMOTIONS_SEALED, tenant, id, &set, ("state", PromotionState::Active.as_str())).await
}
