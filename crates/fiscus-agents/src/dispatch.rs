//! Calling a tool: the operation's own HTTP route, in process, as the caller.
//!
//! The routes are the composition's: this area cannot name them (it sits below the crate that assembles
//! every area), so the composition hands a [`Dispatcher`] down, to the protocol handlers as a request
//! extension and to the agent worker when it is built (`fiscus_server::app::dispatcher`). Nothing is looked
//! up at run time in a global: what an Agent Space run can reach is what it was handed.
//!
//! A tool call becomes an ordinary request to the service's router (path and query from the arguments, the
//! `body` argument as the JSON body, `idempotency_key` as the `Idempotency-Key` header), carrying the
//! caller's already authenticated principal in a [`Dispatched`] extension instead of a credential. The auth
//! layer takes the principal from it (an extension can only be set in process, never by a client) and still
//! checks the grant and the operation's scope; everything after (validation, idempotency, request evidence,
//! the application layer's rules, audit) is exactly what the REST call meets. So a tool can never do what
//! its operation would refuse, and needs no code of its own.

use axum::body::{Body, to_bytes};
use axum::http::{HeaderValue, Method, Request, header};
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::tools::{Slot, Tool};
pub use fiscus_http::dispatched::Dispatched;
use fiscus_http::document::ApiDocument;
use fiscus_http::request_id::RequestId;

/// What calls an operation in process: the service's routes with their route layers (metrics,
/// authentication, idempotency, request evidence) and the request rules every request meets (body limit, the
/// edge's refusals), below the outer layers the protocol request already passed (request id, panic guard).
pub trait Dispatch: Send + Sync + 'static {
    /// Answers `request` as the routes would.
    fn call(&self, request: Request<Body>) -> Pin<Box<dyn Future<Output = axum::response::Response> + Send>>;
    /// The document the routes serve: the tools are its operations.
    fn document(&self) -> &ApiDocument;
}

/// The handle the composition hands down (cheap to clone).
#[derive(Clone)]
pub struct Dispatcher(pub Arc<dyn Dispatch>);

impl Dispatcher {
    pub fn document(&self) -> &ApiDocument {
        self.0.document()
    }
}

/// Arguments that do not fit the tool's input schema's shape (a JSON-RPC "invalid params").
#[derive(Debug, PartialEq, Eq)]
pub struct BadArguments(pub String);

/// What the operation answered.
pub struct Answer {
    pub status: u16,
    /// The body as sent (JSON text from the operation's own serializer, or empty).
    pub text: String,
    /// Whether the operation declared the body JSON (`Content-Type: application/json`, which only its JSON
    /// serializer sets).
    pub json: bool,
}

impl Answer {
    /// Whether the body is a JSON object the operation's serializer wrote, so it can be embedded as it is in
    /// a protocol's response (without parsing it again).
    pub fn is_object(&self) -> bool {
        self.json && self.text.trim_start().starts_with('{')
    }
}

fn scalar(name: &str, v: &Value) -> Result<String, BadArguments> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(BadArguments(format!("`{name}` must be a string, number or boolean"))),
    }
}

/// Builds the operation's request from the arguments.
fn request(tool: &Tool, arguments: &Map<String, Value>) -> Result<Request<Body>, BadArguments> {
    let op = tool.operation;
    let mut path = op.full_path();
    let mut query = form_urlencoded::Serializer::new(String::new());
    let mut has_query = false;
    let mut body = None;
    let mut idempotency_key = None;
    for (name, value) in arguments {
        let Some(slot) = tool.arguments.get(name) else {
            return Err(BadArguments(format!("`{name}` is not an argument of {}", tool.name())));
        };
        match slot {
            Slot::Path => {
                let text = scalar(name, value)?;
                let encoded: String = form_urlencoded::byte_serialize(text.as_bytes()).collect();
                path = path.replace(&format!("{{{name}}}"), &encoded.replace('+', "%20"));
            }
            Slot::Query => {
                if !value.is_null() {
                    query.append_pair(name, &scalar(name, value)?);
                    has_query = true;
                }
            }
            Slot::Body => body = Some(serde_json::to_vec(value).map_err(|e| BadArguments(e.to_string()))?),
            Slot::IdempotencyKey => idempotency_key = Some(scalar(name, value)?),
        }
    }
    if path.contains('{') {
        return Err(BadArguments(format!("{} needs its path arguments", tool.name())));
    }
    let uri = if has_query { format!("{path}?{}", query.finish()) } else { path };
    let method = Method::from_bytes(op.method.as_str().as_bytes()).map_err(|e| BadArguments(e.to_string()))?;
    let mut builder = Request::builder().method(method).uri(uri);
    if body.is_some() {
        builder = builder.header(header::CONTENT_TYPE, "application/json");
    }
    if let Some(key) = idempotency_key {
        let value =
            HeaderValue::from_str(&key).map_err(|_| BadArguments("`idempotency_key` is not a header value".into()))?;
        builder = builder.header("idempotency-key", value);
    }
    builder.body(body.map_or_else(Body::empty, Body::from)).map_err(|e| BadArguments(e.to_string()))
}

/// Calls `tool` as `caller`; `request_id` (the protocol request's) is carried into the operation's.
pub async fn call(
    dispatcher: &Dispatcher,
    caller: &Dispatched,
    tool: &Tool,
    arguments: &Map<String, Value>,
    request_id: &str,
) -> Result<Answer, BadArguments> {
    let mut req = request(tool, arguments)?;
    // The router below the outer layers (`app::build`) mints no request id: the protocol request's is used.
    req.extensions_mut().insert(RequestId(request_id.to_string()));
    req.extensions_mut().insert(Arc::new(caller.clone()));
    // An operation that itself calls tools (a run started through a tool) is handed the same dispatcher.
    req.extensions_mut().insert(dispatcher.clone());
    let response = dispatcher.0.call(req).await;
    let status = response.status().as_u16();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap_or_default();
    let text =
        String::from_utf8(Vec::from(bytes)).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok(Answer { status, text, json })
}
