//! Economic series: each dataset version describes its series (title, units, frequency) and holds their
//! observations.

use super::{MAX_DATE, Result, RowSink, RowTable, StoreError, WriteTx, insert_rows, opt_text, or_min, text};
use crate::rules::records::ObservationRecord;
use fiscus_domain::integrity::Stored;
use sqlx::AnyConnection;

pub const SERIES: RowTable = RowTable {
    table: "economic_series",
    columns: &[
        "series_key",
        "dataset_number",
        "title",
        "units",
        "frequency",
        "observations",
        "first_date",
        "last_date",
    ],
};

pub const OBSERVATIONS: RowTable =
    RowTable { table: "economic_observations", columns: &["series_key", "dataset_number", "date", "value"] };

fiscus_store::row! {
    /// A series as one dataset version describes it.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Series {
        pub series_key: String,
        pub dataset_number: i64,
        pub title: String,
        pub units: String,
        pub frequency: String,
        pub observations: i64,
        pub first_date: Option<String>,
        pub last_date: Option<String>,
    }
}

/// Writes an economics dataset: its series' descriptions and their observations.
pub async fn insert(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    series: &[Series],
    observations: &[ObservationRecord],
    lines: &mut impl RowSink,
) -> Result<()> {
    let rows: Vec<Vec<Stored>> = series
        .iter()
        .map(|s| {
            vec![
                text(&s.series_key),
                Stored::Integer(number),
                text(&s.title),
                text(&s.units),
                text(&s.frequency),
                Stored::Integer(s.observations),
                opt_text(s.first_date.as_deref()),
                opt_text(s.last_date.as_deref()),
            ]
        })
        .collect();
    insert_rows(tx, workspace_id, &SERIES, &rows, lines).await?;
    super::insert_mapped(
        tx,
        workspace_id,
        &OBSERVATIONS,
        observations,
        |o| vec![text(&o.key), Stored::Integer(number), text(&o.date), text(&o.value)],
        lines,
    )
    .await
}

/// The dataset names each series key already comes from (a key belongs to one dataset name, so a new
/// file cannot silently take over another source's series).
pub async fn owners(conn: &mut AnyConnection, workspace_id: &str) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT DISTINCT s.series_key, d.name FROM economic_series s JOIN datasets d \
         ON d.workspace_id = s.workspace_id AND d.number = s.dataset_number WHERE s.workspace_id = $1",
    )
    .bind(workspace_id)
    .fetch_all(conn)
    .await?)
}

const LATEST: &str = "SELECT series_key, dataset_number, title, units, frequency, observations, first_date, last_date \
     FROM economic_series s WHERE s.workspace_id = $1 AND s.dataset_number = \
     (SELECT MAX(s2.dataset_number) FROM economic_series s2 WHERE s2.workspace_id = s.workspace_id AND s2.series_key = s.series_key)";

/// Series (newest description of each) by key, after `after`, `limit + 1` rows.
pub async fn list(
    conn: &mut AnyConnection,
    workspace_id: &str,
    frequency: Option<&str>,
    after: Option<&str>,
    limit: u32,
) -> Result<Vec<Series>> {
    let mut sql = format!("{LATEST} AND s.series_key > $2");
    if frequency.is_some() {
        sql.push_str(" AND s.frequency = $4");
    }
    sql.push_str(" ORDER BY s.series_key LIMIT $3");
    let mut q = sqlx::query_as::<_, Series>(&sql).bind(workspace_id).bind(or_min(after)).bind(i64::from(limit) + 1);
    if let Some(f) = frequency {
        q = q.bind(f);
    }
    Ok(q.fetch_all(conn).await?)
}

/// A series as its newest dataset describes it, or as a given dataset does.
pub async fn get(conn: &mut AnyConnection, workspace_id: &str, key: &str, dataset: Option<i64>) -> Result<Series> {
    let row = match dataset {
        None => {
            sqlx::query_as::<_, Series>(&format!("{LATEST} AND s.series_key = $2"))
                .bind(workspace_id)
                .bind(key)
                .fetch_optional(conn)
                .await?
        }
        Some(n) => {
            sqlx::query_as::<_, Series>(
                "SELECT series_key, dataset_number, title, units, frequency, observations, first_date, last_date \
             FROM economic_series WHERE workspace_id = $1 AND series_key = $2 AND dataset_number = $3",
            )
            .bind(workspace_id)
            .bind(key)
            .bind(n)
            .fetch_optional(conn)
            .await?
        }
    };
    row.ok_or(StoreError::NotFound)
}

/// Every dataset version that holds the series, newest first.
pub async fn versions(conn: &mut AnyConnection, workspace_id: &str, key: &str) -> Result<Vec<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT dataset_number FROM economic_series WHERE workspace_id = $1 AND series_key = $2 ORDER BY dataset_number DESC",
    )
    .bind(workspace_id)
    .bind(key)
    .fetch_all(conn)
    .await?)
}

fiscus_store::row! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct Observation {
        pub date: String,
        pub value: String,
    }
}

/// Observations of one series from one dataset, in date order, `limit + 1` of them.
pub async fn observations(
    conn: &mut AnyConnection,
    workspace_id: &str,
    key: &str,
    dataset_number: i64,
    window: super::market::Window<'_>,
    limit: u32,
) -> Result<Vec<Observation>> {
    let lower = std::cmp::max(or_min(window.from), or_min(window.after));
    let exclusive = window.after.is_some_and(|a| a >= or_min(window.from));
    Ok(sqlx::query_as::<_, Observation>(&format!(
        "SELECT date, value FROM economic_observations WHERE workspace_id = $1 AND series_key = $2 AND \
         dataset_number = $3 AND date {} $4 AND date <= $5 ORDER BY date LIMIT $6",
        if exclusive { ">" } else { ">=" }
    ))
    .bind(workspace_id)
    .bind(key)
    .bind(dataset_number)
    .bind(lower)
    .bind(window.to.unwrap_or(MAX_DATE))
    .bind(i64::from(limit) + 1)
    .fetch_all(conn)
    .await?)
}
