//! `GET /data/datasets`: every import with its provenance.

use axum::Json;
use axum::extract::State;
use fiscus_data_core::rules::{Kind, Provenance};
use fiscus_data_core::tables::datasets::{Dataset, DatasetFilter};
use fiscus_domain::clock::rfc3339;
use fiscus_http::list::NumberedPage;
use serde::{Deserialize, Serialize};

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiQuery;

/// A dataset: one sealed import of one file.
#[derive(Serialize, utoipa::ToSchema)]
pub struct DatasetView {
    /// Always `dataset`.
    pub object: &'static str,
    /// The dataset's integer id (the `dataset` of other operations).
    #[schema(example = 2)]
    pub id: i64,
    /// The sealed row's key.
    #[schema(example = "dst_01M876Y0Q8E1VN7S3GZ4WDXK2P")]
    pub uid: String,
    pub kind: Kind,
    #[schema(example = "us_large_caps_20_daily_adjclose")]
    pub name: String,
    /// 1 for the first import under this name; a revised file is the next version.
    pub version: i64,
    /// `observed` data was measured; `synthetic` data was generated and never feeds an operation that needs
    /// observations.
    pub provenance: Provenance,
    #[schema(example = "skfolio 1.12.2 datasets/data/sp500_dataset.csv.gz")]
    pub source: String,
    #[schema(example = "BSD-3-Clause")]
    pub licence: String,
    pub file_name: String,
    /// `sha256:` of the imported file's bytes.
    pub file_sha256: String,
    pub row_count: i64,
    /// Ledger rows already imported unchanged by an earlier dataset (not stored again).
    pub skipped_count: i64,
    /// First and last date the rows observe (none for reference data).
    #[schema(format = Date)]
    pub period_start: Option<String>,
    #[schema(format = Date)]
    pub period_end: Option<String>,
    #[schema(example = "fiscus-import/2")]
    pub importer_version: String,
    /// The column mapping and options the file was read with.
    pub mapping: serde_json::Value,
    /// `sha256:` over the dataset's stored rows (each an RFC 8785 JSON array of its values, lines sorted
    /// bytewise, each followed by a newline); `fiscus verify records` recomputes it.
    pub content_hash: String,
    /// Who imported it: `cli:local`, `cli:demo` or `application:app_…`.
    pub imported_by: String,
    /// The scope (and workspace entitlement) that serves its rows.
    pub scope: &'static str,
    pub created_at: String,
    /// What its series hold that a computation will meet (gaps against the frequency's calendar, zero and
    /// negative values, stale runs, outliers), written at import; null for kinds without series and for
    /// datasets imported before reports were written.
    pub quality: Option<fiscus_data_core::rules::quality::QualityReport>,
}

pub fn view(d: &Dataset, quality: Option<fiscus_data_core::rules::quality::QualityReport>) -> DatasetView {
    DatasetView {
        object: "dataset",
        id: d.number,
        uid: d.id.clone(),
        kind: d.kind,
        name: d.name.clone(),
        version: d.version,
        provenance: d.provenance,
        source: d.source.clone(),
        licence: d.licence.clone(),
        file_name: d.file_name.clone(),
        file_sha256: d.file_sha256.clone(),
        row_count: d.row_count,
        skipped_count: d.skipped_count,
        period_start: d.period_start.clone(),
        period_end: d.period_end.clone(),
        importer_version: d.importer_version.clone(),
        mapping: serde_json::from_str(&d.mapping).unwrap_or(serde_json::Value::Null),
        content_hash: d.content_hash.clone(),
        imported_by: d.imported_by.label(),
        scope: d.kind.scope(),
        created_at: rfc3339(d.created_at),
        quality,
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct DatasetsQuery {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Datasets after this id (exclusive; ids ascend in import order).
    #[param(minimum = 0)]
    pub after_id: Option<i64>,
    /// Only datasets of this kind.
    pub kind: Option<Kind>,
    /// Only versions of the dataset with this name.
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    pub name: Option<String>,
    pub provenance: Option<Provenance>,
}

/// The workspace's datasets with their provenance, oldest first.
///
/// Each dataset is one sealed import of one file: kind, name and version, `provenance` (`observed` or
/// `synthetic`), source and licence, the file's SHA-256, row and skipped counts, period, column mapping,
/// `content_hash`, who imported it, the scope that serves its rows and its quality report (gaps, zero and
/// negative values, stale runs and outliers of each series, written at import). `kind`, `name` and `provenance` filter
/// exactly, and every row's seal is checked before it is shown (500 `integrity_failure` otherwise). Needs
/// `data:reference:read`; datasets belong to the workspace, so its sandbox and production credentials see the
/// same list. A read: nothing is imported, changed or deleted.
#[utoipa::path(
    get,
    path = "/api/v2/data/datasets",
    params(DatasetsQuery),
    responses((status = 200, description = "A page of datasets", body = NumberedPage<DatasetView>))
)]
pub async fn get_datasets(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<DatasetsQuery>,
) -> Result<Json<NumberedPage<DatasetView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let after = super::positive("after_id", q.after_id)?;
    let name = super::name("name", q.name.as_deref())?;
    let kinds = q.kind.map(|k| [k]);
    let filter =
        DatasetFilter { kinds: kinds.as_ref().map(|k| &k[..]), name: name.as_deref(), provenance: q.provenance };
    let mut conn = state.store.read().await?;
    let rows = fiscus_data_core::tables::datasets::list(
        &mut conn,
        state.store.seal_key(),
        ctx.principal.workspace_id(),
        &filter,
        after,
        limit,
    )
    .await?;
    let page = NumberedPage::from_overfetch(rows, limit, |d| d.number);
    let numbers: Vec<i64> = page.data.iter().map(|d| d.number).collect();
    let mut reports = fiscus_data_core::tables::datasets::qualities(
        &mut conn,
        state.store.seal_key(),
        ctx.principal.workspace_id(),
        &numbers,
    )
    .await?;
    let data = page.data.iter().map(|d| view(d, reports.remove(&d.number))).collect();
    Ok(Json(NumberedPage { object: page.object, has_more: page.has_more, next_after_id: page.next_after_id, data }))
}

/// A dataset of this workspace by its integer id, which must be of one of `kinds` (404 otherwise).
pub(crate) async fn of_kind(
    conn: &mut fiscus_store::Connection,
    key: &fiscus_domain::integrity::SealKey,
    workspace_id: &str,
    number: i64,
    kinds: &[Kind],
) -> Result<Dataset, ApiError> {
    let d = fiscus_data_core::tables::datasets::get(conn, key, workspace_id, number).await?;
    if !kinds.contains(&d.kind) {
        // Asked for a dataset of another kind: there is no such dataset of this kind here.
        return Err(ApiError::not_found().detail(format!("dataset {number} holds {}", d.kind.as_str())));
    }
    Ok(d)
}
