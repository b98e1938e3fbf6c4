//! A console form, read as every form body is (`http::form`) and refused with an error page a person reads.

use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::Response;
use serde::de::DeserializeOwned;

use fiscus_http::form::{FormRefusal, RawBody, pairs};

/// A console form, parsed into `T`. A form no console page produces is refused with an error page.
pub struct ConsoleForm<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ConsoleForm<T> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Response> {
        let refused = |status: StatusCode, message: &str| super::html::error_page(status, "Refused", message);
        let body = RawBody::from_request(req, state)
            .await
            .map_err(|_| refused(StatusCode::PAYLOAD_TOO_LARGE, "The form is too large."))?;
        pairs(&body.0).map_err(|r| match r {
            FormRefusal::Malformed => refused(StatusCode::BAD_REQUEST, "The form could not be read."),
            FormRefusal::Nul(_) => {
                refused(StatusCode::BAD_REQUEST, "The form contains a character that is not accepted.")
            }
        })?;
        serde_urlencoded::from_bytes(&body.0)
            .map(ConsoleForm)
            .map_err(|_| refused(StatusCode::UNPROCESSABLE_ENTITY, "The form is missing a field or has a wrong value."))
    }
}
