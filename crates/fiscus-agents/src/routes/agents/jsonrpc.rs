//! JSON-RPC 2.0 messages as MCP and A2A carry them over HTTP: one request per POST, the answer (a result or
//! an error) in a 200 response, a notification acknowledged with 202 and no body.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON-RPC request id: a string or an integer.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum JsonRpcId {
    Number(i64),
    Text(String),
}

/// A JSON-RPC 2.0 request or notification (a notification has no `id`).
#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[schema(example = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))]
pub struct JsonRpcRequest {
    /// Always `2.0`.
    #[schema(pattern = "^2\\.0$")]
    pub jsonrpc: String,
    /// Absent for a notification.
    pub id: Option<JsonRpcId>,
    /// `initialize`, `ping`, `tools/list`, `tools/call`, or a notification such as `notifications/initialized`.
    #[schema(min_length = 1, max_length = 128)]
    pub method: String,
    #[schema(value_type = Option<Object>)]
    pub params: Option<Map<String, Value>>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct JsonRpcError {
    /// JSON-RPC error code: -32601 unknown method, -32602 invalid params or a tool not offered, -32600
    /// invalid request.
    pub code: i64,
    pub message: String,
    /// Details: an object (MCP: `code`, `title`) or, for A2A, a list holding a `google.rpc.ErrorInfo`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A JSON-RPC 2.0 response: `result` or `error`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct JsonRpcResponse {
    /// Always `2.0`.
    pub jsonrpc: String,
    /// The request's id; `null` only when the request's id could not be read (a batch).
    pub id: Option<JsonRpcId>,
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonRpcError>,
}

pub fn ok(id: JsonRpcId, result: Value) -> JsonRpcResponse {
    JsonRpcResponse { jsonrpc: "2.0".into(), id: Some(id), result: Some(result), error: None }
}

pub fn err(id: JsonRpcId, code: i64, message: impl Into<String>, data: Option<Value>) -> JsonRpcResponse {
    JsonRpcResponse {
        jsonrpc: "2.0".into(),
        id: Some(id),
        result: None,
        error: Some(JsonRpcError { code, message: message.into(), data }),
    }
}

/// The body of a JSON-RPC endpoint: one request object. A batch (a JSON array, JSON-RPC 2.0 §6) is answered
/// as JSON-RPC answers an invalid request, not with a problem document: HTTP 400 carrying the error -32600
/// with a `null` id, which JSON-RPC clients read. MCP removed batching in its 2025-06-18 revision and A2A
/// sends one request per POST, so no batch is run, not even in part. Anything else that is not a request
/// object keeps the API's problem documents (400 not JSON, 415, 422).
pub struct RpcJson(pub JsonRpcRequest);

impl<S: Send + Sync> axum::extract::FromRequest<S> for RpcJson {
    type Rejection = axum::response::Response;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        use axum::response::IntoResponse;
        let bytes =
            fiscus_http::json::read(req, state).await.map_err(IntoResponse::into_response)?.ok_or_else(|| {
                fiscus_http::problem::ApiError::new(fiscus_domain::error_code::ErrorCode::MalformedJson)
                    .detail("a JSON body is required")
                    .into_response()
            })?;
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            return Err(batch_refused());
        }
        if let Err(fiscus_domain::ijson::IJsonError::NulCharacter { path }) = fiscus_domain::ijson::parse(&bytes) {
            return Err(nul_refused(&bytes, &path));
        }
        Ok(RpcJson(fiscus_http::json::parse(&bytes).map_err(IntoResponse::into_response)?))
    }
}

/// The JSON-RPC error -32600 for a batch, with a null id (JSON-RPC 2.0 §5.1).
pub fn batch_refused() -> axum::response::Response {
    use axum::response::IntoResponse;
    let body = JsonRpcResponse {
        jsonrpc: "2.0".into(),
        id: None,
        result: None,
        error: Some(JsonRpcError {
            code: -32600,
            message: "Invalid Request: JSON-RPC batches are not supported; send one request object per POST".into(),
            data: None,
        }),
    };
    (axum::http::StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// A request object carrying U+0000 (refused in every string and member name of the API, as PostgreSQL text
/// cannot hold it) is answered with the JSON-RPC error -32602 and the request's id, `data` naming the member,
/// in an HTTP 400 as the batch refusal is: the document states the rule at every depth (`params` takes
/// `JsonValue`), so such a body breaks the schema, and an MCP or A2A client still reads a JSON-RPC error
/// where a problem document would read as a broken transport.
fn nul_refused(bytes: &[u8], path: &str) -> axum::response::Response {
    use axum::response::IntoResponse;
    let id = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .and_then(|id| serde_json::from_value::<JsonRpcId>(id).ok())
        // An id carrying U+0000 itself is not echoed (the response's id has the API's no-U+0000 rule too).
        .filter(|id| !matches!(id, JsonRpcId::Text(t) if t.contains('\0')));
    let body = JsonRpcResponse {
        jsonrpc: "2.0".into(),
        id,
        result: None,
        error: Some(JsonRpcError {
            code: -32602,
            message: "Invalid params: no string or member name may contain the character U+0000".into(),
            data: Some(
                serde_json::json!({ "code": "invalid_request", "field": path.strip_prefix("$.").unwrap_or(path) }),
            ),
        }),
    };
    (axum::http::StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// The envelope checks every JSON-RPC request meets before its method is looked at: a 422 problem, since
/// such a body is not a JSON-RPC request at all.
pub fn check(message: &JsonRpcRequest) -> Result<(), fiscus_http::problem::ApiError> {
    let mut invalid = Vec::new();
    if message.jsonrpc != "2.0" {
        invalid.push(("jsonrpc", "must be \"2.0\"".to_string()));
    }
    if message.method.is_empty() || message.method.chars().count() > 128 {
        invalid.push(("method", "1 to 128 characters".to_string()));
    }
    if invalid.is_empty() { Ok(()) } else { Err(fiscus_http::problem::ApiError::invalid_fields(invalid)) }
}
