//! `POST /data/imports`: the importer over HTTP for automation (`finance-core:intake:write`), for every kind
//! of import: reference and market data (instruments, prices, corporate actions, fundamentals, economic
//! series), the finance-core and bank kinds a finance system sends (ledgers, entities, journals,
//! transactions, balances) and the investment book (portfolios, lots, positions, cash). An import records
//! what the source already observed or booked; it never posts a journal, moves cash or locks a period
//! (finance core stays read-only, as the seed requires).
//!
//! Two forms: a JSON body whose `csv` member is the file (up to 500,000 characters), or the file itself as a
//! `text/csv` body (up to 64 MiB, read as it arrives and refused with 413 past the limit) with the kind and
//! options as query parameters, as `curl --data-binary @prices.csv` sends it. The seed has no scope for
//! writing market data; `finance-core:intake:write` is its one scope that brings data in, so it covers every
//! kind (a credential without it imports nothing).
//!
//! It is long because the two forms share one set of options (column mapping, dates, delimiter, wide files,
//! new instruments), each stated as the schema states it and checked once here for both.

use axum::Json;
use axum::extract::{FromRequest, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use fiscus_data_core::rules::values::DateFormat;
use fiscus_data_core::rules::{Kind, Provenance};
use fiscus_domain::error_code::ErrorCode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::datasets::{DatasetView, view};
use crate::import::{self, Failure, ImportRequest, Mapping, Silent};
use fiscus_http::AppState;
use fiscus_http::body_limit::LargeBody;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiQuery;

/// The largest `text/csv` body an import takes.
pub const CSV_BODY_LIMIT: usize = 64 * 1024 * 1024;

/// The import's body limit, for the body limit layer (`fiscus_http::body_limit`).
pub const LARGE_BODY: LargeBody = LargeBody { path: is_import, limit: CSV_BODY_LIMIT };

fn is_import(path: &str) -> bool {
    path == "/api/v2/data/imports"
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportBody {
    pub kind: Kind,
    /// The file's name as the source system wrote it (kept in the dataset's provenance).
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f\s][^\x00-\x1f\x7f-\x9f]*$",
        example = "statement-2024-02.csv"
    )]
    pub file_name: String,
    /// The CSV: a header of the kind's field names (instruments `symbol,name,asset_class,currency[,…]`;
    /// prices `symbol,date,close[,open,high,low,adj_close,volume]`; economics `date,<series>…`; ledgers
    /// `code,name,currency`; entities `code,name,ledger,currency[,status,country]`; journals
    /// `entry,date,ledger,entity,account,debit,credit,currency[,description]`; transactions
    /// `account,id,booking_date,amount,currency[,value_date,counterparty,description,reference]`; balances
    /// `account,date,type,amount,currency`; `fiscus import --help` lists every kind's), comma-separated unless
    /// `delimiter` says otherwise, dates `YYYY-MM-DD`, `M/D/YYYY`, `YYYYMM` or as `date_format` says.
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
    /// The dates' format: `iso`, `mdy`, `yyyymm`, `year+quarter`, or a strftime-style pattern naming a year,
    /// a month and a day (`%b %-d %Y` reads `Jan 1 2000`); a pattern that does not (or names a field
    /// strftime does not have) is 422 naming what is wrong. Detected from the first date when not given.
    #[schema(
        min_length = 1,
        max_length = 64,
        pattern = r"^(iso|mdy|yyyymm|year\+quarter|[^%\x00-\x1f]*%[^\x00-\x1f]*)$",
        example = "%b %-d %Y"
    )]
    pub date_format: Option<String>,
    /// The field separator, one ASCII character or `tab` (default `,`).
    #[schema(min_length = 1, max_length = 3, pattern = r"^([ -~]|tab)$", example = ";")]
    pub delimiter: Option<String>,
    /// Prices of one instrument without a symbol column: its symbol.
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "CL")]
    pub symbol: Option<String>,
    /// Which header holds which of the kind's fields, for headers not named as the field (the command line's
    /// `--map FIELD=HEADER`): `{"close": "Close/Last", "date": "Date"}`. Headers are matched as the importer
    /// matches its own names (case, spaces and punctuation aside); `{"date": "year+quarter"}` builds
    /// quarterly dates from two columns. The names are fields of some kind (the schema lists them); one the
    /// file's `kind` does not have is 409 `conflict` naming it.
    #[schema(
        value_type = Option<BTreeMap<String, fiscus_domain::fields::Text<1, 200>>>,
        example = json!({"close": "Close/Last", "date": "Date"})
    )]
    pub columns: Option<BTreeMap<String, String>>,
    /// Prices in wide form (a date column, then one column per symbol) holding this field.
    pub wide: Option<WideField>,
    /// Economics: the prefix of each series' key (its normalised header follows).
    #[schema(max_length = 32, pattern = "^[a-z0-9._-]*$", example = "fred.")]
    pub key_prefix: Option<String>,
    /// Economics: the units of every series in the file.
    #[schema(
        min_length = 1,
        max_length = 64,
        pattern = r"^[^\x00-\x1f\x7f-\x9f\s][^\x00-\x1f\x7f-\x9f]*$",
        example = "percent"
    )]
    pub units: Option<String>,
    /// Prices: create the instruments the file names and the workspace lacks (an instruments dataset of
    /// their own, named by their symbols, its source naming this file) instead of refusing their rows.
    pub create_instruments: Option<bool>,
    /// With `create_instruments`: their asset class (default `equity`).
    pub instrument_class: Option<AssetClass>,
    /// With `create_instruments`: their currency (default `USD`).
    #[schema(value_type = Option<fiscus_domain::fields::CurrencyCode>, inline, example = "USD")]
    pub instrument_currency: Option<String>,
}

/// An instrument's asset class.
#[derive(Clone, Copy, Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssetClass {
    Equity,
    Etf,
    Index,
    Fund,
    Bond,
    Commodity,
    Fx,
    Crypto,
}

impl AssetClass {
    fn as_str(self) -> &'static str {
        match self {
            AssetClass::Equity => "equity",
            AssetClass::Etf => "etf",
            AssetClass::Index => "index",
            AssetClass::Fund => "fund",
            AssetClass::Bond => "bond",
            AssetClass::Commodity => "commodity",
            AssetClass::Fx => "fx",
            AssetClass::Crypto => "crypto",
        }
    }
}

/// The field a wide prices file holds.
#[derive(Clone, Copy, Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WideField {
    AdjClose,
    Close,
}

/// The kind and options of a `text/csv` import, as query parameters. With a JSON body they are members of the
/// body; a parameter fills a member the body leaves out, and a member the body has wins.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct CsvImportParams {
    /// The kind of rows (required with a `text/csv` body).
    pub kind: Option<Kind>,
    /// The file's name as the source wrote it (required with a `text/csv` body).
    #[param(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f\s][^\x00-\x1f\x7f-\x9f]*$",
        example = "prices.csv"
    )]
    pub file_name: Option<String>,
    /// Where the data comes from (required with a `text/csv` body).
    #[param(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f\s][^\x00-\x1f\x7f-\x9f]*$",
        example = "exchange end-of-day file"
    )]
    pub source: Option<String>,
    /// Its licence (required with a `text/csv` body).
    #[param(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f\s][^\x00-\x1f\x7f-\x9f]*$",
        example = "proprietary"
    )]
    pub licence: Option<String>,
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    pub dataset: Option<String>,
    pub provenance: Option<Provenance>,
    pub dry_run: Option<bool>,
    #[param(
        min_length = 1,
        max_length = 64,
        pattern = r"^(iso|mdy|yyyymm|year\+quarter|[^%\x00-\x1f]*%[^\x00-\x1f]*)$"
    )]
    pub date_format: Option<String>,
    #[param(min_length = 1, max_length = 3, pattern = r"^([ -~]|tab)$")]
    pub delimiter: Option<String>,
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    pub symbol: Option<String>,
    pub wide: Option<WideField>,
    #[param(max_length = 32, pattern = "^[a-z0-9._-]*$")]
    pub key_prefix: Option<String>,
    #[param(min_length = 1, max_length = 64, pattern = r"^[^\x00-\x1f\x7f-\x9f\s][^\x00-\x1f\x7f-\x9f]*$")]
    pub units: Option<String>,
    pub create_instruments: Option<bool>,
    pub instrument_class: Option<AssetClass>,
    #[param(value_type = Option<fiscus_domain::fields::CurrencyCode>, inline)]
    pub instrument_currency: Option<String>,
}

impl CsvImportParams {
    /// With a JSON body: the options the body leaves out, from the query (a member the body has wins).
    fn fill(self, body: &mut ImportBody) {
        body.dataset = body.dataset.take().or(self.dataset);
        body.provenance = body.provenance.or(self.provenance);
        body.dry_run = body.dry_run.or(self.dry_run);
        body.date_format = body.date_format.take().or(self.date_format);
        body.delimiter = body.delimiter.take().or(self.delimiter);
        body.symbol = body.symbol.take().or(self.symbol);
        body.wide = body.wide.or(self.wide);
        body.key_prefix = body.key_prefix.take().or(self.key_prefix);
        body.units = body.units.take().or(self.units);
        body.create_instruments = body.create_instruments.or(self.create_instruments);
        body.instrument_class = body.instrument_class.or(self.instrument_class);
        body.instrument_currency = body.instrument_currency.take().or(self.instrument_currency);
    }

    /// The body's members from the query: the required ones missing are field errors.
    fn into_body(self, bytes: Vec<u8>) -> Result<(ImportBody, Vec<u8>), ApiError> {
        let mut missing = Vec::new();
        let mut need = |field: &'static str, v: Option<String>| {
            v.unwrap_or_else(|| {
                missing.push((field, "is required with a text/csv body".to_string()));
                String::new()
            })
        };
        let file_name = need("file_name", self.file_name);
        let source = need("source", self.source);
        let licence = need("licence", self.licence);
        if self.kind.is_none() {
            missing.push(("kind", "is required with a text/csv body".to_string()));
        }
        if !missing.is_empty() {
            // They are query parameters here: 422 `invalid_parameter`, as any query's.
            return Err(missing
                .into_iter()
                .fold(ApiError::new(ErrorCode::InvalidParameter), |e, (field, m)| e.field(field, m)));
        }
        let body = ImportBody {
            kind: self.kind.unwrap_or(Kind::Prices),
            file_name,
            csv: String::new(),
            dataset: self.dataset,
            source,
            licence,
            provenance: self.provenance,
            dry_run: self.dry_run,
            date_format: self.date_format,
            delimiter: self.delimiter,
            symbol: self.symbol,
            columns: None,
            wide: self.wide,
            key_prefix: self.key_prefix,
            units: self.units,
            create_instruments: self.create_instruments,
            instrument_class: self.instrument_class,
            instrument_currency: self.instrument_currency,
        };
        Ok((body, bytes))
    }
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
    pub quality: Option<fiscus_data_core::rules::quality::QualityReport>,
    pub rows: i64,
    /// Rows already imported unchanged by an earlier dataset.
    pub skipped: i64,
    #[schema(format = Date)]
    pub period_start: Option<String>,
    #[schema(format = Date)]
    pub period_end: Option<String>,
}

/// Imports one CSV file of any kind into a dataset (idempotent by the file's content).
///
/// For automation: reference and market data, economic series, finance-core and bank data, the investment
/// book, as CSV with the canonical field names: in a JSON body (`csv`), or as the `text/csv` body itself with
/// `kind`, `file_name`, `source`, `licence` and the options as query parameters (up to 64 MiB; 413 past it).
/// The file is hashed, parsed and checked whole (journals must balance in each currency; a row imported
/// before with other values is refused; a price of an instrument not imported is refused, naming every
/// unknown symbol) before anything is written, then its rows, the sealed dataset, its quality report and an
/// audit event land in one transaction; the same file again (by SHA-256) is `already_imported`, and
/// `dry_run` writes nothing. Needs `finance-core:intake:write`. It records what the source observed or
/// booked: it never posts a journal, moves cash, locks a period or executes a Financial Action.
#[utoipa::path(
    post,
    path = "/api/v2/data/imports",
    params(CsvImportParams),
    request_body(content(
        (ImportBody = "application/json", example = json!({
            "kind": "ledgers", "file_name": "ledgers.csv", "csv": "code,name,currency\nGL-UK,UK General Ledger,GBP\n",
            "source": "ERP general ledger export", "licence": "proprietary"
        })),
        (String = "text/csv", example = json!("symbol,date,close\nCL,2024-01-02,70.38\n"))
    )),
    responses(
        (status = 201, description = "Imported", body = ImportView),
        (status = 200, description = "Already imported (same file), or checked by a dry run: nothing written", body = ImportView),
        (status = 409, description = "The file's rows do not read as its kind, or a row imported before had other values (`file_rejected`, each line in `errors`); nothing is written"),
        (status = 413, description = "A `text/csv` body over 64 MiB (`payload_too_large`); nothing is written"),
        (status = 415, description = "A body that is neither JSON nor `text/csv` (`unsupported_media_type`)"),
        (status = 422, description = "Bad input: a member or parameter out of its bounds, or a `text/csv` body without its required parameters")
    )
)]
pub async fn post_import(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<CsvImportParams>,
    req: Request,
) -> Result<Response, ApiError> {
    let essence = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|ct| ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    let (body, bytes) = if essence.as_deref() == Some("text/csv") {
        let bytes = axum::body::to_bytes(req.into_body(), CSV_BODY_LIMIT)
            .await
            .map_err(|_| ApiError::new(ErrorCode::PayloadTooLarge).detail("a text/csv import is at most 64 MiB"))?;
        // An empty file is refused by the importer as any file's content is (409 `file_rejected`, line 1).
        q.into_body(bytes.to_vec())?
    } else {
        let ApiJson(mut body) = ApiJson::<ImportBody>::from_request(req, &state).await?;
        q.fill(&mut body);
        let bytes = std::mem::take(&mut body.csv).into_bytes();
        (body, bytes)
    };
    import_file(ctx, state, body, bytes).await
}

async fn import_file(ctx: Ctx, state: AppState, mut body: ImportBody, bytes: Vec<u8>) -> Result<Response, ApiError> {
    let mut invalid = Vec::new();
    for (field, value) in [("file_name", &body.file_name), ("source", &body.source), ("licence", &body.licence)] {
        if value.trim().is_empty() || value.chars().count() > 200 || value.chars().any(char::is_control) {
            invalid.push((field, "1 to 200 characters, not blank, no control characters".to_string()));
        }
    }
    if let Some(d) = body.dataset.as_deref()
        && !fiscus_data_core::rules::is_name(d)
    {
        invalid.push(("dataset", "1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit".to_string()));
    }
    let delimiter = match body.delimiter.as_deref() {
        None => b',',
        Some("tab") => b'\t',
        Some(d) if d.len() == 1 && d.is_ascii() && !d.as_bytes()[0].is_ascii_control() => d.as_bytes()[0],
        Some(_) => {
            invalid.push(("delimiter", "one ASCII character, or `tab`".to_string()));
            b','
        }
    };
    let date_format = match body.date_format.as_deref().map(DateFormat::parse_name) {
        None => None,
        Some(Ok(f)) => Some(f),
        Some(Err(e)) => {
            invalid.push(("date_format", e));
            None
        }
    };
    let columns = body.columns.take().unwrap_or_default();
    let mut other_kinds = Vec::new();
    for (field, header) in &columns {
        if !import::all_fields().contains(&field.as_str()) {
            invalid.push(("columns", format!("`{field}` is not a field of any kind")));
        } else if !import::fields(body.kind).iter().any(|(f, _)| f == field) {
            other_kinds.push(field.clone());
        }
        if !fiscus_domain::fields::text_ok(header, 1, 200) {
            invalid.push(("columns", format!("the header for `{field}` must be 1 to 200 characters of text")));
        }
    }
    if body.symbol.as_deref().is_some_and(|s| !fiscus_data_core::rules::is_name(s)) {
        invalid.push(("symbol", "1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit".to_string()));
    }
    if body.key_prefix.as_deref().is_some_and(|p| {
        p.len() > 32 || !p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b".-_".contains(&b))
    }) {
        invalid.push(("key_prefix", "at most 32 of a-z 0-9 . _ -".to_string()));
    }
    if body.units.as_deref().is_some_and(|u| !fiscus_domain::fields::text_ok(u, 1, 64)) {
        invalid.push(("units", "1 to 64 characters of text, not blank".to_string()));
    }
    let create_instruments = match body.create_instruments {
        Some(true) => match import::new_instruments(
            body.instrument_class.map_or("equity", AssetClass::as_str),
            body.instrument_currency.as_deref().unwrap_or("USD"),
        ) {
            Ok(n) => Some(n),
            Err((field, e)) => {
                invalid.push((if field == "currency" { "instrument_currency" } else { "instrument_class" }, e));
                None
            }
        },
        _ => None,
    };
    if !invalid.is_empty() {
        return Err(ApiError::invalid_fields(invalid));
    }
    // A field of another kind than the file's: the two members disagree, which no schema states.
    if !other_kinds.is_empty() {
        let names: Vec<&str> = import::fields(body.kind).iter().map(|(f, _)| *f).collect();
        let detail = format!(
            "`columns` maps {} that {} files do not have; their fields are {}",
            other_kinds.join(", "),
            body.kind.as_str(),
            names.join(", ")
        );
        return Err(other_kinds.iter().fold(ApiError::new(ErrorCode::Conflict).detail(detail), |e, f| {
            e.field("columns", format!("`{f}` is not a field of {}", body.kind.as_str()))
        }));
    }
    let mapping = Mapping {
        columns,
        create_instruments,
        delimiter,
        date_format,
        symbol: body.symbol,
        wide: body.wide.map(|w| match w {
            WideField::AdjClose => "adj_close".to_string(),
            WideField::Close => "close".to_string(),
        }),
        key_prefix: body.key_prefix.unwrap_or_default(),
        units: body.units.unwrap_or_default(),
        ..Mapping::default()
    };
    let req = ImportRequest {
        kind: body.kind,
        file_name: body.file_name,
        input: bytes.into(),
        dataset: body.dataset,
        source: body.source,
        licence: body.licence,
        provenance: body.provenance.unwrap_or(Provenance::Observed),
        mapping,
        dry_run: body.dry_run.unwrap_or(false),
    };
    // Parsing and checking a file of up to 64 MiB is seconds of CPU: it runs on the compute pool's inline
    // threads, one at a time per workspace (ARCHITECTURE.md invariant 16), never on a runtime worker that
    // every tenant's requests share. The import's store calls are driven from that thread.
    let (store, caller, workspace) = (state.store.clone(), ctx.caller(), ctx.principal.workspace_id().to_string());
    let runtime = tokio::runtime::Handle::current();
    let on_pool = state
        .compute
        .run_inline(ctx.principal.workspace_id(), move || {
            runtime.block_on(import::import(&store, &caller, &workspace, req, &Silent))
        })
        .await
        .map_err(|_| ApiError::internal())?;
    let outcome = match on_pool {
        Ok(o) => o,
        // The schema allows any text as the file; rows that do not read as the kind are the file's content,
        // so 409 `file_rejected` with each line's error, not 422.
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

#[cfg(test)]
mod tests {
    use super::AssetClass;
    use fiscus_data_core::rules::records::ASSET_CLASSES;

    /// The document's enum is the importer's list (`ASSET_CLASSES`), no more and no fewer.
    #[test]
    fn the_asset_classes_offered_are_the_ones_an_instrument_may_have() {
        let all = [
            AssetClass::Equity,
            AssetClass::Etf,
            AssetClass::Index,
            AssetClass::Fund,
            AssetClass::Bond,
            AssetClass::Commodity,
            AssetClass::Fx,
            AssetClass::Crypto,
        ];
        assert_eq!(all.map(AssetClass::as_str), ASSET_CLASSES);
    }
}
