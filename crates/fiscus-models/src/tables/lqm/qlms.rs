//! QLMs, their versions (each pinning exact checkpoints) and their runs.

use super::supply_chain::{QLM_RUNS_SEALED, QLM_VERSIONS_SEALED, QLMS_SEALED};
use super::{Fields, insert_record, select_one, select_page, select_where, text};
use crate::rules::lqm::records::{QlmBody, QlmRunBody, QlmVersionBody};
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::Record;
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

pub type Qlm = Record<QlmBody>;
pub type Version = Record<QlmVersionBody>;
pub type Run = Record<QlmRunBody>;

fn qlm(f: &Fields) -> Result<Qlm> {
    let q: Qlm = f.record()?;
    if f.text("name")? != q.body.name {
        return Err(StoreError::Corrupt(format!("qlms {}: columns differ from the body", q.id)));
    }
    Ok(q)
}

fn version(f: &Fields) -> Result<Version> {
    let v: Version = f.record()?;
    if f.text("qlm_id")? != v.body.qlm_id || f.int("version")? != v.body.version {
        return Err(StoreError::Corrupt(format!("qlm_versions {}: columns differ from the body", v.id)));
    }
    Ok(v)
}

/// Creates a QLM with its first version; a name the tenant uses already is `Conflict`.
pub async fn insert_qlm(tx: &mut WriteTx, tenant: &Tenant, q: &Qlm, first: &Version) -> Result<()> {
    insert_record(tx, &QLMS_SEALED, tenant, q, &[("name", text(&q.body.name))]).await?;
    insert_version(tx, tenant, first).await
}

/// Appends a version; a second writer of the same version number is `Conflict`.
pub async fn insert_version(tx: &mut WriteTx, tenant: &Tenant, version: &Version) -> Result<()> {
    let own = [("qlm_id", text(&version.body.qlm_id)), ("version", Stored::Integer(version.body.version))];
    insert_record(tx, &QLM_VERSIONS_SEALED, tenant, version, &own).await
}

pub async fn get_qlm(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Qlm> {
    qlm(&select_one(conn, key, &QLMS_SEALED, tenant, id).await?)
}

/// The tenant's QLMs newest first, before `before`, `limit + 1` of them.
pub async fn list_qlms(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<Qlm>> {
    select_page(conn, key, &QLMS_SEALED, tenant, before, limit).await?.iter().map(qlm).collect()
}

/// A QLM's versions, oldest first.
pub async fn versions_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    qlm_id: &str,
) -> Result<Vec<Version>> {
    let mut all: Vec<Version> = select_where(conn, key, &QLM_VERSIONS_SEALED, tenant, "qlm_id", text(qlm_id))
        .await?
        .iter()
        .map(version)
        .collect::<Result<_>>()?;
    all.sort_by_key(|v| v.body.version);
    Ok(all)
}

/// What a QLM run was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    Invoke,
    Evaluate,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Invoke => "invoke",
            RunKind::Evaluate => "evaluate",
        }
    }
}

/// Records a run.
pub async fn insert_run(tx: &mut WriteTx, tenant: &Tenant, kind: RunKind, run: &Run) -> Result<()> {
    let own = [
        ("qlm_id", text(&run.body.qlm_id)),
        ("version", Stored::Integer(run.body.version)),
        ("kind", text(kind.as_str())),
    ];
    insert_record(tx, &QLM_RUNS_SEALED, tenant, run, &own).await
}
