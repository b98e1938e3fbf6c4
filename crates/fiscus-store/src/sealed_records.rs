//! Sealed records: a record's content kept as canonical JSON (`body`) beside the columns that relate records
//! and hold their rules, every row sealed, read with its seal checked in the same query
//! ([`seals::select_sealed`]) and decoded by column name. An unknown stored value or a body that is not its
//! record type is `Corrupt`, which refuses. Used by the LQM Builder's and the workflows' tables.

use serde::de::DeserializeOwned;

use crate::dialect::bind_all;
use crate::seals::{self, Columns, SealedTable};
use crate::{Result, StoreError, WriteTx};
use fiscus_domain::actor::Actor;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use sqlx::AnyConnection;

/// A sealed record: its key, its content decoded, and what every record has.
#[derive(Clone, Debug, PartialEq)]
pub struct Record<B> {
    pub id: String,
    pub body: B,
    /// The body as stored (canonical JSON), which `content_hash` covers.
    pub body_json: String,
    pub content_hash: String,
    /// Stored as its label (`application:app_…`, `operator:opr_…`, `cli:…`).
    pub created_by: Actor,
    pub created_at: i64,
}

/// A record's columns by name.
pub struct Fields {
    pub table: &'static str,
    pub columns: Columns,
}

impl Fields {
    fn get(&self, name: &str) -> Result<&Stored> {
        self.columns
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .ok_or_else(|| StoreError::Corrupt(format!("{}: no column {name}", self.table)))
    }

    pub fn opt_text(&self, name: &str) -> Result<Option<String>> {
        match self.get(name)? {
            Stored::Text(t) => Ok(Some(t.clone())),
            Stored::Null => Ok(None),
            Stored::Integer(i) => Err(StoreError::Corrupt(format!("{}.{name}: {i} is not text", self.table))),
        }
    }

    pub fn text(&self, name: &str) -> Result<String> {
        self.opt_text(name)?.ok_or_else(|| StoreError::Corrupt(format!("{}.{name} is NULL", self.table)))
    }

    pub fn opt_int(&self, name: &str) -> Result<Option<i64>> {
        match self.get(name)? {
            Stored::Integer(i) => Ok(Some(*i)),
            Stored::Null => Ok(None),
            Stored::Text(t) => Err(StoreError::Corrupt(format!("{}.{name}: `{t}` is not an integer", self.table))),
        }
    }

    pub fn int(&self, name: &str) -> Result<i64> {
        self.opt_int(name)?.ok_or_else(|| StoreError::Corrupt(format!("{}.{name} is NULL", self.table)))
    }

    /// A stored enum value, parsed; an unknown one is `Corrupt`.
    pub fn parsed<T>(&self, name: &str, parse: impl Fn(&str) -> Option<T>) -> Result<T> {
        let v = self.text(name)?;
        parse(&v).ok_or_else(|| StoreError::Corrupt(format!("{}.{name} = `{v}`", self.table)))
    }

    /// An actor stored as its label; a label of no known kind is `Corrupt`.
    pub fn actor(&self, name: &str) -> Result<Actor> {
        self.parsed(name, Actor::from_label)
    }

    /// A who-and-when pair of columns (a review, an ending): both set or both NULL.
    pub fn stamp(&self, by: &str, at: &str) -> Result<Option<(Actor, i64)>> {
        match (self.opt_text(by)?, self.opt_int(at)?) {
            (Some(label), Some(at)) => {
                let actor = Actor::from_label(&label)
                    .ok_or_else(|| StoreError::Corrupt(format!("{}.{by} = `{label}`", self.table)))?;
                Ok(Some((actor, at)))
            }
            (None, None) => Ok(None),
            _ => Err(StoreError::Corrupt(format!("{} {}: {by} and {at} half set", self.table, self.text("id")?))),
        }
    }

    pub fn record<B: DeserializeOwned>(&self) -> Result<Record<B>> {
        let id = self.text("id")?;
        let body_json = self.text("body")?;
        let body = serde_json::from_str(&body_json)
            .map_err(|e| StoreError::Corrupt(format!("{} {id}: body: {e}", self.table)))?;
        Ok(Record {
            id,
            body,
            body_json,
            content_hash: self.text("content_hash")?,
            created_by: self.actor("created_by")?,
            created_at: self.int("created_at")?,
        })
    }
}

/// Inserts a row with its seal: `values` in the table's sealed column order. A NULL is written as the
/// literal, not bound: PostgreSQL will not take a NULL bound as text into a BIGINT column.
pub async fn insert(tx: &mut WriteTx, table: &SealedTable, values: Vec<Stored>) -> Result<()> {
    let mac = seals::seal_of(tx.seal_key(), table, values.clone())?;
    let sealed_values = values.clone();
    let mut placeholders = Vec::with_capacity(values.len() + 1);
    let mut bound = Vec::with_capacity(values.len());
    for v in values {
        if v == Stored::Null {
            placeholders.push("NULL".to_string());
        } else {
            bound.push(v);
            placeholders.push(format!("${}", bound.len()));
        }
    }
    placeholders.push(format!("${}", bound.len() + 1));
    let sql = format!(
        "INSERT INTO {} ({}, seal_mac) VALUES ({})",
        table.table,
        table.columns.join(", "),
        placeholders.join(", ")
    );
    bind_all!(sqlx::query(&sql), &bound).bind(mac).execute(tx.conn()).await?;
    seals::log(tx, table, &sealed_values).await
}

/// The tenant's rows of `table` where `column = value`, oldest first, seals checked.
pub async fn select_where(
    conn: &mut AnyConnection,
    key: &SealKey,
    table: &SealedTable,
    tenant: &Tenant,
    column: &str,
    value: Stored,
) -> Result<Vec<Fields>> {
    let rows = seals::select_sealed(
        conn,
        key,
        table,
        &format!("workspace_id = $1 AND environment = $2 AND {column} = $3 ORDER BY id"),
        &[Stored::Text(tenant.workspace_id.clone()), Stored::Text(tenant.environment.as_str().into()), value],
    )
    .await?;
    Ok(rows.into_iter().map(|columns| Fields { table: table.table, columns }).collect())
}

/// The tenant's records of `table` where `column = value`, seals checked, decoded by `decode` and ordered
/// by `order` (a version or sequence number: the history of one object, oldest first).
pub async fn history<T, K: Ord>(
    conn: &mut AnyConnection,
    key: &SealKey,
    table: &SealedTable,
    tenant: &Tenant,
    (column, value): (&str, &str),
    decode: impl Fn(&Fields) -> Result<T>,
    order: impl Fn(&T) -> K,
) -> Result<Vec<T>> {
    let mut all: Vec<T> =
        select_where(conn, key, table, tenant, column, text(value)).await?.iter().map(decode).collect::<Result<_>>()?;
    all.sort_by_key(order);
    Ok(all)
}

/// One row of the tenant by id, its seal checked; another tenant's is `NotFound`.
pub async fn select_one(
    conn: &mut AnyConnection,
    key: &SealKey,
    table: &SealedTable,
    tenant: &Tenant,
    id: &str,
) -> Result<Fields> {
    select_where(conn, key, table, tenant, "id", Stored::Text(id.to_string())).await?.pop().ok_or(StoreError::NotFound)
}

/// A page of the tenant's rows, newest first, before `before` (an id), `limit + 1` of them.
pub async fn select_page(
    conn: &mut AnyConnection,
    key: &SealKey,
    table: &SealedTable,
    tenant: &Tenant,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<Fields>> {
    // No cursor, no bound: a sentinel id (`~`) would sort after every id only under a byte-order collation.
    let mut binds = vec![Stored::Text(tenant.workspace_id.clone()), Stored::Text(tenant.environment.as_str().into())];
    let filter = match before {
        Some(before) => {
            binds.push(Stored::Text(before.into()));
            "workspace_id = $1 AND environment = $2 AND id < $3 ORDER BY id DESC LIMIT $4"
        }
        None => "workspace_id = $1 AND environment = $2 ORDER BY id DESC LIMIT $3",
    };
    binds.push(Stored::Integer(i64::from(limit) + 1));
    let rows = seals::select_sealed(conn, key, table, filter, &binds).await?;
    Ok(rows.into_iter().map(|columns| Fields { table: table.table, columns }).collect())
}

/// Updates the named columns of one row of the tenant while `guard` holds, and re-seals it; `false` when
/// the guard no longer held (someone else moved it first).
pub async fn update_guarded(
    tx: &mut WriteTx,
    table: &SealedTable,
    tenant: &Tenant,
    id: &str,
    set: &[(&str, Stored)],
    guard: (&str, &str),
) -> Result<bool> {
    let assignments: Vec<String> = set.iter().enumerate().map(|(i, (c, _))| format!("{c} = ${}", i + 1)).collect();
    let n = set.len();
    let sql = format!(
        "UPDATE {} SET {} WHERE workspace_id = ${} AND environment = ${} AND id = ${} AND {} = ${}",
        table.table,
        assignments.join(", "),
        n + 1,
        n + 2,
        n + 3,
        guard.0,
        n + 4
    );
    let values: Vec<Stored> = set.iter().map(|(_, v)| v.clone()).collect();
    let done = bind_all!(sqlx::query(&sql), &values)
        .bind(&tenant.workspace_id)
        .bind(tenant.environment.as_str())
        .bind(id)
        .bind(guard.1)
        .execute(tx.conn())
        .await?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    seals::seal(tx, table, &tenant.workspace_id, id).await?;
    Ok(true)
}

/// A record whose relating columns disagree with its (sealed) body: refused as corrupt.
pub fn columns_differ(table: &str, id: &str) -> StoreError {
    StoreError::Corrupt(format!("{table} {id}: columns differ from the body"))
}

pub fn text(s: &str) -> Stored {
    Stored::Text(s.to_string())
}

pub fn opt_text(s: Option<&str>) -> Stored {
    s.map_or(Stored::Null, text)
}

/// Inserts a record: the columns every record has come from `record`, the table's own (relations, state)
/// from `own` by name, and every other sealed column is NULL (what moves later: a review, an ending).
pub async fn insert_record<B>(
    tx: &mut WriteTx,
    table: &SealedTable,
    tenant: &Tenant,
    record: &Record<B>,
    own: &[(&str, Stored)],
) -> Result<()> {
    if let Some((name, _)) = own.iter().find(|(name, _)| !table.columns.contains(name)) {
        return Err(StoreError::Corrupt(format!("{}: no column {name}", table.table)));
    }
    let values = table
        .columns
        .iter()
        .map(|column| match *column {
            "id" => text(&record.id),
            "workspace_id" => text(&tenant.workspace_id),
            "environment" => text(tenant.environment.as_str()),
            "body" => text(&record.body_json),
            "content_hash" => text(&record.content_hash),
            "created_by" => text(&record.created_by.label()),
            "created_at" => Stored::Integer(record.created_at),
            other => own.iter().find(|(name, _)| *name == other).map_or(Stored::Null, |(_, v)| v.clone()),
        })
        .collect();
    insert(tx, table, values).await
}
