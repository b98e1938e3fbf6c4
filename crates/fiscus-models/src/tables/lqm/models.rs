//! Registered models and their dataset contracts.

use super::{Fields, insert_record, select_one, select_page, select_where, text};
use crate::rules::lqm::family::TaskFamily;
use crate::rules::lqm::records::{ContractBody, ModelBody};
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::Record;
use fiscus_store::{Result, WriteTx};
use sqlx::AnyConnection;

pub use fiscus_store::model_tables::CONTRACTS_SEALED;
pub use fiscus_store::model_tables::MODELS_SEALED;

pub type Model = Record<ModelBody>;
pub type Contract = Record<ContractBody>;

fn model(f: &Fields) -> Result<Model> {
    let m: Model = f.record()?;
    // The family column exists for queries; it must say what the sealed body says.
    let family = f.parsed("task_family", TaskFamily::parse)?;
    if family != m.body.task_family || f.text("name")? != m.body.name {
        return Err(fiscus_store::StoreError::Corrupt(format!("lqm_models {}: columns differ from the body", m.id)));
    }
    Ok(m)
}

/// Registers a model; a name the tenant uses already is `Conflict`.
pub async fn insert_model(tx: &mut WriteTx, tenant: &Tenant, m: &Model) -> Result<()> {
    let own = [("name", text(&m.body.name)), ("task_family", text(m.body.task_family.as_str()))];
    insert_record(tx, &MODELS_SEALED, tenant, m, &own).await
}

pub async fn get_model(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Model> {
    model(&select_one(conn, key, &MODELS_SEALED, tenant, id).await?)
}

/// The tenant's models newest first, before `before`, `limit + 1` of them.
pub async fn list_models(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<Model>> {
    select_page(conn, key, &MODELS_SEALED, tenant, before, limit).await?.iter().map(model).collect()
}

pub async fn insert_contract(tx: &mut WriteTx, tenant: &Tenant, c: &Contract) -> Result<()> {
    let own = [("model_id", text(&c.body.model_id)), ("dataset_number", Stored::Integer(c.body.dataset.id))];
    insert_record(tx, &CONTRACTS_SEALED, tenant, c, &own).await
}

fn contract(f: &Fields) -> Result<Contract> {
    let c: Contract = f.record()?;
    if f.text("model_id")? != c.body.model_id || f.int("dataset_number")? != c.body.dataset.id {
        return Err(fiscus_store::StoreError::Corrupt(format!("lqm_contracts {}: columns differ from the body", c.id)));
    }
    Ok(c)
}

pub async fn get_contract(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Contract> {
    contract(&select_one(conn, key, &CONTRACTS_SEALED, tenant, id).await?)
}

/// A model's contracts, oldest first.
pub async fn contracts_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    model_id: &str,
) -> Result<Vec<Contract>> {
    select_where(conn, key, &CONTRACTS_SEALED, tenant, "model_id", text(model_id)).await?.iter().map(contract).collect()
}
