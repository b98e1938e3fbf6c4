//! Finance core: general ledgers, legal entities and posted journals. Read-only to the API (the seed's
//! rule); written only by imports, and never updated.

use super::{Result, RowSink, RowTable, WriteTx, insert_rows, take_numbers, text};
use fiscus_domain::integrity::Stored;
use fiscus_store::dialect::bind_all;
use sqlx::AnyConnection;
use std::collections::HashMap;

pub const LEDGERS: RowTable = RowTable {
    table: "general_ledgers",
    columns: &["id", "code", "name", "currency", "fingerprint", "dataset_number"],
};

pub const ENTITIES: RowTable = RowTable {
    table: "finance_entities",
    columns: &[
        "id",
        "uid",
        "code",
        "name",
        "status",
        "general_ledger_id",
        "currency",
        "country",
        "fingerprint",
        "dataset_number",
    ],
};

pub const JOURNALS: RowTable = RowTable {
    table: "journals",
    columns: &[
        "id",
        "uid",
        "general_ledger_id",
        "entity_id",
        "entry",
        "posting_date",
        "status",
        "fingerprint",
        "dataset_number",
    ],
};

pub const JOURNAL_LINES: RowTable = RowTable {
    table: "journal_lines",
    columns: &[
        "journal_id",
        "line_no",
        "account",
        "description",
        "debit_minor",
        "credit_minor",
        "currency",
        "dataset_number",
    ],
};

/// What is already stored under a natural key: its integer id and fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Existing {
    pub id: i64,
    pub fingerprint: String,
}

/// Ledgers by code.
pub async fn ledgers(conn: &mut AnyConnection, workspace_id: &str) -> Result<HashMap<String, Existing>> {
    keyed(conn, "SELECT code, id, fingerprint FROM general_ledgers WHERE workspace_id = $1", workspace_id).await
}

/// Entities by code.
pub async fn entities(conn: &mut AnyConnection, workspace_id: &str) -> Result<HashMap<String, Existing>> {
    keyed(conn, "SELECT code, id, fingerprint FROM finance_entities WHERE workspace_id = $1", workspace_id).await
}

/// Journals by `{general_ledger_id}/{entry}`.
pub async fn journals(conn: &mut AnyConnection, workspace_id: &str) -> Result<HashMap<String, Existing>> {
    let sql = "SELECT CAST(general_ledger_id AS TEXT) || '/' || entry AS k, id, fingerprint FROM journals \
               WHERE workspace_id = $1";
    keyed(conn, sql, workspace_id).await
}

async fn keyed(conn: &mut AnyConnection, sql: &str, workspace_id: &str) -> Result<HashMap<String, Existing>> {
    let rows: Vec<(String, i64, String)> = sqlx::query_as(sql).bind(workspace_id).fetch_all(conn).await?;
    Ok(rows.into_iter().map(|(k, id, fingerprint)| (k, Existing { id, fingerprint })).collect())
}

pub struct NewLedger<'a> {
    pub code: &'a str,
    pub name: &'a str,
    pub currency: &'a str,
    pub fingerprint: String,
}

/// Inserts ledgers with new integer ids; returns their ids in order.
pub async fn insert_ledgers(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    ledgers: &[NewLedger<'_>],
    lines: &mut impl RowSink,
) -> Result<Vec<i64>> {
    let first = take_numbers(tx, "ledgers", ledgers.len() as i64).await?;
    let ids: Vec<i64> = (0..ledgers.len() as i64).map(|i| first + i).collect();
    let rows: Vec<Vec<Stored>> = ledgers
        .iter()
        .zip(&ids)
        .map(|(l, id)| {
            vec![
                Stored::Integer(*id),
                text(l.code),
                text(l.name),
                text(l.currency),
                text(&l.fingerprint),
                Stored::Integer(number),
            ]
        })
        .collect();
    if !rows.is_empty() {
        insert_rows(tx, workspace_id, &LEDGERS, &rows, lines).await?;
    }
    Ok(ids)
}

pub struct NewEntity<'a> {
    pub code: &'a str,
    pub name: &'a str,
    pub status: &'a str,
    pub general_ledger_id: i64,
    pub currency: &'a str,
    pub country: &'a str,
    pub fingerprint: String,
}

pub async fn insert_entities(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    entities: &[NewEntity<'_>],
    lines: &mut impl RowSink,
) -> Result<()> {
    let first = take_numbers(tx, "entities", entities.len() as i64).await?;
    let rows: Vec<Vec<Stored>> = entities
        .iter()
        .enumerate()
        .map(|(i, e)| {
            vec![
                Stored::Integer(first + i as i64),
                text(&fiscus_domain::ids::new_id("ent")),
                text(e.code),
                text(e.name),
                text(e.status),
                Stored::Integer(e.general_ledger_id),
                text(e.currency),
                text(e.country),
                text(&e.fingerprint),
                Stored::Integer(number),
            ]
        })
        .collect();
    if !rows.is_empty() {
        insert_rows(tx, workspace_id, &ENTITIES, &rows, lines).await?;
    }
    Ok(())
}

pub struct NewJournalLine<'a> {
    pub account: &'a str,
    pub description: &'a str,
    pub debit_minor: i64,
    pub credit_minor: i64,
    pub currency: &'a str,
}

pub struct NewJournal<'a> {
    pub general_ledger_id: i64,
    pub entity_id: i64,
    pub entry: &'a str,
    pub posting_date: &'a str,
    pub fingerprint: String,
    pub lines: Vec<NewJournalLine<'a>>,
}

pub async fn insert_journals(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    journals: &[NewJournal<'_>],
    lines: &mut impl RowSink,
) -> Result<()> {
    if journals.is_empty() {
        return Ok(());
    }
    let first = take_numbers(tx, "journals", journals.len() as i64).await?;
    let mut heads = Vec::with_capacity(journals.len());
    let mut line_rows = Vec::new();
    for (i, j) in journals.iter().enumerate() {
        let id = first + i as i64;
        heads.push(vec![
            Stored::Integer(id),
            text(&fiscus_domain::ids::new_id("jnl")),
            Stored::Integer(j.general_ledger_id),
            Stored::Integer(j.entity_id),
            text(j.entry),
            text(j.posting_date),
            text("posted"),
            text(&j.fingerprint),
            Stored::Integer(number),
        ]);
        for (n, l) in j.lines.iter().enumerate() {
            line_rows.push(vec![
                Stored::Integer(id),
                Stored::Integer(n as i64 + 1),
                text(l.account),
                text(l.description),
                Stored::Integer(l.debit_minor),
                Stored::Integer(l.credit_minor),
                text(l.currency),
                Stored::Integer(number),
            ]);
        }
    }
    insert_rows(tx, workspace_id, &JOURNALS, &heads, lines).await?;
    insert_rows(tx, workspace_id, &JOURNAL_LINES, &line_rows, lines).await
}

/// The seed's finance-core filters: `uid`, `status`, `general_ledger_id` (exact), `after_id` (exclusive).
#[derive(Clone, Debug, Default)]
pub struct Filter<'a> {
    pub uid: Option<&'a str>,
    pub status: Option<&'a str>,
    pub general_ledger_id: Option<i64>,
    pub after_id: Option<i64>,
}

fn filtered(select: &str, f: &Filter<'_>) -> (String, Vec<Stored>) {
    let mut sql = format!("{select} WHERE workspace_id = $1 AND id > $2");
    let mut binds = Vec::new();
    if let Some(uid) = f.uid {
        binds.push(text(uid));
        sql.push_str(&format!(" AND uid = ${}", binds.len() + 2));
    }
    if let Some(status) = f.status {
        binds.push(text(status));
        sql.push_str(&format!(" AND status = ${}", binds.len() + 2));
    }
    if let Some(gl) = f.general_ledger_id {
        binds.push(Stored::Integer(gl));
        sql.push_str(&format!(" AND general_ledger_id = ${}", binds.len() + 2));
    }
    sql.push_str(&format!(" ORDER BY id LIMIT ${}", binds.len() + 3));
    (sql, binds)
}

fiscus_store::row! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct Entity {
        pub id: i64,
        pub uid: String,
        pub code: String,
        pub name: String,
        pub status: String,
        pub general_ledger_id: i64,
        pub currency: String,
        pub country: String,
        pub dataset_number: i64,
    }
}

pub async fn list_entities(
    conn: &mut AnyConnection,
    workspace_id: &str,
    f: &Filter<'_>,
    limit: u32,
) -> Result<Vec<Entity>> {
    let (sql, binds) = filtered(
        "SELECT id, uid, code, name, status, general_ledger_id, currency, country, dataset_number FROM finance_entities",
        f,
    );
    let q = sqlx::query_as::<_, Entity>(&sql).bind(workspace_id).bind(f.after_id.unwrap_or(0));
    let q = bind_all!(q, &binds);
    Ok(q.bind(i64::from(limit) + 1).fetch_all(conn).await?)
}

fiscus_store::row! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct Journal {
        pub id: i64,
        pub uid: String,
        pub general_ledger_id: i64,
        pub entity_id: i64,
        pub entry: String,
        pub posting_date: String,
        pub status: String,
        pub dataset_number: i64,
    }
}

fiscus_store::row! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct JournalLine {
        pub journal_id: i64,
        pub line_no: i64,
        pub account: String,
        pub description: String,
        pub debit_minor: i64,
        pub credit_minor: i64,
        pub currency: String,
    }
}

/// Journals with their lines.
pub async fn list_journals(
    conn: &mut AnyConnection,
    workspace_id: &str,
    f: &Filter<'_>,
    limit: u32,
) -> Result<Vec<(Journal, Vec<JournalLine>)>> {
    let (sql, binds) = filtered(
        "SELECT id, uid, general_ledger_id, entity_id, entry, posting_date, status, dataset_number FROM journals",
        f,
    );
    let q = sqlx::query_as::<_, Journal>(&sql).bind(workspace_id).bind(f.after_id.unwrap_or(0));
    let q = bind_all!(q, &binds);
    let journals = q.bind(i64::from(limit) + 1).fetch_all(&mut *conn).await?;
    if journals.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders: Vec<String> = (0..journals.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "SELECT journal_id, line_no, account, description, debit_minor, credit_minor, currency FROM journal_lines \
         WHERE workspace_id = $1 AND journal_id IN ({}) ORDER BY journal_id, line_no",
        placeholders.join(", ")
    );
    let mut q = sqlx::query_as::<_, JournalLine>(&sql).bind(workspace_id);
    for j in &journals {
        q = q.bind(j.id);
    }
    let lines = q.fetch_all(conn).await?;
    let mut by_journal: HashMap<i64, Vec<JournalLine>> = HashMap::new();
    for l in lines {
        by_journal.entry(l.journal_id).or_default().push(l);
    }
    Ok(journals
        .into_iter()
        .map(|j| {
            let lines = by_journal.remove(&j.id).unwrap_or_default();
            (j, lines)
        })
        .collect())
}

/// Which journal lines an account series sums: one account of one general ledger, optionally of one entity.
#[derive(Clone, Debug)]
pub struct AccountLines<'a> {
    pub general_ledger_id: i64,
    pub account: &'a str,
    pub entity_id: Option<i64>,
}

fn account_filter(a: &AccountLines<'_>) -> (String, Vec<Stored>) {
    let mut sql = String::from(
        " FROM journal_lines l JOIN journals j ON j.id = l.journal_id \
         WHERE l.workspace_id = $1 AND j.workspace_id = $1 AND j.general_ledger_id = $2 AND l.account = $3",
    );
    let mut binds = vec![Stored::Integer(a.general_ledger_id), text(a.account)];
    if let Some(e) = a.entity_id {
        binds.push(Stored::Integer(e));
        sql.push_str(&format!(" AND j.entity_id = ${}", binds.len() + 1));
    }
    (sql, binds)
}

/// The datasets holding lines of an account, with the currencies of those lines.
pub async fn account_datasets(
    conn: &mut AnyConnection,
    workspace_id: &str,
    a: &AccountLines<'_>,
) -> Result<Vec<(i64, String)>> {
    let (from, binds) = account_filter(a);
    let sql = format!("SELECT DISTINCT l.dataset_number, l.currency{from} ORDER BY 1, 2");
    let q = sqlx::query_as::<_, (i64, String)>(&sql).bind(workspace_id);
    let q = bind_all!(q, &binds);
    Ok(q.fetch_all(conn).await?)
}

/// An account's net movement (debits minus credits, minor units) per calendar month (`YYYY-MM`) of posting,
/// in one currency, summed over the given datasets only, months in order (months without postings absent).
pub async fn account_movements(
    conn: &mut AnyConnection,
    workspace_id: &str,
    a: &AccountLines<'_>,
    currency: &str,
    datasets: &[i64],
    start: Option<&str>,
    end: Option<&str>,
) -> Result<Vec<(String, i64)>> {
    if datasets.is_empty() {
        return Ok(Vec::new());
    }
    let (from, mut binds) = account_filter(a);
    let mut sql =
        format!("SELECT substr(j.posting_date, 1, 7), CAST(SUM(l.debit_minor - l.credit_minor) AS BIGINT){from}");
    binds.push(text(currency));
    sql.push_str(&format!(" AND l.currency = ${}", binds.len() + 1));
    let mut placeholders = Vec::with_capacity(datasets.len());
    for d in datasets {
        binds.push(Stored::Integer(*d));
        placeholders.push(format!("${}", binds.len() + 1));
    }
    sql.push_str(&format!(" AND l.dataset_number IN ({})", placeholders.join(", ")));
    for (op, day) in [(">=", start), ("<=", end)] {
        if let Some(day) = day {
            binds.push(text(day));
            sql.push_str(&format!(" AND j.posting_date {op} ${}", binds.len() + 1));
        }
    }
    sql.push_str(" GROUP BY substr(j.posting_date, 1, 7) ORDER BY 1");
    let q = sqlx::query_as::<_, (String, i64)>(&sql).bind(workspace_id);
    let q = bind_all!(q, &binds);
    Ok(q.fetch_all(conn).await?)
}
