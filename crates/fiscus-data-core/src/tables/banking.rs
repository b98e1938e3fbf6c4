//! Bank transactions and balance snapshots (ISO 20022 camt.053 balance types), as imported from
//! statements. Never updated.

use super::{MAX_DATE, Result, RowSink, RowTable, WriteTx, insert_rows, or_min, text};
use fiscus_domain::integrity::Stored;
use sqlx::AnyConnection;
use std::collections::HashMap;

pub const TRANSACTIONS: RowTable = RowTable {
    table: "financial_transactions",
    columns: &[
        "id",
        "account",
        "external_id",
        "booking_date",
        "value_date",
        "amount_minor",
        "currency",
        "counterparty",
        "description",
        "reference",
        "fingerprint",
        "dataset_number",
    ],
};

pub const BALANCES: RowTable = RowTable {
    table: "balance_snapshots",
    columns: &["id", "account", "date", "balance_type", "amount_minor", "currency", "fingerprint", "dataset_number"],
};

/// Fingerprints of stored transactions by `{account}/{external_id}`.
pub async fn transaction_fingerprints(conn: &mut AnyConnection, workspace_id: &str) -> Result<HashMap<String, String>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT account || '/' || external_id, fingerprint FROM financial_transactions WHERE workspace_id = $1",
    )
    .bind(workspace_id)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Fingerprints of stored balances by `{account}/{date}/{balance_type}`.
pub async fn balance_fingerprints(conn: &mut AnyConnection, workspace_id: &str) -> Result<HashMap<String, String>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT account || '/' || date || '/' || balance_type, fingerprint FROM balance_snapshots WHERE workspace_id = $1",
    )
    .bind(workspace_id)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().collect())
}

fiscus_store::row! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct Transaction {
        pub id: String,
        pub account: String,
        pub external_id: String,
        pub booking_date: String,
        pub value_date: String,
        pub amount_minor: i64,
        pub currency: String,
        pub counterparty: String,
        pub description: String,
        pub reference: String,
        pub dataset_number: i64,
    }
}

pub async fn insert_transactions(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    rows: &[(Transaction, String)],
    lines: &mut impl RowSink,
) -> Result<()> {
    let rows: Vec<Vec<Stored>> = rows
        .iter()
        .map(|(t, fingerprint)| {
            vec![
                text(&t.id),
                text(&t.account),
                text(&t.external_id),
                text(&t.booking_date),
                text(&t.value_date),
                Stored::Integer(t.amount_minor),
                text(&t.currency),
                text(&t.counterparty),
                text(&t.description),
                text(&t.reference),
                text(fingerprint),
                Stored::Integer(number),
            ]
        })
        .collect();
    insert_rows(tx, workspace_id, &TRANSACTIONS, &rows, lines).await
}

fiscus_store::row! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct Balance {
        pub id: String,
        pub account: String,
        pub date: String,
        pub balance_type: String,
        pub amount_minor: i64,
        pub currency: String,
        pub dataset_number: i64,
    }
}

pub async fn insert_balances(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    rows: &[(Balance, String)],
    lines: &mut impl RowSink,
) -> Result<()> {
    let rows: Vec<Vec<Stored>> = rows
        .iter()
        .map(|(b, fingerprint)| {
            vec![
                text(&b.id),
                text(&b.account),
                text(&b.date),
                text(&b.balance_type),
                Stored::Integer(b.amount_minor),
                text(&b.currency),
                text(fingerprint),
                Stored::Integer(number),
            ]
        })
        .collect();
    insert_rows(tx, workspace_id, &BALANCES, &rows, lines).await
}

/// Filters of the transaction and snapshot lists (exact; dates inclusive).
#[derive(Clone, Debug, Default)]
pub struct Filter<'a> {
    pub account: Option<&'a str>,
    pub currency: Option<&'a str>,
    pub balance_type: Option<&'a str>,
    pub from: Option<&'a str>,
    pub to: Option<&'a str>,
    pub after_id: Option<&'a str>,
}

fn filtered(select: &str, date: &str, f: &Filter<'_>) -> (String, Vec<String>) {
    let mut sql = format!("{select} WHERE workspace_id = $1 AND id > $2 AND {date} >= $3 AND {date} <= $4");
    let mut binds = Vec::new();
    for (column, value) in [("account", f.account), ("currency", f.currency), ("balance_type", f.balance_type)] {
        if let Some(v) = value {
            binds.push(v.to_string());
            sql.push_str(&format!(" AND {column} = ${}", binds.len() + 4));
        }
    }
    sql.push_str(&format!(" ORDER BY id LIMIT ${}", binds.len() + 5));
    (sql, binds)
}

pub async fn list_transactions(
    conn: &mut AnyConnection,
    workspace_id: &str,
    f: &Filter<'_>,
    limit: u32,
) -> Result<Vec<Transaction>> {
    let (sql, binds) = filtered(
        "SELECT id, account, external_id, booking_date, value_date, amount_minor, currency, counterparty, description, \
         reference, dataset_number FROM financial_transactions",
        "booking_date",
        f,
    );
    let mut q = sqlx::query_as::<_, Transaction>(&sql)
        .bind(workspace_id)
        .bind(or_min(f.after_id))
        .bind(or_min(f.from))
        .bind(f.to.unwrap_or(MAX_DATE));
    for b in &binds {
        q = q.bind(b.as_str());
    }
    Ok(q.bind(i64::from(limit) + 1).fetch_all(conn).await?)
}

pub async fn list_balances(
    conn: &mut AnyConnection,
    workspace_id: &str,
    f: &Filter<'_>,
    limit: u32,
) -> Result<Vec<Balance>> {
    let (sql, binds) = filtered(
        "SELECT id, account, date, balance_type, amount_minor, currency, dataset_number FROM balance_snapshots",
        "date",
        f,
    );
    let mut q = sqlx::query_as::<_, Balance>(&sql)
        .bind(workspace_id)
        .bind(or_min(f.after_id))
        .bind(or_min(f.from))
        .bind(f.to.unwrap_or(MAX_DATE));
    for b in &binds {
        q = q.bind(b.as_str());
    }
    Ok(q.bind(i64::from(limit) + 1).fetch_all(conn).await?)
}
