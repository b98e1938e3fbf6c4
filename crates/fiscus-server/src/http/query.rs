//! Query and path parameters, with problem+json errors (422 `invalid_parameter`) instead of the framework's
//! plain-text rejections.

use axum::extract::{FromRequestParts, Path, Query};
use axum::http::request::Parts;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::pagination::{PageRequest, parse_page};
use serde::de::DeserializeOwned;
use std::collections::HashMap;

use crate::http::problem::ApiError;

/// Query parameters parsed into `T` (which should deny unknown fields).
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| ApiQuery(v))
            .map_err(|e| ApiError::new(ErrorCode::InvalidParameter).detail(e.body_text()))
    }
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

impl<S: Send + Sync> FromRequestParts<S> for ListParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Query(mut raw) = Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::new(ErrorCode::InvalidParameter).detail(e.body_text()))?;
        let limit = raw.remove("limit");
        let after_id = raw.remove("after_id");
        let page = parse_page(limit.as_deref(), after_id.as_deref())
            .map_err(|(field, message)| ApiError::new(ErrorCode::InvalidParameter).field(field, message))?;
        Ok(ListParams { page, rest: raw })
    }
}
