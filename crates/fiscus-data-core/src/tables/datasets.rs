//! Datasets: one sealed row per import, with its provenance.

use super::{Result, StoreError, WriteTx};
use crate::rules::{Kind, Provenance};
use fiscus_domain::actor::Actor;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_store::corrupt;
use fiscus_store::data_tables::{DATASET_QUALITY_SEALED, DATASETS_SEALED};
use fiscus_store::seals;
use fiscus_store::stored_actor;
use sqlx::AnyConnection;

#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// `dst_…`, the sealed row's key.
    pub id: String,
    /// The integer id the API shows and the seed's `{dataset}` paths take.
    pub number: i64,
    pub kind: Kind,
    pub name: String,
    pub version: i64,
    pub source: String,
    pub licence: String,
    pub provenance: Provenance,
    pub file_name: String,
    /// `sha256:` of the file's bytes as read.
    pub file_sha256: String,
    pub row_count: i64,
    /// Rows of a ledger kind already imported unchanged by an earlier dataset.
    pub skipped_count: i64,
    pub period_start: Option<String>,
    pub period_end: Option<String>,
    pub importer_version: String,
    /// The column mapping and options used (JSON).
    pub mapping: String,
    pub content_hash: String,
    /// The actor: `cli`, `demo`, or `application:app_…`.
    pub imported_by: Actor,
    pub created_at: i64,
}

fiscus_store::row! {
    struct DatasetRow {
        id: String,
        number: i64,
        kind: String,
        name: String,
        version: i64,
        source: String,
        licence: String,
        provenance: String,
        file_name: String,
        file_sha256: String,
        row_count: i64,
        skipped_count: i64,
        period_start: Option<String>,
        period_end: Option<String>,
        importer_version: String,
        mapping: String,
        content_hash: String,
        imported_by: String,
        created_at: i64,
    }
}

impl TryFrom<DatasetRow> for Dataset {
    type Error = StoreError;

    fn try_from(r: DatasetRow) -> Result<Dataset> {
        let imported_by = stored_actor("datasets", &r.id, "imported_by", &r.imported_by)?;
        let bad = |column: &str, value: &str| corrupt("datasets", &r.id, column, value);
        Ok(Dataset {
            kind: Kind::parse(&r.kind).ok_or_else(|| bad("kind", &r.kind))?,
            provenance: Provenance::parse(&r.provenance).ok_or_else(|| bad("provenance", &r.provenance))?,
            id: r.id,
            number: r.number,
            name: r.name,
            version: r.version,
            source: r.source,
            licence: r.licence,
            file_name: r.file_name,
            file_sha256: r.file_sha256,
            row_count: r.row_count,
            skipped_count: r.skipped_count,
            period_start: r.period_start,
            period_end: r.period_end,
            importer_version: r.importer_version,
            mapping: r.mapping,
            content_hash: r.content_hash,
            imported_by,
            created_at: r.created_at,
        })
    }
}

const COLUMNS: &str = "id, number, kind, name, version, source, licence, provenance, file_name, file_sha256, \
                       row_count, skipped_count, period_start, period_end, importer_version, mapping, content_hash, \
                       imported_by, created_at";

/// Reserves the next dataset number (inside the import's transaction, so a rolled-back import leaves no
/// gap that a committed one would see).
pub async fn next_number(tx: &mut WriteTx) -> Result<i64> {
    super::take_numbers(tx, "datasets", 1).await
}

/// The next version of the dataset `name` of `kind` in the workspace (1 for a new one).
pub async fn next_version(conn: &mut AnyConnection, workspace_id: &str, kind: Kind, name: &str) -> Result<i64> {
    let max: Option<i64> =
        sqlx::query_scalar("SELECT MAX(version) FROM datasets WHERE workspace_id = $1 AND kind = $2 AND name = $3")
            .bind(workspace_id)
            .bind(kind.as_str())
            .bind(name)
            .fetch_one(conn)
            .await?;
    Ok(max.unwrap_or(0) + 1)
}

/// Inserts a dataset, sealed in its INSERT.
pub async fn insert(tx: &mut WriteTx, workspace_id: &str, d: &Dataset) -> Result<()> {
    let opt = |s: &Option<String>| s.clone().map_or(Stored::Null, Stored::Text);
    let values = vec![
        Stored::Text(d.id.clone()),
        Stored::Integer(d.number),
        Stored::Text(workspace_id.to_string()),
        Stored::Text(d.kind.as_str().into()),
        Stored::Text(d.name.clone()),
        Stored::Integer(d.version),
        Stored::Text(d.source.clone()),
        Stored::Text(d.licence.clone()),
        Stored::Text(d.provenance.as_str().into()),
        Stored::Text(d.file_name.clone()),
        Stored::Text(d.file_sha256.clone()),
        Stored::Integer(d.row_count),
        Stored::Integer(d.skipped_count),
        opt(&d.period_start),
        opt(&d.period_end),
        Stored::Text(d.importer_version.clone()),
        Stored::Text(d.mapping.clone()),
        Stored::Text(d.content_hash.clone()),
        Stored::Text(d.imported_by.label()),
        Stored::Integer(d.created_at),
    ];
    let mac = seals::seal_of(tx.seal_key(), &DATASETS_SEALED, values.clone())?;
    sqlx::query(
        "INSERT INTO datasets (id, number, workspace_id, kind, name, version, source, licence, provenance, file_name, \
         file_sha256, row_count, skipped_count, period_start, period_end, importer_version, mapping, content_hash, \
         imported_by, created_at, seal_mac) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)",
    )
    .bind(&d.id)
    .bind(d.number)
    .bind(workspace_id)
    .bind(d.kind.as_str())
    .bind(&d.name)
    .bind(d.version)
    .bind(&d.source)
    .bind(&d.licence)
    .bind(d.provenance.as_str())
    .bind(&d.file_name)
    .bind(&d.file_sha256)
    .bind(d.row_count)
    .bind(d.skipped_count)
    .bind(&d.period_start)
    .bind(&d.period_end)
    .bind(&d.importer_version)
    .bind(&d.mapping)
    .bind(&d.content_hash)
    .bind(d.imported_by.label())
    .bind(d.created_at)
    .bind(mac)
    .execute(tx.conn())
    .await?;
    seals::log(tx, &DATASETS_SEALED, &values).await?;
    Ok(())
}

/// The dataset of `kind` already imported from a file with this hash, if any (what makes an import
/// idempotent).
pub async fn find_by_file(
    conn: &mut AnyConnection,
    key: &SealKey,
    workspace_id: &str,
    kind: Kind,
    file_sha256: &str,
) -> Result<Option<Dataset>> {
    let found = sqlx::query_as::<_, DatasetRow>(&format!(
        "SELECT {COLUMNS} FROM datasets WHERE workspace_id = $1 AND kind = $2 AND file_sha256 = $3"
    ))
    .bind(workspace_id)
    .bind(kind.as_str())
    .bind(file_sha256)
    .fetch_optional(&mut *conn)
    .await?
    .map(Dataset::try_from)
    .transpose()?;
    checked(conn, key, workspace_id, found.into_iter().collect()).await.map(|mut v| v.pop())
}

/// `datasets` once every one's seal is checked (`Tampered` for a row edited outside Fiscus).
async fn checked(
    conn: &mut AnyConnection,
    key: &SealKey,
    workspace_id: &str,
    datasets: Vec<Dataset>,
) -> Result<Vec<Dataset>> {
    let ids: Vec<&str> = datasets.iter().map(|d| d.id.as_str()).collect();
    seals::check_keys(conn, key, &DATASETS_SEALED, workspace_id, "id", &ids).await?;
    Ok(datasets)
}

/// A dataset by number, its seal checked.
pub async fn get(conn: &mut AnyConnection, key: &SealKey, workspace_id: &str, number: i64) -> Result<Dataset> {
    let d: Dataset = sqlx::query_as::<_, DatasetRow>(&format!(
        "SELECT {COLUMNS} FROM datasets WHERE workspace_id = $1 AND number = $2"
    ))
    .bind(workspace_id)
    .bind(number)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)?
    .try_into()?;
    checked(conn, key, workspace_id, vec![d]).await?.pop().ok_or(StoreError::NotFound)
}

/// Filters of the dataset list; `None` matches everything.
#[derive(Clone, Debug, Default)]
pub struct DatasetFilter<'a> {
    pub kinds: Option<&'a [Kind]>,
    pub name: Option<&'a str>,
    pub provenance: Option<Provenance>,
}

/// Datasets by number, after `after` (exclusive), `limit + 1` rows.
pub async fn list(
    conn: &mut AnyConnection,
    key: &SealKey,
    workspace_id: &str,
    filter: &DatasetFilter<'_>,
    after: Option<i64>,
    limit: u32,
) -> Result<Vec<Dataset>> {
    let mut sql = format!("SELECT {COLUMNS} FROM datasets WHERE workspace_id = $1 AND number > $2");
    let mut n = 2;
    let mut text_binds: Vec<String> = Vec::new();
    if let Some(kinds) = filter.kinds {
        let list: Vec<String> = kinds
            .iter()
            .map(|k| {
                n += 1;
                text_binds.push(k.as_str().to_string());
                format!("${n}")
            })
            .collect();
        sql.push_str(&format!(" AND kind IN ({})", if list.is_empty() { "NULL".into() } else { list.join(", ") }));
    }
    if let Some(name) = filter.name {
        n += 1;
        text_binds.push(name.to_string());
        sql.push_str(&format!(" AND name = ${n}"));
    }
    if let Some(p) = filter.provenance {
        n += 1;
        text_binds.push(p.as_str().to_string());
        sql.push_str(&format!(" AND provenance = ${n}"));
    }
    sql.push_str(&format!(" ORDER BY number LIMIT ${}", n + 1));
    let mut q = sqlx::query_as::<_, DatasetRow>(&sql).bind(workspace_id).bind(after.unwrap_or(0));
    for b in &text_binds {
        q = q.bind(b.as_str());
    }
    let page = q
        .bind(i64::from(limit) + 1)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(Dataset::try_from)
        .collect::<Result<Vec<_>>>()?;
    checked(conn, key, workspace_id, page).await
}

/// Every dataset of a workspace (for verification and lineage), oldest first.
pub async fn all(conn: &mut AnyConnection, key: &SealKey, workspace_id: &str) -> Result<Vec<Dataset>> {
    let all = sqlx::query_as::<_, DatasetRow>(&format!(
        "SELECT {COLUMNS} FROM datasets WHERE workspace_id = $1 ORDER BY number"
    ))
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(Dataset::try_from)
    .collect::<Result<Vec<_>>>()?;
    checked(conn, key, workspace_id, all).await
}

/// Checks a dataset's seal and that its rows still hash to its content hash.
pub async fn verify(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    workspace_id: &str,
    d: &Dataset,
) -> Result<()> {
    seals::check(conn, key, &DATASETS_SEALED, workspace_id, "id", &d.id).await?;
    let recomputed =
        super::recompute_content_hash(conn, workspace_id, d.kind, d.number, super::Sealing::of(&d.importer_version))
            .await?;
    if recomputed != d.content_hash {
        return Err(StoreError::Tampered(format!("dataset {} rows no longer match its content hash", d.number)));
    }
    Ok(())
}

/// Stores a dataset's quality report (as JSON), sealed, in the import's transaction.
pub async fn insert_quality(
    tx: &mut WriteTx,
    workspace_id: &str,
    dataset: &Dataset,
    report: &crate::rules::quality::QualityReport,
) -> Result<()> {
    let json = serde_json::to_string(report).map_err(|e| StoreError::Corrupt(format!("quality report: {e}")))?;
    let values = vec![
        Stored::Text(dataset.id.clone()),
        Stored::Text(workspace_id.to_string()),
        Stored::Integer(dataset.number),
        Stored::Text(json.clone()),
    ];
    let mac = seals::seal_of(tx.seal_key(), &DATASET_QUALITY_SEALED, values.clone())?;
    sqlx::query(
        "INSERT INTO dataset_quality (dataset_id, workspace_id, dataset_number, report, seal_mac) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&dataset.id)
    .bind(workspace_id)
    .bind(dataset.number)
    .bind(json)
    .bind(mac)
    .execute(tx.conn())
    .await?;
    seals::log(tx, &DATASET_QUALITY_SEALED, &values).await?;
    Ok(())
}

/// The quality reports of datasets by number, each seal checked; a dataset without one is absent, a report
/// edited outside Fiscus is `Tampered` (its seal) or `Corrupt` (it no longer reads as a report).
pub async fn qualities(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    workspace_id: &str,
    numbers: &[i64],
) -> Result<std::collections::HashMap<i64, crate::rules::quality::QualityReport>> {
    let mut out = std::collections::HashMap::with_capacity(numbers.len());
    for chunk in numbers.chunks(500) {
        // A report written by a release before the seal (a rolling upgrade runs both) has none: left out,
        // never served unchecked (`fiscus verify records` names it).
        let filter = format!(
            "workspace_id = $1 AND dataset_number IN ({}) AND seal_mac IS NOT NULL",
            fiscus_store::dialect::numbered(2, chunk.len())
        );
        let mut binds = vec![Stored::Text(workspace_id.to_string())];
        binds.extend(chunk.iter().map(|n| Stored::Integer(*n)));
        for row in seals::select_sealed(conn, key, &DATASET_QUALITY_SEALED, &filter, &binds).await? {
            let (number, json) = match (&row[2].1, &row[3].1) {
                (Stored::Integer(n), Stored::Text(j)) => (*n, j),
                _ => return Err(StoreError::Corrupt("dataset_quality: a row of other types".into())),
            };
            let report = serde_json::from_str(json)
                .map_err(|e| StoreError::Corrupt(format!("dataset_quality {number}: {e}")))?;
            out.insert(number, report);
        }
    }
    Ok(out)
}

/// A dataset's quality report, if it has one.
pub async fn quality(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    workspace_id: &str,
    number: i64,
) -> Result<Option<crate::rules::quality::QualityReport>> {
    Ok(qualities(conn, key, workspace_id, &[number]).await?.remove(&number))
}
