//! JSON request bodies. Errors come back as problem+json like every other error: 415 for a wrong content
//! type, 413 for an oversize body, 400 for malformed JSON or duplicate member names (I-JSON, see
//! `fiscus_domain::ijson`), 422 with the offending field for a body that
//! parses but does not fit (wrong type, unknown field, missing field).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::ijson::IJsonError;
use serde::de::DeserializeOwned;

use crate::problem::ApiError;

/// A required JSON body.
pub struct ApiJson<T>(pub T);

/// An optional JSON body: an empty body is `None`; anything else must parse.
pub struct OptionalJson<T>(pub Option<T>);

/// Bodies larger than this are parsed on a blocking thread: a 16 MiB panel takes tens of milliseconds to
/// parse, which must not hold a runtime worker (ARCHITECTURE.md invariant 16).
const PARSED_INLINE_UP_TO: usize = 256 * 1024;

impl<S: Send + Sync, T: DeserializeOwned + Send + 'static> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        match read(req, state).await? {
            Some(bytes) if bytes.len() > PARSED_INLINE_UP_TO => {
                tokio::task::spawn_blocking(move || parse(&bytes)).await.map_err(|_| ApiError::internal())?.map(ApiJson)
            }
            Some(bytes) => Ok(ApiJson(parse(&bytes)?)),
            None => Err(ApiError::new(ErrorCode::MalformedJson).detail("a JSON body is required")),
        }
    }
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for OptionalJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        match read(req, state).await? {
            Some(bytes) => Ok(OptionalJson(Some(parse(&bytes)?))),
            None => Ok(OptionalJson(None)),
        }
    }
}

/// The body's bytes when it is JSON (`None` when empty), refused as the extractors refuse it: wrong content
/// type, oversize, malformed or duplicate members. The JSON-RPC endpoints read their envelopes with it.
pub async fn read<S: Send + Sync>(req: Request, state: &S) -> Result<Option<Bytes>, ApiError> {
    let content_type = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
    let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(ErrorCode::PayloadTooLarge)
        } else {
            ApiError::new(ErrorCode::MalformedJson).detail("the request body could not be read")
        }
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let is_json = content_type.as_deref().is_some_and(|ct| {
        let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
    });
    if !is_json {
        return Err(
            ApiError::new(ErrorCode::UnsupportedMediaType).detail("send the body as Content-Type: application/json")
        );
    }
    Ok(Some(bytes))
}

/// Parses in two steps so that the status says what is wrong: bytes that are not JSON are 400; JSON that
/// does not fit the type is 422 with the path of the failing field, so a client learns which member to fix.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value = fiscus_domain::ijson::parse(bytes).map_err(|refusal| match refusal {
        IJsonError::NulCharacter { path } => ApiError::invalid_request(field_of(&path), refusal_message()),
        other => ApiError::new(ErrorCode::MalformedJson).detail(other.to_string()),
    })?;
    // Every request body of the API is an object; serde would otherwise accept an array for a struct.
    if !value.is_object() {
        return Err(ApiError::invalid_request("body", "must be a JSON object"));
    }
    // Nor may a nested member documented as an object be an array (`api::objects::Strict`).
    serde_path_to_error::deserialize::<_, T>(fiscus_domain::api::objects::Strict(&value)).map_err(|err| {
        let path = err.path().to_string();
        let field = if path == "." { String::from("body") } else { path };
        ApiError::new(ErrorCode::InvalidRequest).field(field, strip_position(&err.into_inner().to_string()))
    })
}

/// `$.a.b[2]` → `a.b[2]`, the form field paths take elsewhere (`body` for the whole body).
fn field_of(path: &str) -> String {
    match path.strip_prefix("$.") {
        Some(rest) => rest.to_string(),
        None => String::from("body"),
    }
}

fn refusal_message() -> &'static str {
    "must not contain the character U+0000"
}

/// serde_json appends " at line 1 column 12" to data errors; the field path says more.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}
