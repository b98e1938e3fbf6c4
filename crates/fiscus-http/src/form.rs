//! Form bodies (`application/x-www-form-urlencoded`), as the console's forms (`console::form`) and the OAuth
//! endpoints read them.
//!
//! Both refuse what JSON bodies refuse (see `fiscus_domain::ijson`): a field carrying U+0000, which
//! PostgreSQL cannot store and SQLite can, so the backends would otherwise disagree; and an oversize body
//! read without a `Content-Length` is a problem+json 413 like every other, never the framework's text.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::ijson::has_nul;

use crate::problem::ApiError;

/// The raw body, read within the body limit.
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        Bytes::from_request(req, state).await.map(RawBody).map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(ErrorCode::PayloadTooLarge)
            } else {
                ApiError::new(ErrorCode::MalformedRequest).detail("the request body could not be read")
            }
        })
    }
}

/// Why a form body was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum FormRefusal {
    Malformed,
    Nul(String),
}

/// Decodes a form body into its name/value pairs, refusing U+0000 in any name or value.
pub fn pairs(body: &[u8]) -> Result<Vec<(String, String)>, FormRefusal> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(body).map_err(|_| FormRefusal::Malformed)?;
    match pairs.iter().find(|(k, v)| has_nul(k) || has_nul(v)) {
        Some((k, _)) => Err(FormRefusal::Nul(k.clone())),
        None => Ok(pairs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_is_refused_in_names_and_values() {
        assert_eq!(pairs(b"a=1&b=x%00y"), Err(FormRefusal::Nul("b".into())));
        assert_eq!(pairs(b"a%00=1"), Err(FormRefusal::Nul("a\0".into())));
        assert_eq!(pairs(b"a=1&b=2").map(|p| p.len()), Ok(2));
    }
}
