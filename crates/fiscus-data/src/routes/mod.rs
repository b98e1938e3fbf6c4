//! The data plane's reads: datasets with their provenance, instruments and their prices, corporate actions
//! and fundamentals, economic series, finance-core entities and journals, bank transactions and balances.
//! Each operation's scope is the workspace's entitlement to that family of data (the auth layer answers 403
//! naming what is missing); every query is scoped to the caller's workspace.

mod bulk;
pub mod datasets;
pub mod economics;
pub mod features;
pub mod finance_core;
pub mod financial;
pub mod instruments;
pub mod intake;
pub mod lineage;

use fiscus_domain::error_code::ErrorCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use fiscus_http::AppState;
use fiscus_http::problem::ApiError;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(datasets::get_datasets))
        .routes(routes!(instruments::get_instruments))
        .routes(routes!(instruments::get_instrument))
        .routes(routes!(instruments::get_prices))
        .routes(routes!(instruments::get_corporate_actions))
        .routes(routes!(instruments::get_fundamentals))
        .routes(routes!(economics::get_series_list))
        .routes(routes!(economics::get_series))
        .routes(routes!(economics::get_observations))
        .routes(routes!(finance_core::get_entities))
        .routes(routes!(finance_core::get_journals))
        .routes(routes!(financial::get_transactions))
        .routes(routes!(financial::get_snapshots))
        .routes(routes!(features::get_features))
        .routes(routes!(features::get_feature))
        .routes(routes!(features::get_feature_values))
}

/// The data plane's operations that write (imports, lineage exports): they go behind the idempotency layer
/// with the other writing areas.
pub fn writing_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(intake::post_import))
        .routes(routes!(lineage::post_lineage_export))
        .routes(routes!(lineage::get_lineage_export))
}

/// An optional `YYYY-MM-DD` parameter (any calendar date: a bound far outside the data is simply empty).
pub(crate) fn date(name: &'static str, raw: Option<&str>) -> Result<Option<String>, ApiError> {
    match raw {
        None => Ok(None),
        Some(s)
            if s.len() == 10
                && time::Date::parse(s, time::macros::format_description!("[year]-[month]-[day]")).is_ok() =>
        {
            Ok(Some(s.to_string()))
        }
        Some(_) => Err(ApiError::new(ErrorCode::InvalidParameter).field(name, "must be a date YYYY-MM-DD")),
    }
}

/// A filter matched exactly against stored text, checked against the pattern the document states for it
/// (`allowed` bytes, `1..=max` long): a well-formed value that matches nothing finds nothing.
pub(crate) fn token<'a>(
    field: &'static str,
    raw: Option<&'a str>,
    max: usize,
    allowed: fn(u8) -> bool,
) -> Result<Option<&'a str>, ApiError> {
    match raw {
        Some(s) if s.is_empty() || s.len() > max || !s.bytes().all(allowed) => {
            Err(ApiError::new(ErrorCode::InvalidParameter).field(field, "is not of the documented form"))
        }
        other => Ok(other),
    }
}

/// An object id cursor (`^[A-Za-z0-9_-]{1,64}$`, the list rule of `fiscus_domain::pagination`).
pub(crate) fn object_cursor(raw: Option<&str>) -> Result<Option<&str>, ApiError> {
    token("after_id", raw, 64, |b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A three-letter currency filter (`^[A-Z]{3}$`).
pub(crate) fn currency(raw: Option<&str>) -> Result<Option<&str>, ApiError> {
    match raw {
        Some(c) if c.len() != 3 => {
            Err(ApiError::new(ErrorCode::InvalidParameter).field("currency", "must be three capital letters"))
        }
        other => token("currency", other, 3, |b| b.is_ascii_uppercase()),
    }
}

/// `start` and `end` (inclusive dates). An `end` before `start` is an empty window, not an error: a read
/// answers what lies in it (nothing), the way a filter does; no JSON Schema could state the refusal.
pub(crate) fn range(start: Option<&str>, end: Option<&str>) -> Result<(Option<String>, Option<String>), ApiError> {
    Ok((date("start", start)?, date("end", end)?))
}

/// A positive integer id parameter (`after_id`, `dataset`, `general_ledger_id`).
pub(crate) fn positive(name: &'static str, raw: Option<i64>) -> Result<Option<i64>, ApiError> {
    match raw {
        Some(n) if n < 0 => {
            Err(ApiError::new(ErrorCode::InvalidParameter).field(name, "must be a non-negative integer"))
        }
        other => Ok(other),
    }
}

/// A name-like filter (symbol, code, key, account): the one shape they are stored in, so anything else
/// is refused rather than searched for.
pub(crate) fn name(field: &'static str, raw: Option<&str>) -> Result<Option<String>, ApiError> {
    match raw {
        None => Ok(None),
        Some(s) if fiscus_data_core::rules::is_name(s) => Ok(Some(s.to_string())),
        Some(_) => Err(ApiError::new(ErrorCode::InvalidParameter).field(field, "must be 1 to 64 of A-Z a-z 0-9 . _ -")),
    }
}

/// A stored decimal text as a JSON number (stored values are the shortest text of a finite double).
pub(crate) fn number(s: &str) -> f64 {
    s.parse().unwrap_or(f64::NAN)
}

/// The `dataset` parameter: an integer id from 1.
pub(crate) fn dataset_param(raw: Option<i64>) -> Result<Option<i64>, ApiError> {
    match raw {
        Some(n) if n < 1 => {
            Err(ApiError::new(ErrorCode::InvalidParameter).field("dataset", "must be a dataset id (1 or more)"))
        }
        other => Ok(other),
    }
}
