//! Keyed seals of business rows: each sealed table's immutable columns are MACed (see
//! `fiscus_domain::integrity`) in the transaction that inserts the row, and checked before the row is
//! decided on and by `fiscus verify records`.
//!
//! Sealing and checking read the row through the same query and the same decoding, so the MAC always covers
//! exactly what is stored. Columns that legitimately change (a state, `updated_at`, `invalidated_at`) are
//! not sealed: what they say is decided from sealed rows (an action's approval from its sealed decisions),
//! so editing them alone gains nothing.

use crate::{Result, StoreError, WriteTx};
use fiscus_domain::integrity::{SealKey, Stored, matches};
use fiscus_domain::tlog::Leaf;
use sqlx::{AnyConnection, Row};

/// A table whose rows are sealed, and the columns the seal covers.
#[derive(Clone, Copy, Debug)]
pub struct SealedTable {
    pub table: &'static str,
    pub columns: &'static [&'static str],
}

pub const ACTIONS: SealedTable = SealedTable {
    table: "actions",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "kind",
        "amount_minor",
        "currency",
        "counterparty",
        "connector",
        "execution_mode",
        "delegation_id",
        "risk_tier",
        "reference",
        "required_checks",
        "metadata",
        "envelope_hash",
        "origin",
        "proposed_by_kind",
        "proposed_by_id",
        "created_at",
    ],
};

pub const ACTION_CHECKS: SealedTable = SealedTable {
    table: "action_checks",
    columns: &[
        "id",
        "workspace_id",
        "action_id",
        "check_key",
        "version",
        "status",
        "source_type",
        "source_reference",
        "source_hash",
        "metrics",
        "metadata",
        "check_hash",
        "recorded_by",
        "created_at",
    ],
};

pub const ACTION_DECISIONS: SealedTable = SealedTable {
    table: "action_decisions",
    columns: &[
        "id",
        "workspace_id",
        "action_id",
        "operator_id",
        "role",
        "decision",
        "envelope_hash",
        "check_set_hash",
        "evidence_hash",
        "created_at",
    ],
};

pub const AUTONOMY_EVIDENCE: SealedTable = SealedTable {
    table: "autonomy_evidence",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "domain",
        "title",
        "summary",
        "source_type",
        "source_reference",
        "source_hash",
        "observed_at",
        "metadata",
        "evidence_hash",
        "recorded_by",
        "created_at",
    ],
};

pub const SETTLEMENT_RECORDS: SealedTable = SealedTable {
    table: "settlement_records",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "action_id",
        "kind",
        "connector",
        "connector_reference",
        "reference",
        "amount_minor",
        "currency",
        "reconciliation",
        "mismatches",
        "record_hash",
        "processed_by",
        "received_at",
    ],
};

pub const DELEGATIONS: SealedTable = SealedTable {
    table: "delegations",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "identity_id",
        "action_kind",
        "counterparty",
        "connector",
        "currency",
        "execution_mode",
        "risk_tier",
        "per_action_limit_minor",
        "daily_limit_minor",
        "monthly_limit_minor",
        "expires_at",
        "terms_hash",
        "created_by",
        "created_at",
    ],
};

pub const AGENT_REQUESTS: SealedTable = SealedTable {
    table: "agent_requests",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "application_id",
        "credential_id",
        "operation",
        "method",
        "path",
        "status",
        "request_hash",
        "response_hash",
        "evidence_hash",
        "request_id",
        "created_at",
    ],
};

/// A machine identity's public key decides whose signatures count as machine authority.
pub const MACHINE_IDENTITIES: SealedTable = SealedTable {
    table: "machine_identities",
    columns: &["id", "workspace_id", "environment", "name", "public_key", "created_by", "created_at"],
};

/// A signed execution client's public key decides whose request signatures count as the client.
pub const EXECUTION_CLIENTS: SealedTable = SealedTable {
    table: "execution_clients",
    columns: &["id", "workspace_id", "environment", "application_id", "name", "public_key", "created_by", "created_at"],
};

/// The decisions of people about a signed client: the latest one is the client's standing and allowlist.
pub const EXECUTION_CLIENT_DECISIONS: SealedTable = SealedTable {
    table: "execution_client_decisions",
    columns: &[
        "id",
        "workspace_id",
        "client_id",
        "version",
        "decision",
        "operations",
        "action_kinds",
        "environment",
        "expires_at",
        "rate_limit_per_minute",
        "monthly_quota",
        "decision_hash",
        "decided_by",
        "created_at",
    ],
};

/// Hash-only audit rows of agent tool calls.
pub const TOOL_INVOCATIONS: SealedTable = SealedTable {
    table: "tool_invocations",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "application_id",
        "credential_id",
        "protocol",
        "tool",
        "request_hash",
        "response_hash",
        "status",
        "outcome",
        "request_id",
        "created_at",
    ],
};

/// Where events are delivered: the URL and the types decide who hears of what.
pub const WEBHOOK_ENDPOINTS: SealedTable = SealedTable {
    table: "webhook_endpoints",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "application_id",
        "url",
        "event_types",
        "secret_sealed",
        "created_by",
        "created_at",
    ],
};

/// A2A tasks: the message an agent sent and the answer it was given.
pub const A2A_TASKS: SealedTable = SealedTable {
    table: "a2a_tasks",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "application_id",
        "credential_id",
        "context_id",
        "message_id",
        "skill",
        "state",
        "http_status",
        "request_hash",
        "response_hash",
        "message",
        "result",
        "created_at",
    ],
};

/// A row's sealed columns, named, as stored.
pub type Columns = Vec<(&'static str, Stored)>;

/// Reads one row's sealed columns (and its stored MAC) as stored.
pub(crate) fn decode(table: &SealedTable, row: &sqlx::any::AnyRow) -> Result<(Columns, Option<String>)> {
    let mut columns = Vec::with_capacity(table.columns.len());
    for (i, name) in table.columns.iter().enumerate() {
        // Columns are TEXT or BIGINT (see crates/fiscus-store/README.md, Persistence); try the integer first.
        let value = if let Ok(v) = row.try_get::<Option<i64>, _>(i) {
            v.map_or(Stored::Null, Stored::Integer)
        } else {
            let v: Option<String> =
                row.try_get(i).map_err(|e| StoreError::Corrupt(format!("{}.{name}: {e}", table.table)))?;
            v.map_or(Stored::Null, Stored::Text)
        };
        columns.push((*name, value));
    }
    let mac: Option<String> =
        row.try_get(table.columns.len()).map_err(|e| StoreError::Corrupt(format!("{}.seal_mac: {e}", table.table)))?;
    Ok((columns, mac))
}

/// The rows of `table` matching `filter` (whose `$1…` are `binds`), each row's seal checked in the same read:
/// a repository that keeps its content in sealed columns decodes them by name from what this returns, and a
/// row edited outside Fiscus is [`StoreError::Tampered`], never returned.
pub async fn select_sealed(
    conn: &mut AnyConnection,
    key: &SealKey,
    table: &SealedTable,
    filter: &str,
    binds: &[Stored],
) -> Result<Vec<Columns>> {
    let sql = select(table, filter);
    let rows = crate::dialect::bind_all!(sqlx::query(&sql), binds).fetch_all(&mut *conn).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let (columns, mac) = decode(table, row)?;
        if !matches(mac.as_deref(), &key.row(table.table, &columns)) {
            return Err(StoreError::Tampered(format!("{} {}", table.table, id_of(&columns))));
        }
        out.push(columns);
    }
    Ok(out)
}

/// Like [`select_sealed`], for a claim that must go on past a bad row: the rows whose seal checks, and
/// the id and tenant (as the row names them) of each that failed its seal, for the claim to set aside
/// (`crate::set_aside`) rather than fail on every pass.
pub async fn select_sealed_split(
    conn: &mut AnyConnection,
    key: &SealKey,
    table: &SealedTable,
    filter: &str,
    binds: &[Stored],
) -> Result<(Vec<Columns>, Vec<(String, Option<fiscus_domain::tenancy::Tenant>)>)> {
    let sql = select(table, filter);
    let rows = crate::dialect::bind_all!(sqlx::query(&sql), binds).fetch_all(&mut *conn).await?;
    let (mut good, mut bad) = (Vec::with_capacity(rows.len()), Vec::new());
    for row in &rows {
        let (columns, mac) = decode(table, row)?;
        if matches(mac.as_deref(), &key.row(table.table, &columns)) {
            good.push(columns);
        } else {
            tracing::error!(table = table.table, record = %id_of(&columns), "a sealed row failed verification; set aside");
            bad.push((id_of(&columns), crate::set_aside::tenant_of(&columns)));
        }
    }
    Ok((good, bad))
}

pub(crate) fn select(table: &SealedTable, filter: &str) -> String {
    format!("SELECT {}, seal_mac FROM {} WHERE {filter}", table.columns.join(", "), table.table)
}

/// The seal of a row about to be inserted, from its sealed columns' values in the table's column order, as
/// they will be stored (text as `Stored::Text`, integers as `Stored::Integer`, NULL as `Stored::Null`). It is
/// the same MAC [`seal`] computes after reading the row back, without the two round trips; use it only
/// where every bound value is stored unchanged (TEXT and BIGINT columns bound as `&str`/`String` and `i64`).
pub fn seal_of(key: &SealKey, table: &SealedTable, values: Vec<Stored>) -> Result<String> {
    if values.len() != table.columns.len() {
        return Err(StoreError::Corrupt(format!(
            "{}: {} sealed values for {} columns",
            table.table,
            values.len(),
            table.columns.len()
        )));
    }
    let columns: Columns = table.columns.iter().copied().zip(values).collect();
    Ok(key.row(table.table, &columns))
}

/// Seals a row just inserted in `tx`.
pub async fn seal(tx: &mut WriteTx, table: &SealedTable, workspace_id: &str, id: &str) -> Result<()> {
    seal_by(tx, table, workspace_id, "id", id).await
}

/// Seals the row whose text key `column` (the table's first sealed column) is `value`, for tables whose
/// public `id` is an integer and whose sealed key is another column.
pub async fn seal_by(
    tx: &mut WriteTx,
    table: &SealedTable,
    workspace_id: &str,
    column: &str,
    value: &str,
) -> Result<()> {
    debug_assert_eq!(table.columns.first(), Some(&column));
    let key = tx.seal_key().clone();
    let row = sqlx::query(&select(table, &format!("workspace_id = $1 AND {column} = $2")))
        .bind(workspace_id)
        .bind(value)
        .fetch_optional(tx.conn())
        .await?
        .ok_or(StoreError::NotFound)?;
    let (columns, _) = decode(table, &row)?;
    sqlx::query(&format!("UPDATE {} SET seal_mac = $1 WHERE workspace_id = $2 AND {column} = $3", table.table))
        .bind(key.row(table.table, &columns))
        .bind(workspace_id)
        .bind(value)
        .execute(tx.conn())
        .await?;
    let (workspace_id, leaf) = leaf_of(table, &columns)?;
    crate::audit::log_record(tx, &workspace_id, leaf).await
}

/// Puts a sealed row just written in `tx` (`values` in the table's sealed column order, as stored) into its
/// workspace's transparency log: its leaf names the table, the row's key and the hash of its canonical
/// content (`fiscus_domain::tlog`). Every sealed write calls it once its INSERT (or re-seal) succeeded, so a
/// leaf names only what was written: [`seal`] and [`seal_by`] do it themselves, and every writer that seals
/// with [`seal_of`] calls it after its statement.
pub async fn log(tx: &mut WriteTx, table: &SealedTable, values: &[Stored]) -> Result<()> {
    let columns: Columns = table.columns.iter().copied().zip(values.iter().cloned()).collect();
    let (workspace_id, leaf) = leaf_of(table, &columns)?;
    crate::audit::log_record(tx, &workspace_id, leaf).await
}

/// The leaf of a sealed row in its workspace's log, and that workspace: the table's name, the row's text key
/// (its first sealed column) and the hash of its sealed columns' canonical JSON.
pub(crate) fn leaf_of(table: &SealedTable, columns: &[(&str, Stored)]) -> Result<(String, Leaf)> {
    let workspace_id = columns
        .iter()
        .find_map(|(name, value)| match (name, value) {
            (&"workspace_id", Stored::Text(w)) => Some(w.clone()),
            _ => None,
        })
        .ok_or_else(|| StoreError::Corrupt(format!("{}: a sealed row without its workspace", table.table)))?;
    let (_, record_hash) = fiscus_domain::tlog::row_content(columns);
    Ok((workspace_id, Leaf { kind: table.table.to_string(), id: id_of(columns), record_hash }))
}

/// One row of a tenant's sealed table by its `id`: read as `R` from `columns`, decoded into `T` (a stored value
/// no code wrote is `Corrupt` naming its column, whatever the seal says), then its seal checked. The read every
/// sealed repository does (`NotFound` for another workspace's or environment's row, `Tampered` for an edited
/// one); `T` may be `R` itself.
pub async fn get_tenant_row<R, T>(
    conn: &mut AnyConnection,
    key: &SealKey,
    table: &SealedTable,
    columns: &str,
    tenant: &fiscus_domain::tenancy::Tenant,
    id: &str,
) -> Result<T>
where
    R: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
    T: TryFrom<R>,
    StoreError: From<T::Error>,
{
    let row: R = sqlx::query_as(&format!(
        "SELECT {columns} FROM {} WHERE workspace_id = $1 AND environment = $2 AND id = $3",
        table.table
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)?;
    let decoded = T::try_from(row)?;
    check(conn, key, table, &tenant.workspace_id, "id", id).await?;
    Ok(decoded)
}

/// Checks the seal of the rows of `table` matching `column = value` in one workspace; the first row whose
/// MAC does not match its stored columns is refused as [`StoreError::Tampered`].
pub async fn check(
    conn: &mut AnyConnection,
    key: &SealKey,
    table: &SealedTable,
    workspace_id: &str,
    column: &str,
    value: &str,
) -> Result<()> {
    debug_assert!(table.columns.contains(&column));
    let rows = sqlx::query(&select(table, &format!("workspace_id = $1 AND {column} = $2")))
        .bind(workspace_id)
        .bind(value)
        .fetch_all(&mut *conn)
        .await?;
    for row in &rows {
        let (columns, mac) = decode(table, row)?;
        if !matches(mac.as_deref(), &key.row(table.table, &columns)) {
            return Err(StoreError::Tampered(format!("{} {}", table.table, id_of(&columns))));
        }
    }
    Ok(())
}

/// Checks, in one read per few hundred, the seals of the rows of `table` in one workspace whose `column` is
/// one of `values` (the rows a repository just read and is about to return); the first row whose MAC does
/// not match its stored columns is refused as [`StoreError::Tampered`].
pub async fn check_keys(
    conn: &mut AnyConnection,
    key: &SealKey,
    table: &SealedTable,
    workspace_id: &str,
    column: &str,
    values: &[&str],
) -> Result<()> {
    debug_assert!(table.columns.contains(&column));
    for chunk in values.chunks(500) {
        let placeholders: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = select(table, &format!("workspace_id = $1 AND {column} IN ({})", placeholders.join(", ")));
        let mut q = sqlx::query(&sql).bind(workspace_id);
        for v in chunk {
            q = q.bind(*v);
        }
        for row in &q.fetch_all(&mut *conn).await? {
            let (columns, mac) = decode(table, row)?;
            if !matches(mac.as_deref(), &key.row(table.table, &columns)) {
                return Err(StoreError::Tampered(format!("{} {}", table.table, id_of(&columns))));
            }
        }
    }
    Ok(())
}

pub fn id_of(columns: &[(&str, Stored)]) -> String {
    match columns.first() {
        Some((_, Stored::Text(id))) => id.clone(),
        _ => String::from("?"),
    }
}
