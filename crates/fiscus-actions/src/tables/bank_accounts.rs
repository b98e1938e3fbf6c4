//! Counterparties and the versions of bank accounts' details: sealed records (`sealed_records`), a version's
//! body being the details whose hash payments bind. Versions are never edited: a decision sets the
//! version's state and stamp once (guarded on `pending`), and an approval supersedes the active version in
//! the same transaction. The schema's partial unique indexes hold one pending and one active version per
//! account whatever the caller does.

use crate::rules::bank_accounts::VersionState;
use fiscus_domain::bank_accounts::{AccountVersion, CounterpartyBody, Owner};
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use sqlx::AnyConnection;

use fiscus_store::payment_tables::{BANK_ACCOUNT_VERSIONS, COUNTERPARTIES};
use fiscus_store::sealed_records::{
    Fields, Record, columns_differ, insert_record, opt_text, select_one, select_page, select_where, text,
    update_guarded,
};
use fiscus_store::{Result, StoreError, WriteTx};

pub type Counterparty = Record<CounterpartyBody>;

fn counterparty(f: &Fields) -> Result<Counterparty> {
    let record: Counterparty = f.record()?;
    if f.opt_text("reference")? != record.body.reference {
        return Err(columns_differ(COUNTERPARTIES.table, &record.id));
    }
    Ok(record)
}

/// Inserts a counterparty; `Conflict` when its reference is taken in the tenant.
pub async fn insert_counterparty(tx: &mut WriteTx, tenant: &Tenant, c: &Counterparty) -> Result<()> {
    let own = [("reference", opt_text(c.body.reference.as_deref()))];
    insert_record(tx, &COUNTERPARTIES, tenant, c, &own).await
}

pub async fn get_counterparty(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    id: &str,
) -> Result<Counterparty> {
    counterparty(&select_one(conn, key, &COUNTERPARTIES, tenant, id).await?)
}

/// The tenant's counterparties, newest first, before `before`, `limit + 1` of them.
pub async fn list_counterparties(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<Counterparty>> {
    select_page(conn, key, &COUNTERPARTIES, tenant, before, limit).await?.iter().map(counterparty).collect()
}

/// The tenant's counterparty with this reference, if any.
pub async fn counterparty_by_reference(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    reference: &str,
) -> Result<Option<Counterparty>> {
    select_where(conn, key, &COUNTERPARTIES, tenant, "reference", text(reference))
        .await?
        .first()
        .map(counterparty)
        .transpose()
}

/// A version of an account's details and where it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Version {
    pub record: Record<AccountVersion>,
    pub state: VersionState,
    /// The person's decision: who, when, and their note.
    pub decision: Option<(fiscus_domain::actor::Actor, i64, Option<String>)>,
}

fn version(f: &Fields) -> Result<Version> {
    let record: Record<AccountVersion> = f.record()?;
    let b = &record.body;
    let same = f.text("account_id")? == b.account_id
        && f.int("version")? == b.version
        && f.parsed("owner", Owner::parse)? == b.owner
        && f.opt_text("counterparty_id")? == b.counterparty_id;
    if !same {
        return Err(columns_differ(BANK_ACCOUNT_VERSIONS.table, &record.id));
    }
    let note = f.opt_text("decision_note")?;
    let decision = f.stamp("decided_by", "decided_at")?.map(|(by, at)| (by, at, note));
    Ok(Version { state: f.parsed("state", VersionState::parse)?, decision, record })
}

/// Inserts a pending version; `Conflict` when the account has a pending version already or this version
/// number is taken (two changes proposed at once: one of them wins).
pub async fn insert_version(tx: &mut WriteTx, tenant: &Tenant, v: &Record<AccountVersion>) -> Result<()> {
    let b = &v.body;
    let own = [
        ("account_id", text(&b.account_id)),
        ("version", Stored::Integer(b.version)),
        ("owner", text(b.owner.as_str())),
        ("counterparty_id", opt_text(b.counterparty_id.as_deref())),
        ("state", text(VersionState::Pending.as_str())),
    ];
    insert_record(tx, &BANK_ACCOUNT_VERSIONS, tenant, v, &own).await
}

pub async fn get_version(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Version> {
    version(&select_one(conn, key, &BANK_ACCOUNT_VERSIONS, tenant, id).await?)
}

/// Every version of an account, oldest first; empty for an account of another tenant or none.
pub async fn versions_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    account_id: &str,
) -> Result<Vec<Version>> {
    let mut all: Vec<Version> = select_where(conn, key, &BANK_ACCOUNT_VERSIONS, tenant, "account_id", text(account_id))
        .await?
        .iter()
        .map(version)
        .collect::<Result<_>>()?;
    all.sort_by_key(|v| v.record.body.version);
    Ok(all)
}

/// The tenant's versions in one state, oldest first (the console's queue of pending details).
pub async fn versions_in(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    state: VersionState,
) -> Result<Vec<Version>> {
    select_where(conn, key, &BANK_ACCOUNT_VERSIONS, tenant, "state", text(state.as_str()))
        .await?
        .iter()
        .map(version)
        .collect()
}

/// The versions of a counterparty's accounts, oldest first.
pub async fn versions_of_counterparty(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    counterparty_id: &str,
) -> Result<Vec<Version>> {
    select_where(conn, key, &BANK_ACCOUNT_VERSIONS, tenant, "counterparty_id", text(counterparty_id))
        .await?
        .iter()
        .map(version)
        .collect()
}

/// The counterparty's active versions in `currency` (the accounts a payment to it in that currency may use).
pub async fn active_for(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    counterparty_id: &str,
    currency: fiscus_domain::money::Currency,
) -> Result<Vec<Version>> {
    Ok(versions_of_counterparty(conn, key, tenant, counterparty_id)
        .await?
        .into_iter()
        .filter(|v| v.state == VersionState::Active && v.record.body.currency == currency)
        .collect())
}

/// The versions of the workspace's own accounts, oldest first.
pub async fn versions_of_own(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant) -> Result<Vec<Version>> {
    select_where(conn, key, &BANK_ACCOUNT_VERSIONS, tenant, "owner", text(Owner::Own.as_str()))
        .await?
        .iter()
        .map(version)
        .collect()
}

/// The workspace's own accounts' active versions in `currency`.
pub async fn active_own(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    currency: fiscus_domain::money::Currency,
) -> Result<Vec<Version>> {
    Ok(versions_of_own(conn, key, tenant)
        .await?
        .into_iter()
        .filter(|v| v.state == VersionState::Active && v.record.body.currency == currency)
        .collect())
}

/// Records a person's decision on a pending version: `Rejected`, or `Active` with the account's active
/// version (if any) `Superseded` first, in `tx`. `false` when the version was no longer pending.
pub async fn decide(
    tx: &mut WriteTx,
    tenant: &Tenant,
    v: &Version,
    approve: bool,
    by: &fiscus_domain::actor::Actor,
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
        return update_guarded(tx, &BANK_ACCOUNT_VERSIONS, tenant, &v.record.id, &set, ("state", "pending")).await;
    }
    let active: Option<(String,)> = sqlx::query_as(
        "SELECT id FROM bank_account_versions WHERE workspace_id = $1 AND environment = $2 AND account_id = $3 \
         AND state = 'active'",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(&v.record.body.account_id)
    .fetch_optional(tx.conn())
    .await?;
    if let Some((previous,)) = active {
        let set = [("state", text(VersionState::Superseded.as_str()))];
        if !update_guarded(tx, &BANK_ACCOUNT_VERSIONS, tenant, &previous, &set, ("state", "active")).await? {
            return Err(StoreError::Conflict("bank_account_versions_one_active".into()));
        }
    }
    update_guarded(tx, &BANK_ACCOUNT_VERSIONS, tenant, &v.record.id, &stamp(VersionState::Active), ("state", "pending"))
        .await
}
