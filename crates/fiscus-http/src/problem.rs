//! RFC 9457 problem details. Every error Fiscus returns, from any layer, has this shape.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use fiscus_domain::error_code::ErrorCode;
use fiscus_store::StoreError;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::request_id;

/// A field-level complaint (`errors[]` member).
#[derive(Clone, Debug, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// An error on its way to becoming a problem+json response.
#[derive(Debug)]
pub struct ApiError {
    pub code: ErrorCode,
    pub detail: Option<String>,
    pub errors: Vec<FieldError>,
    /// Extra members (e.g. `required_scope`, `failed_gates`).
    pub extra: Map<String, Value>,
    pub headers: Vec<(header::HeaderName, HeaderValue)>,
}

impl ApiError {
    pub fn new(code: ErrorCode) -> ApiError {
        ApiError { code, detail: None, errors: Vec::new(), extra: Map::new(), headers: Vec::new() }
    }

    pub fn detail(mut self, detail: impl Into<String>) -> ApiError {
        self.detail = Some(detail.into());
        self
    }

    pub fn field(mut self, field: impl Into<String>, message: impl Into<String>) -> ApiError {
        self.errors.push(FieldError { field: field.into(), message: message.into() });
        self
    }

    pub fn with(mut self, member: &str, value: impl Into<Value>) -> ApiError {
        self.extra.insert(member.to_string(), value.into());
        self
    }

    pub fn header(mut self, name: header::HeaderName, value: impl AsRef<str>) -> ApiError {
        if let Ok(v) = HeaderValue::from_str(value.as_ref()) {
            self.headers.push((name, v));
        }
        self
    }

    pub fn not_found() -> ApiError {
        ApiError::new(ErrorCode::NotFound)
    }

    pub fn invalid_request(field: impl Into<String>, message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::InvalidRequest).field(field, message)
    }

    /// 422 `invalid_request` naming every field that failed validation.
    pub fn invalid_fields(errors: Vec<(&'static str, String)>) -> ApiError {
        errors.into_iter().fold(ApiError::new(ErrorCode::InvalidRequest), |e, (field, message)| e.field(field, message))
    }

    pub fn internal() -> ApiError {
        ApiError::new(ErrorCode::Internal)
    }
}

/// The JSON body of a problem, also used as the OpenAPI schema of every error response.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Problem {
    /// A URI reference naming the problem type; `/problems/{code}` on this server describes it.
    #[serde(rename = "type")]
    pub type_: String,
    pub title: String,
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Stable, snake_case error code to match on.
    pub code: String,
    /// The `Request-Id` of the request, for support.
    pub request_id: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, title) = self.code.describe();
        let problem = Problem {
            type_: format!("/problems/{code}"),
            title: title.to_string(),
            status,
            detail: self.detail,
            code: code.to_string(),
            request_id: request_id::current(),
            errors: self.errors,
        };
        let mut body = match serde_json::to_value(&problem) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        for (k, v) in self.extra {
            body.entry(k).or_insert(v);
        }
        let bytes = serde_json::to_vec(&Value::Object(body)).unwrap_or_default();
        let mut response =
            (StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), bytes).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        for (name, value) in self.headers {
            response.headers_mut().append(name, value);
        }
        response
    }
}

impl From<fiscus_kernel::evidence::EvidenceError> for ApiError {
    fn from(e: fiscus_kernel::evidence::EvidenceError) -> ApiError {
        use fiscus_kernel::evidence::EvidenceError;
        match e {
            EvidenceError::Store(e) => e.into(),
            // A tree of that size does not exist (yet): nothing to prove against.
            EvidenceError::Beyond { asked, integrated } => ApiError::new(ErrorCode::NotFound).detail(format!(
                "the log has no tree of {asked} leaves (its integrated tree has {integrated}); ask for a fresh checkpoint first"
            )),
            EvidenceError::Tree(e) => ApiError::new(ErrorCode::InvalidParameter).detail(e.to_string()),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::NotFound => ApiError::not_found(),
            StoreError::Conflict(_) => ApiError::new(ErrorCode::Conflict),
            StoreError::Tampered(what) => {
                // An alarm for whoever runs Fiscus; the client learns only that nothing was done.
                tracing::error!(record = %what, "a sealed record failed verification; the request was refused");
                ApiError::new(ErrorCode::IntegrityFailure)
            }
            other if other.is_transient() => {
                // The database restarting, a lost deadlock, a failed group commit: nothing was done, and the same
                // request may succeed in a moment (a keyed one replays if its commit was in fact kept).
                tracing::warn!(error = %other, "the database could not complete the request; answered as retryable");
                ApiError::new(ErrorCode::Unavailable)
                    .detail("the database could not complete the request; retry it (with the same Idempotency-Key)")
                    .header(header::RETRY_AFTER, "1")
            }
            other => {
                // The cause is logged with the request id; the client learns only that it was ours.
                tracing::error!(error = %other, "store error");
                ApiError::internal()
            }
        }
    }
}

/// How the API reports a governed change that did not happen.
impl From<fiscus_kernel::governed::Failure> for ApiError {
    fn from(f: fiscus_kernel::governed::Failure) -> ApiError {
        use fiscus_kernel::governed::Failure;
        match f {
            Failure::NotFound => ApiError::not_found(),
            Failure::Invalid(errors) => ApiError::invalid_fields(errors),
            Failure::Missing(field, message) => {
                ApiError::new(ErrorCode::ReferenceNotFound).detail(message.clone()).field(field, message)
            }
            Failure::Refused { code, detail, members } => {
                members.into_iter().fold(ApiError::new(code).detail(detail), |e, (k, v)| e.with(k, v))
            }
            Failure::Decision(refusal) => {
                // Decisions are the console's; an API route reaching one is a wiring error, refused all the same.
                tracing::error!(refusal = refusal.code(), "an approval refusal reached the API");
                ApiError::internal()
            }
            Failure::Production(refusal) => {
                // Production access is the console's; an API route reaching it is a wiring error.
                tracing::error!(refusal = %refusal, "a production access refusal reached the API");
                ApiError::internal()
            }
            Failure::Computation { code, engine_error, detail } => {
                ApiError::new(code).detail(detail).with("engine_error", engine_error.as_str())
            }
            Failure::Store(e) => e.into(),
        }
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> ApiError {
        tracing::error!(error = %e, "internal error");
        ApiError::internal()
    }
}
