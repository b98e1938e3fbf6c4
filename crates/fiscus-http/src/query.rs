//! Query and path parameters, with problem+json errors (422 `invalid_parameter`) instead of the framework's
//! plain-text rejections.

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::pagination::{PageRequest, parse_page};
use serde::de::DeserializeOwned;
use std::collections::HashMap;

use crate::document::ApiDocument;
use crate::problem::ApiError;
use crate::state::AppState;

/// Query parameters parsed into `T` (which should deny unknown fields).
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned> FromRequestParts<AppState> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let query = whole_numbers(document(state), route(parts), parts.uri.query().unwrap_or(""));
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize::<_, T>(de).map(ApiQuery).map_err(|err| {
            let field = err.path().to_string();
            let field = if field == "." || field == "?" { String::from("query") } else { field };
            // The parser's own wording ("Failed to deserialize query string…") is not shown; the field is.
            ApiError::new(ErrorCode::InvalidParameter).field(field, "is not an acceptable value")
        })
    }
}

/// The query with each integer parameter's value written as JSON Schema reads it: `2.0` is the integer 2
/// (an `integer` is any number with a zero fractional part), so `2.0` and `2` select the same rows. Only the
/// parameters the document types `integer` on the matched path are touched.
fn whole_numbers<'q>(api: Option<&ApiDocument>, route: &str, query: &'q str) -> std::borrow::Cow<'q, str> {
    let whole = |name: &str, value: &str| {
        api.is_some_and(|api| api.is_integer(route, name))
            && value.split_once('.').is_some_and(|(int, frac)| {
                let digits = int.strip_prefix('-').unwrap_or(int);
                !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && !frac.is_empty()
                    && frac.bytes().all(|b| b == b'0')
            })
    };
    if !form_urlencoded::parse(query.as_bytes()).any(|(n, v)| whole(&n, &v)) {
        return std::borrow::Cow::Borrowed(query);
    }
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        match value.split_once('.').filter(|_| whole(&name, &value)) {
            Some((int, _)) => out.append_pair(&name, int),
            None => out.append_pair(&name, &value),
        };
    }
    std::borrow::Cow::Owned(out.finish())
}

/// The service's document, as the state hands it down (none before the router is built: no parameter is then
/// read as an integer, so `2.0` stays what it is written as).
fn document(state: &AppState) -> Option<&ApiDocument> {
    state.http.api.get().map(|a| a.as_ref())
}

/// The route template the request matched (`/api/v2/investment/risk`), as the document names paths.
fn route(parts: &Parts) -> &str {
    parts.extensions.get::<axum::extract::MatchedPath>().map_or("", |m| m.as_str())
}

/// One behaviour for every operation: a query parameter the operation does not document, or one given
/// twice, is refused with 422 naming it (a misspelt filter silently ignored would return the wrong rows).
pub fn check_documented(api: &ApiDocument, operation_id: &str, query: Option<&str>) -> Result<(), ApiError> {
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return Ok(());
    };
    let known = api.query_parameters(operation_id);
    let mut seen: Vec<String> = Vec::new();
    for (name, _) in form_urlencoded::parse(query.as_bytes()) {
        if !known.iter().any(|k| *k == name) {
            return Err(ApiError::new(ErrorCode::InvalidParameter).field(name.into_owned(), "unknown query parameter"));
        }
        if seen.iter().any(|s| *s == name) {
            return Err(ApiError::new(ErrorCode::InvalidParameter).field(name.into_owned(), "given more than once"));
        }
        seen.push(name.into_owned());
    }
    Ok(())
}

/// Path parameters parsed into `T`.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(v)| ApiPath(v))
            .map_err(|e| ApiError::new(ErrorCode::InvalidParameter).detail(e.body_text()))
    }
}

/// `limit` and `after_id`, validated (see `fiscus_domain::pagination`), plus the remaining parameters for
/// the endpoint's own filters. Parameters an endpoint does not know are refused by that endpoint.
pub struct ListParams {
    pub page: PageRequest,
    pub rest: HashMap<String, String>,
}

impl ListParams {
    /// Refuses any parameter other than the page parameters and `allowed` filters.
    pub fn only(&self, allowed: &[&str]) -> Result<(), ApiError> {
        let mut unknown: Vec<&String> = self.rest.keys().filter(|k| !allowed.contains(&k.as_str())).collect();
        unknown.sort();
        match unknown.first() {
            Some(name) => {
                Err(ApiError::new(ErrorCode::InvalidParameter).field(name.as_str(), "unknown query parameter"))
            }
            None => Ok(()),
        }
    }
}

impl FromRequestParts<AppState> for ListParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let query = whole_numbers(document(state), route(parts), parts.uri.query().unwrap_or(""));
        let mut raw: HashMap<String, String> = serde_urlencoded::from_str(&query)
            .map_err(|e| ApiError::new(ErrorCode::InvalidParameter).detail(format!("the query cannot be read: {e}")))?;
        let limit = raw.remove("limit");
        let after_id = raw.remove("after_id");
        let page = parse_page(limit.as_deref(), after_id.as_deref())
            .map_err(|(field, message)| ApiError::new(ErrorCode::InvalidParameter).field(field, message))?;
        Ok(ListParams { page, rest: raw })
    }
}

/// A `limit` parameter of an endpoint's own query type, checked by the one page rule
/// (`fiscus_domain::pagination`: [`ITEMS`](fiscus_domain::pagination::ITEMS) for objects,
/// [`POINTS`](fiscus_domain::pagination::POINTS) for a series' points); 422 naming it otherwise.
pub fn limit(raw: Option<impl Into<i64>>, size: fiscus_domain::pagination::PageSize) -> Result<u32, ApiError> {
    size.check(raw.map(Into::into))
        .map_err(|(field, message)| ApiError::new(ErrorCode::InvalidParameter).field(field, message))
}

/// An `after_id` cursor: absent, or an id with `prefix` (e.g. `wfr`); anything else is refused naming what it
/// must be (`what`, e.g. "a run").
pub fn after_id<'a>(raw: Option<&'a str>, prefix: &str, what: &str) -> Result<Option<&'a str>, ApiError> {
    match raw {
        Some(a) if !fiscus_domain::ids::is_id_of(prefix, a) => {
            Err(ApiError::new(ErrorCode::InvalidParameter).field("after_id", format!("must be {what} id ({prefix}_…)")))
        }
        other => Ok(other),
    }
}
