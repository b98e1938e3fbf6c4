//! The common contract, written into every operation of the document: the errors every layer can answer
//! with, the headers every response carries, and `Idempotency-Key` on every POST. These facts come from the
//! layers (`http/`) and the error-code table, not from each handler, so they are stated once, here, and a
//! handler documents only what is its own (its body, its success, its domain refusals).
//!
//! It works on the JSON form of the document, after the typed part (`super::finish`) is done.

use fiscus_domain::error_code::ErrorCode;
use serde_json::{Map, Value, json};

const PROBLEM: &str = "#/components/schemas/Problem";

/// The shared pieces every operation refers to by `$ref`.
fn components(doc: &mut Value) {
    let header = |description: &str, schema: Value| json!({ "description": description, "schema": schema });
    let headers = json!({
        "Request-Id": header("The request's id (echoed when the client sent a sane one, else minted `req_…`); problem bodies carry it too.", json!({ "type": "string", "maxLength": 128 })),
        "RateLimit-Policy": header("IETF RateLimit header fields: the service class's quota and window, e.g. `\"standard\";q=6000;w=60`.", json!({ "type": "string" })),
        "RateLimit": header("IETF RateLimit header fields: what is left in the current window and seconds until it resets, e.g. `\"standard\";r=5999;t=42`.", json!({ "type": "string" })),
        "Retry-After": header("Seconds to wait before retrying.", json!({ "type": "string", "pattern": "^[0-9]+$" })),
        "WWW-Authenticate": header("RFC 6750 bearer challenge (`error=\"invalid_token\"`, or `error=\"insufficient_scope\", scope=\"…\"`).", json!({ "type": "string" })),
        "Deprecation": header("RFC 9745: present when the change ledger deprecates this operation; when (an `@` and Unix seconds, possibly in the future).", json!({ "type": "string", "pattern": "^@-?[0-9]+$" })),
        "Sunset": header("RFC 8594: present when the change ledger announces when this operation stops being served (an HTTP-date).", json!({ "type": "string" })),
        "Link": header("RFC 8288: on a bulk read with more to read, the next page (`rel=\"next\"`); with a deprecation, the change ledger (`rel=\"deprecation\"`, RFC 9745).", json!({ "type": "string" })),
        "Idempotent-Replayed": header("`true` when this is the stored response of an earlier request with the same `Idempotency-Key`.", json!({ "type": "string", "enum": ["true"] })),
    });
    let mut headers = headers;
    if let (Value::Object(shared), Value::Object(bulk)) = (&mut headers, super::columnar::headers()) {
        shared.extend(bulk);
    }
    let Some(obj) = doc.as_object_mut() else { return };
    let components = obj.entry("components").or_insert_with(|| json!({}));
    components["headers"] = headers;
    if let Some(problem) = components.pointer_mut("/schemas/Problem") {
        problem["example"] = example(ErrorCode::NotFound);
    }
}

fn example(code: ErrorCode) -> Value {
    let (status, code, title) = code.describe();
    json!({
        "type": format!("/problems/{code}"),
        "title": title,
        "status": status,
        "code": code,
        "request_id": "req_01KAQ5Z3J9N8W6Y0E4T2R7M1XC"
    })
}

fn header_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/headers/{name}") })
}

/// A problem+json response whose description names every code it can carry.
fn problem_response(codes: &[ErrorCode]) -> Value {
    let description = codes.iter().map(|c| format!("`{}`: {}", c.code(), c.title())).collect::<Vec<_>>().join("; ");
    json!({
        "description": description,
        "content": { "application/problem+json": { "schema": { "$ref": PROBLEM }, "example": example(codes[0]) } }
    })
}

/// What an operation is, as far as the common contract cares.
struct Shape {
    bearer: bool,
    post: bool,
    json_body: bool,
    /// Any request body (JSON or form): its read is paced (`connections::pace`).
    body: bool,
    path_parameters: bool,
    /// Runs the engine (its 422 names `computation_refused`): a window or input with too few observations
    /// is 409 `insufficient_data`; constraints no solution meets and results the values leave undefined are 409
    /// `conflict` (`http/problem.rs`); sizes that multiply past a limit are 409 `limit_exceeded`.
    computes: bool,
}

/// The errors the layers in front of a handler can answer with, by status.
fn layer_errors(shape: &Shape) -> Vec<(u16, Vec<ErrorCode>)> {
    use ErrorCode::*;
    let mut errors: Vec<(u16, Vec<ErrorCode>)> = Vec::new();
    let mut add = |codes: &[ErrorCode]| {
        let status = codes[0].status();
        match errors.iter_mut().find(|(s, _)| *s == status) {
            Some((_, existing)) => {
                for c in codes {
                    if !existing.contains(c) {
                        existing.push(*c);
                    }
                }
            }
            None => errors.push((status, codes.to_vec())),
        }
    };
    add(&[MalformedRequest]);
    // A sealed record that failed verification is refused as a 500 of its own kind.
    add(&[Internal, IntegrityFailure]);
    // The database restarting, a lost deadlock or a failed group commit: nothing was done, retry
    // (`StoreError::is_transient`).
    add(&[Unavailable]);
    add(&[PayloadTooLarge]);
    if shape.body {
        add(&[RequestTimeout]);
    }
    if shape.bearer {
        add(&[AuthenticationRequired, InvalidCredential]);
        add(&[ScopeMissing, EntitlementMissing, ProductionAccessDisabled]);
        add(&[InvalidParameter]);
        add(&[RateLimited]);
    } else {
        add(&[RateLimited]);
    }
    if shape.path_parameters {
        add(&[NotFound]);
    }
    // An object a body or query names that the workspace does not hold.
    if shape.bearer {
        add(&[ReferenceNotFound]);
    }
    if shape.computes {
        add(&[InsufficientData, Conflict, LimitExceeded]);
    }
    if shape.post && shape.bearer {
        add(&[IdempotencyKeyInUse]);
        add(&[IdempotencyKeyReused, InvalidIdempotencyKey]);
    }
    if shape.json_body {
        add(&[MalformedJson]);
        add(&[UnsupportedMediaType]);
        add(&[InvalidRequest]);
    }
    errors
}

/// OpenAPI links (what a created object's `id` addresses next), so that clients and stateful test tools
/// can follow a workflow: create, read, then act on the object. `(from, status, [to…])`, by operation id;
/// each target takes the new object's `id` as its `uid`.
const LINKS: &[(&str, &str, &[&str])] = &[
    (
        "post_actions",
        "201",
        &[
            "get_actions_uid",
            "get_agent_execution_actions_uid",
            "get_agent_execution_actions_uid_assurance",
            "get_agent_execution_actions_uid_reconciliation",
            "post_actions_investment_execution_uid_checks",
            "post_actions_uid_execute",
            "post_agent_execution_actions_uid_execute",
        ],
    ),
    (
        "post_agent_execution_proposals",
        "201",
        &["post_agent_execution_actions_uid_submit", "get_agent_execution_actions_uid", "get_actions_uid"],
    ),
    (
        "post_actions_agentic_identities",
        "201",
        &["get_actions_agentic_identities_uid", "post_actions_agentic_identities_uid_delegations"],
    ),
    ("post_actions_agentic_identities_uid_delegations", "201", &["get_actions_agentic_delegations_uid"]),
];

fn add_links(op: &mut Value) {
    let Some(id) = op["operationId"].as_str().map(str::to_string) else { return };
    for (from, status, targets) in LINKS {
        if *from != id {
            continue;
        }
        let Some(response) = op.pointer_mut(&format!("/responses/{status}")) else { continue };
        let links: Map<String, Value> = targets
            .iter()
            .map(|to| {
                let link = json!({ "operationId": to, "parameters": { "uid": "$response.body#/id" } });
                (to.to_string(), link)
            })
            .collect();
        response["links"] = Value::Object(links);
    }
}

/// Real responses, one per documented success, captured from a live server by the `examples` test (which
/// also keeps them the shape the server answers with today).
const EXAMPLES: &str = include_str!("examples.json");

fn add_example(op: &mut Value) {
    static PARSED: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let examples = PARSED.get_or_init(|| serde_json::from_str(EXAMPLES).unwrap_or_default());
    let Some(id) = op["operationId"].as_str().map(str::to_string) else { return };
    let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else { return };
    for (status, response) in responses.iter_mut().filter(|(s, _)| s.starts_with('2')) {
        if let (Some(example), Some(content)) =
            (examples.get(&format!("{id} {status}")), response.pointer_mut("/content/application~1json"))
        {
            content["example"] = example.clone();
        }
    }
}

/// Applies the common contract to every operation of `doc`.
pub fn apply(doc: &mut Value) {
    components(doc);
    webhooks(doc);
    doc["servers"] = json!([{ "url": "/", "description": "This Fiscus deployment" }]);
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for (path, item) in paths.iter_mut() {
        for method in ["get", "post", "delete"] {
            let Some(op) = item.get_mut(method) else { continue };
            let shape = Shape {
                bearer: !path.starts_with("/api/v2/oauth/"),
                post: method == "post",
                json_body: op.pointer("/requestBody/content/application~1json").is_some(),
                body: op.get("requestBody").is_some(),
                path_parameters: path.contains('{'),
                computes: op
                    .pointer("/responses/422/description")
                    .and_then(Value::as_str)
                    .is_some_and(|d| d.contains("computation_refused")),
            };
            decorate(op, &shape);
        }
    }
}

/// What Fiscus sends to a registered endpoint (OpenAPI 3.1 `webhooks`): the one event envelope, signed by
/// Standard Webhooks v1 (`workers/webhooks.rs`).
fn webhooks(doc: &mut Value) {
    let header = |name: &str, description: &str| json!({ "name": name, "in": "header", "required": true, "description": description, "schema": { "type": "string" } });
    doc["webhooks"] = json!({
        "event": { "post": {
            "operationId": "webhook_event",
            // Fiscus calls the endpoint; the endpoint checks Fiscus's signature (the headers below).
            "security": [],
            "tags": ["Agents & MCP"],
            "summary": "An event delivered to an endpoint registered with `POST /api/v2/agent-execution/webhooks`",
            "description": "Sent by Fiscus, not served by it: one event per request, at least once, in order per endpoint, \
                signed as Standard Webhooks v1 with the endpoint's `whsec_` secret. A 2xx answer acknowledges it; \
                anything else, or no answer within the timeout, is retried on a schedule and then given up \
                (`GET /api/v2/agent-execution/webhooks` shows each endpoint's state). Deduplicate by `webhook-id`.",
            "parameters": [
                header("webhook-id", "The event's id: the same on every retry of one event."),
                header("webhook-timestamp", "Unix seconds when this attempt was signed."),
                header("webhook-signature", "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`."),
            ],
            "requestBody": { "required": true, "content": { "application/json": {
                "schema": { "$ref": "#/components/schemas/Event" } } } },
            "responses": {
                "2XX": { "description": "Received: not sent again." },
                "4XX": { "description": "Not accepted: sent again on the retry schedule." }
            }
        } }
    });
}

/// Drops components nothing refers to: generic pages (`ListPage<T>`) are inlined where used, which leaves
/// the item type's own component behind unreferenced.
pub fn prune_unused_components(doc: &mut Value) {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r.clone());
                }
                map.values().for_each(|x| refs(x, out));
            }
            Value::Array(items) => items.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }
    let mut pending = Vec::new();
    if let Some(map) = doc.as_object() {
        map.iter().filter(|(k, _)| *k != "components").for_each(|(_, v)| refs(v, &mut pending));
    }
    let mut used = std::collections::BTreeSet::new();
    while let Some(r) = pending.pop() {
        if used.insert(r.clone())
            && let Some(target) = r.strip_prefix('#').and_then(|pointer| doc.pointer(pointer))
        {
            refs(target, &mut pending);
        }
    }
    for kind in ["schemas", "parameters", "headers", "responses"] {
        if let Some(map) = doc.pointer_mut(&format!("/components/{kind}")).and_then(Value::as_object_mut) {
            map.retain(|name, _| used.contains(&format!("#/components/{kind}/{name}")));
        }
    }
}

/// An optional body is absent, never `null`: every body the API parses must be a JSON object (`http/json.rs`),
/// so a nullable body schema (what `Option<T>` produces) is replaced by the object's own, not required.
fn optional_body_is_never_null(op: &mut Value) {
    let Some(body) = op.get_mut("requestBody") else { return };
    let Some(schema) = body.pointer_mut("/content/application~1json/schema") else { return };
    let object = schema["oneOf"]
        .as_array()
        .filter(|alternatives| alternatives.len() == 2 && alternatives.iter().any(|a| a["type"] == "null"))
        .and_then(|alternatives| alternatives.iter().find(|a| a["type"] != "null").cloned());
    if let Some(object) = object {
        *schema = object;
        body["required"] = json!(false);
    }
}

/// `Idempotency-Key` (every bearer POST takes it; each operation's copy carries an example of its own).
fn idempotency_key_parameter() -> Value {
    json!({
        "name": "Idempotency-Key",
        "in": "header",
        "required": false,
        "description": "Makes the POST safe to retry: the first response is stored with its effect (at least 24 h) and replayed with `Idempotent-Replayed: true`; the same key with another method, path or body is 409 `idempotency_key_reused` (never retryable: no `Retry-After`), and while the first is still running 409 `idempotency_key_in_use` with `Retry-After`.",
        "schema": { "type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$" },
        "example": "7f9c2ba4-e88f-4a2b-9a61-3c4f2e1d0b5a"
    })
}

fn decorate(op: &mut Value, shape: &Shape) {
    optional_body_is_never_null(op);
    add_links(op);
    add_example(op);
    if shape.post && shape.bearer {
        // The shared definition, with an example of this operation's own: a client (or a test tool) that
        // sends the documented example to several operations never spends one operation's key on another.
        let example = format!("example-{}", op["operationId"].as_str().unwrap_or("post"));
        let mut parameter = idempotency_key_parameter();
        parameter["example"] = json!(example);
        let parameters = op.as_object_mut().map(|o| o.entry("parameters").or_insert_with(|| json!([])));
        if let Some(Value::Array(parameters)) = parameters {
            parameters.push(parameter);
        }
    }
    let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else { return };
    for (status, codes) in layer_errors(shape) {
        let key = status.to_string();
        match responses.get_mut(&key) {
            // The handler documented this status for its own reasons; the layers' codes join its description.
            Some(existing) => {
                let own = existing["description"].as_str().unwrap_or("").to_string();
                let layers = problem_response(&codes)["description"].as_str().unwrap_or("").to_string();
                existing["description"] = json!(if own.is_empty() { layers } else { format!("{own}. Also {layers}") });
            }
            None => {
                responses.insert(key, problem_response(&codes));
            }
        }
    }
    for (status, response) in responses.iter_mut() {
        normalise(status, response, shape);
    }
}

/// Every error response is problem+json by `$ref` (unless it documents its own error body, as the OAuth
/// endpoints do), and every response declares the headers it can carry.
fn normalise(status: &str, response: &mut Value, shape: &Shape) {
    let code: u16 = status.parse().unwrap_or(0);
    let Some(response) = response.as_object_mut() else { return };
    if code >= 400 {
        // Beside an error body of its own (the OAuth endpoints' RFC 6749 errors), an operation can still get
        // a problem from the layers in front of it (`http/edge.rs`, the body limit).
        let content = response.entry("content").or_insert_with(|| json!({}));
        match content.get_mut("application/problem+json") {
            Some(problem) => problem["schema"] = json!({ "$ref": PROBLEM }),
            None => content["application/problem+json"] = json!({ "schema": { "$ref": PROBLEM } }),
        }
    }
    let headers = response.entry("headers").or_insert_with(|| json!({}));
    let Some(headers) = headers.as_object_mut() else { return };
    let mut add = |name: &str| {
        headers.entry(name.to_string()).or_insert_with(|| header_ref(name));
    };
    add("Request-Id");
    // Any operation a deployment's change ledger deprecates announces it on every response (`http/metrics`).
    add("Deprecation");
    add("Sunset");
    add("Link");
    if shape.bearer {
        add("RateLimit-Policy");
        add("RateLimit");
    }
    match code {
        401 | 403 => add("WWW-Authenticate"),
        409 | 429 | 503 => add("Retry-After"),
        200..=299 if shape.post && shape.bearer => add("Idempotent-Replayed"),
        _ => {}
    }
    drop_empty(response);
}

fn drop_empty(response: &mut Map<String, Value>) {
    if response.get("content").and_then(Value::as_object).is_some_and(Map::is_empty) {
        response.remove("content");
    }
}
