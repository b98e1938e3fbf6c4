//! Sealed investment records (see the migration `…_portfolio_book.sql`): what an investment operation
//! proposed or measured — a tax-loss harvest, a scenario run, a construction, and the records the other
//! investment operations add — with its request and output as canonical JSON and the SHA-256 over both.
//! Written once, sealed, never updated; a row whose seal fails is refused, never served.

use fiscus_domain::actor::Actor;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::seals;
use fiscus_store::stored_actor;
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

pub use fiscus_store::investment_tables::INVESTMENT_RECORDS_SEALED as SEALED;

/// What a record is; the id's prefix says it too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    TaxHarvest,
    Scenario,
    Construction,
    Rebalance,
    CollateralInventory,
    RiskCompliance,
    GenerativeMarket,
    Report,
}

impl RecordKind {
    pub const ALL: [RecordKind; 8] = [
        RecordKind::TaxHarvest,
        RecordKind::Scenario,
        RecordKind::Construction,
        RecordKind::Rebalance,
        RecordKind::CollateralInventory,
        RecordKind::RiskCompliance,
        RecordKind::GenerativeMarket,
        RecordKind::Report,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::TaxHarvest => "tax_harvest",
            RecordKind::Scenario => "scenario",
            RecordKind::Construction => "construction",
            RecordKind::Rebalance => "rebalance",
            RecordKind::CollateralInventory => "collateral_inventory",
            RecordKind::RiskCompliance => "risk_compliance",
            RecordKind::GenerativeMarket => "generative_market",
            RecordKind::Report => "report",
        }
    }

    /// The prefix of the record's id.
    pub fn prefix(self) -> &'static str {
        match self {
            RecordKind::TaxHarvest => "thp",
            RecordKind::Scenario => "isr",
            RecordKind::Construction => "pcp",
            RecordKind::Rebalance => "rbp",
            RecordKind::CollateralInventory => "cis",
            RecordKind::RiskCompliance => "rcr",
            RecordKind::GenerativeMarket => "gmr",
            RecordKind::Report => "rpt",
        }
    }

    pub fn parse(s: &str) -> Option<RecordKind> {
        RecordKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// A record as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub id: String,
    pub kind: RecordKind,
    pub portfolio_id: Option<i64>,
    /// Canonical JSON (RFC 8785).
    pub request: String,
    /// Canonical JSON (RFC 8785).
    pub output: String,
    pub content_hash: String,
    pub created_by: Actor,
    pub created_at: i64,
}

fiscus_store::row! {
    struct RecordRow {
        id: String,
        kind: String,
        portfolio_id: Option<i64>,
        request: String,
        output: String,
        content_hash: String,
        created_by: String,
        created_at: i64,
    }
}

impl TryFrom<RecordRow> for Record {
    type Error = StoreError;
    fn try_from(r: RecordRow) -> Result<Record> {
        let created_by = stored_actor("investment_records", &r.id, "created_by", &r.created_by)?;
        Ok(Record {
            kind: RecordKind::parse(&r.kind)
                .ok_or_else(|| StoreError::Corrupt(format!("investment_records.kind: unknown `{}`", r.kind)))?,
            id: r.id,
            portfolio_id: r.portfolio_id,
            request: r.request,
            output: r.output,
            content_hash: r.content_hash,
            created_by,
            created_at: r.created_at,
        })
    }
}

const COLUMNS: &str = "id, kind, portfolio_id, request, output, content_hash, created_by, created_at";

/// Writes a record, sealed.
pub async fn insert(tx: &mut WriteTx, tenant: &Tenant, r: &Record) -> Result<()> {
    let sealed_values = vec![
        Stored::Text(r.id.clone()),
        Stored::Text(tenant.workspace_id.clone()),
        Stored::Text(tenant.environment.as_str().to_string()),
        Stored::Text(r.kind.as_str().to_string()),
        r.portfolio_id.map_or(Stored::Null, Stored::Integer),
        Stored::Text(r.request.clone()),
        Stored::Text(r.output.clone()),
        Stored::Text(r.content_hash.clone()),
        Stored::Text(r.created_by.label()),
        Stored::Integer(r.created_at),
    ];
    let mac = seals::seal_of(tx.seal_key(), &SEALED, sealed_values.clone())?;
    sqlx::query(
        "INSERT INTO investment_records (id, workspace_id, environment, kind, portfolio_id, request, output, \
         content_hash, created_by, created_at, seal_mac) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&r.id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(r.kind.as_str())
    .bind(r.portfolio_id)
    .bind(&r.request)
    .bind(&r.output)
    .bind(&r.content_hash)
    .bind(r.created_by.label())
    .bind(r.created_at)
    .bind(mac)
    .execute(tx.conn())
    .await?;
    seals::log(tx, &SEALED, &sealed_values).await?;
    Ok(())
}

/// A record of this tenant, its seal checked.
pub async fn get(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Record> {
    seals::get_tenant_row::<RecordRow, _>(conn, key, &SEALED, COLUMNS, tenant, id).await
}

/// The tenant's records of one kind, newest first, optionally of one portfolio, before `before`
/// (exclusive), `limit + 1` rows; each seal checked.
pub async fn list(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    kind: RecordKind,
    portfolio_id: Option<i64>,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<Record>> {
    // No cursor means from the newest (no bound at all: whether `~` sorts after every id depends on the
    // database's collation).
    let portfolio = if portfolio_id.is_some() { " AND portfolio_id = $6" } else { "" };
    let sql = format!(
        "SELECT {COLUMNS} FROM investment_records WHERE workspace_id = $1 AND environment = $2 AND kind = $3 \
         AND ($4 IS NULL OR id < $4){portfolio} ORDER BY id DESC LIMIT $5"
    );
    let mut query = sqlx::query_as::<_, RecordRow>(&sql)
        .bind(&tenant.workspace_id)
        .bind(tenant.environment.as_str())
        .bind(kind.as_str())
        .bind(before)
        .bind(i64::from(limit) + 1);
    if let Some(p) = portfolio_id {
        query = query.bind(p);
    }
    let rows = query.fetch_all(&mut *conn).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        seals::check(conn, key, &SEALED, &tenant.workspace_id, "id", &row.id).await?;
        out.push(row.try_into()?);
    }
    Ok(out)
}
