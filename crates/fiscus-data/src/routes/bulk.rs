//! The columnar forms of the data plane's bulk reads (`fiscus_http::columnar`): each read builds its page's
//! `Table` and its headers here, so every read pages, names its dataset and renders CSV, Arrow and column
//! JSON alike.

use axum::Json;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use fiscus_http::columnar::{self, Representation, Source, Table};
use fiscus_http::problem::ApiError;
use serde::Serialize;

use super::instruments::DatasetRef;

/// The headers of a page served from `dataset`, whose next page starts after `next`.
pub(crate) fn headers(uri: &Uri, next: Option<&str>, dataset: Option<&DatasetRef>) -> HeaderMap {
    let source = dataset.map(|d| Source { dataset: d.id, version: d.version, content_hash: &d.content_hash });
    columnar::page_headers(uri, next, source)
}

/// A page in one of the columnar forms: `page` is the JSON page (serialised with its `data` member
/// replaced by the columns for `Representation::Columns`), `table` its rows.
pub(crate) fn render<P: Serialize>(
    representation: Representation,
    headers: HeaderMap,
    page: &P,
    table: Table,
) -> Result<Response, ApiError> {
    match representation {
        Representation::Json => Ok((headers, Json(page)).into_response()),
        Representation::Columns => {
            let mut value = serde_json::to_value(page).map_err(|e| {
                tracing::error!(error = %e, "a page did not serialise");
                ApiError::internal()
            })?;
            value["data"] = serde_json::Value::Object(table.json_columns());
            let body = serde_json::to_vec(&value).unwrap_or_default();
            Ok(columnar::respond(representation, headers, body))
        }
        Representation::Csv => Ok(columnar::respond(representation, headers, table.csv())),
        Representation::Arrow => {
            let body = table.arrow().map_err(|e| {
                tracing::error!(error = %e, "an Arrow stream could not be written");
                ApiError::internal()
            })?;
            Ok(columnar::respond(representation, headers, body))
        }
    }
}
