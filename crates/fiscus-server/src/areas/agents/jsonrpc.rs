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
    pub id: JsonRpcId,
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonRpcError>,
}

pub fn ok(id: JsonRpcId, result: Value) -> JsonRpcResponse {
    JsonRpcResponse { jsonrpc: "2.0".into(), id, result: Some(result), error: None }
}

pub fn err(id: JsonRpcId, code: i64, message: impl Into<String>, data: Option<Value>) -> JsonRpcResponse {
    JsonRpcResponse {
        jsonrpc: "2.0".into(),
        id,
        result: None,
        error: Some(JsonRpcError { code, message: message.into(), data }),
    }
}

/// The envelope checks every JSON-RPC request meets before its method is looked at: a 422 problem, since
/// such a body is not a JSON-RPC request at all.
pub fn check(message: &JsonRpcRequest) -> Result<(), crate::http::problem::ApiError> {
    let mut invalid = Vec::new();
    if message.jsonrpc != "2.0" {
        invalid.push(("jsonrpc", "must be \"2.0\"".to_string()));
    }
    if message.method.is_empty() || message.method.chars().count() > 128 {
        invalid.push(("method", "1 to 128 characters".to_string()));
    }
    if invalid.is_empty() { Ok(()) } else { Err(crate::http::problem::ApiError::invalid_fields(invalid)) }
}
