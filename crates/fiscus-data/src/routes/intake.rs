//! `POST /data/imports`: the importer over HTTP for automation (`finance-core:intake:write`), for the kinds
//! a finance system sends: general ledgers, entities, journals, bank transactions and balances. An import
//! records what the source system already booked; it never posts a journal, moves cash or locks a period
//! (finance core stays read-only, as the seed requires). The CSV travels in the JSON body (at most the
//! service's body limit) with the canonical field names as its header; other layouts go through
//! `fiscus import` and its column mapping.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use fiscus_domain::data::{Kind, Provenance};
use fiscus_domain::error_code::ErrorCode;
use serde::{Deserialize, Serialize};

use super::datasets::{DatasetView, view};
use crate::import::{self, Failure, ImportRequest, Mapping, Silent};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;

/// The kinds a finance system may send over HTTP.
#[derive(Clone, Copy, Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntakeKind {
    Ledgers,
    Entities,
    Journals,
    Transactions,
    Balances,
}

impl IntakeKind {
    fn kind(self) -> Kind {
        match self {
            IntakeKind::Ledgers => Kind::Ledgers,
            IntakeKind::Entities => Kind::Entities,
            IntakeKind::Journals => Kind::Journals,
            IntakeKind::Transactions => Kind::Transactions,
            IntakeKind::Balances => Kind::Balances,
        }
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportBody {
    pub kind: IntakeKind,
    /// The file's name as the source system wrote it (kept in the dataset's provenance).
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f\s][^\x00-\x1f\x7f-\x9f]*$",
        example = "statement-2024-02.csv"
    )]
    pub file_name: String,
    /// The CSV: a header of the kind's field names (ledgers `code,name,currency`; entities
    /// `code,name,ledger,currency[,status,country]`; journals
    /// `entry,date,ledger,entity,account,debit,credit,currency[,description]`; transactions
    /// `account,id,booking_date,amount,currency[,value_date,counterparty,description,reference]`; balances
    /// `account,date,type,amount,currency`), comma-separated, dates `YYYY-MM-DD`, `M/D/YYYY` or `YYYYMM`.
    #[schema(min_length = 1, max_length = 500000, example = "code,name,currency\nGL-UK,UK General Ledger,GBP\n")]
    pub csv: String,
    /// The dataset's name (a new version when it exists); the file's name otherwise.
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "bank_statements")]
    pub dataset: Option<String>,
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f\s][^\x00-\x1f\x7f-\x9f]*$",
        example = "ERP general ledger export"
    )]
    pub source: String,
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f\s][^\x00-\x1f\x7f-\x9f]*$",
        example = "proprietary"
    )]
    pub licence: String,
    /// `observed` (default) or `synthetic`.
    pub provenance: Option<Provenance>,
    /// Check everything, write nothing.
    pub dry_run: Option<bool>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ImportView {
    /// Always `import`.
    pub object: &'static str,
    /// `imported` (201); `already_imported`: the same file was imported before, nothing written (200);
    /// `checked`: a dry run, nothing written (200).
    pub status: &'static str,
    /// The dataset created or found (none for a dry run).
    pub dataset: Option<DatasetView>,
    /// The file's quality report (also for a dry run): each series' gaps, zero and negative values, stale
    /// runs and outliers; null for kinds without series. Nothing is dropped because of it.
    pub quality: Option<fiscus_domain::data::quality::QualityReport>,
    pub rows: i64,
    /// Rows already imported unchanged by an earlier dataset.
    pub skipped: i64,
    #[schema(format = Date)]
    pub period_start: Option<String>,
    #[schema(format = Date)]
    pub period_end: Option<String>,
}

/// Imports one CSV file of finance-core or bank data into a dataset (idempotent by the file's content).
///
/// For automation from a finance system: ledgers, entities, journals, bank transactions or balances as CSV
/// with the canonical field names. The file is hashed, parsed and checked whole (journals must balance in
/// each currency; a row imported before with other values is refused) before anything is written, then its
/// rows, the sealed dataset and an audit event land in one transaction; the same file again (by SHA-256) is
/// `already_imported`, and `dry_run` writes nothing. Needs `finance-core:intake:write`. It records what the
/// source booked: it never posts a journal, moves cash, locks a period or executes a Financial Action.
#[utoipa::path(
    post,
    path = "/api/v2/data/imports",
    request_body(content = ImportBody, example = json!({
        "kind": "ledgers", "file_name": "ledgers.csv", "csv": "code,name,currency\nGL-UK,UK General Ledger,GBP\n",
        "source": "ERP general ledger export", "licence": "proprietary"
    })),
    responses(
        (status = 201, description = "Imported", body = ImportView),
        (status = 200, description = "Already imported (same file), or checked by a dry run: nothing written", body = ImportView),
        (status = 409, description = "The file's rows do not read as its kind, or a row imported before had other values (`file_rejected`, each line in `errors`); nothing is written")
    )
)]
pub async fn post_import(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ImportBody>,
) -> Result<Response, ApiError> {
    let mut invalid = Vec::new();
    for (field, value) in [("file_name", &body.file_name), ("source", &body.source), ("licence", &body.licence)] {
        if value.trim().is_empty() || value.chars().count() > 200 || value.chars().any(char::is_control) {
            invalid.push((field, "1 to 200 characters, not blank, no control characters".to_string()));
        }
    }
    if let Some(d) = body.dataset.as_deref()
        && !fiscus_domain::data::is_name(d)
    {
        invalid.push(("dataset", "1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit".to_string()));
    }
    if !invalid.is_empty() {
        return Err(ApiError::invalid_fields(invalid));
    }
    let req = ImportRequest {
        kind: body.kind.kind(),
        file_name: body.file_name,
        bytes: body.csv.into_bytes(),
        dataset: body.dataset,
        source: body.source,
        licence: body.licence,
        provenance: body.provenance.unwrap_or(Provenance::Observed),
        mapping: Mapping { delimiter: b',', ..Mapping::default() },
        dry_run: body.dry_run.unwrap_or(false),
    };
    let outcome = match import::import(&state.store, &ctx.caller(), ctx.principal.workspace_id(), req, &Silent).await {
        Ok(o) => o,
        // The schema allows any text as `csv`; rows that do not read as the kind are the file's content, so
        // 409 `file_rejected` with each line's error, not 422.
        Err(Failure::Invalid { errors, .. }) => {
            return Err(errors
                .iter()
                .fold(ApiError::new(ErrorCode::FileRejected), |e, line| e.field("csv", line.to_string())));
        }
        Err(Failure::Store(e)) => return Err(e.into()),
    };
    let d = &outcome.dataset;
    let (status, code) = match (outcome.dry_run, outcome.created) {
        (true, _) => ("checked", StatusCode::OK),
        (false, true) => ("imported", StatusCode::CREATED),
        (false, false) => ("already_imported", StatusCode::OK),
    };
    let body = ImportView {
        object: "import",
        status,
        dataset: (!outcome.dry_run).then(|| view(d, outcome.quality.clone())),
        quality: outcome.quality.clone(),
        rows: d.row_count,
        skipped: d.skipped_count,
        period_start: d.period_start.clone(),
        period_end: d.period_end.clone(),
    };
    Ok((code, Json(body)).into_response())
}
