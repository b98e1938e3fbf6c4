//! The tool catalogue, generated from the operation catalogue and the OpenAPI document: every served
//! operation an agent may use is a tool, with an `inputSchema` (its path and query parameters, `body` for
//! its request body, `idempotency_key` for a POST) and an `outputSchema` (its success response), both
//! self-contained JSON Schema 2020-12 (`$ref`s point into the tool's own `$defs`). Nothing here is written per
//! operation: an area that lands later appears as tools by being in the document.
//!
//! Not tools: the protocol entry points themselves (MCP, A2A), the OAuth endpoints (no scope; they
//! authenticate clients), and the workflow gateway (its own allowlist). Human-plane decisions are not API
//! operations at all, so they can never be tools.

use fiscus_domain::catalogue::{self, Method, Operation};
use fiscus_http::document::ApiDocument;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// Operations that are entry points, not tools.
const NOT_TOOLS: [&str; 4] =
    ["post_root_mcp", "post_agent_execution_mcp", "post_agent_execution_a2a", "post_agent_execution_workflows_a2a"];

/// Where a tool argument goes in the HTTP request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    Path,
    Query,
    Body,
    IdempotencyKey,
}

#[derive(Clone, Debug)]
pub struct Tool {
    pub operation: &'static Operation,
    pub title: String,
    pub description: String,
    /// Argument name → where it goes.
    pub arguments: BTreeMap<String, Slot>,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
}

impl Tool {
    pub fn name(&self) -> &'static str {
        self.operation.id
    }

    pub fn read_only(&self) -> bool {
        self.operation.method == Method::Get
    }

    /// The tool as MCP's `tools/list` describes it (2025-11-25).
    pub fn mcp(&self) -> Value {
        let mut tool = json!({
            "name": self.name(),
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.read_only(),
                "destructiveHint": false,
                "idempotentHint": self.read_only(),
                "openWorldHint": false,
            },
        });
        if let Some(out) = &self.output_schema {
            tool["outputSchema"] = out.clone();
        }
        tool
    }
}

/// Every tool, in catalogue order, generated once from this build's OpenAPI document (the one the state
/// hands down; every state of a process holds the same build's document, so the first is kept).
pub fn catalogue(api: &ApiDocument) -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| generate(api.json()))
}

pub fn find(api: &ApiDocument, name: &str) -> Option<&'static Tool> {
    catalogue(api).iter().find(|t| t.name() == name)
}

/// The tools of `doc`: one per documented, scoped operation that is not an entry point.
pub fn generate(doc: &Value) -> Vec<Tool> {
    let components = doc.pointer("/components").cloned().unwrap_or(Value::Null);
    let mut tools = Vec::new();
    for op in catalogue::OPERATIONS {
        if op.scope.is_none() || NOT_TOOLS.contains(&op.id) {
            continue;
        }
        let method = op.method.as_str().to_ascii_lowercase();
        let Some(entry) = doc.pointer(&format!("/paths/{}/{method}", pointer_escape(&op.full_path()))) else {
            continue; // not served by this build
        };
        tools.push(tool(op, entry, &components));
    }
    tools
}

fn pointer_escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn tool(op: &'static Operation, entry: &Value, components: &Value) -> Tool {
    let summary = entry["summary"].as_str().unwrap_or(op.id).trim_end_matches('.').to_string();
    let description = match entry["description"].as_str() {
        Some(d) if !d.is_empty() => format!("{summary}. {d}"),
        _ => format!("{summary}. `{} {}` (scope `{}`).", op.method.as_str(), op.full_path(), op.scope.unwrap_or("")),
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut arguments = BTreeMap::new();
    let mut refs = BTreeSet::new();
    for param in entry["parameters"].as_array().into_iter().flatten() {
        let param = resolve(param, components);
        let (Some(name), Some(location)) = (param["name"].as_str(), param["in"].as_str()) else { continue };
        let slot = match location {
            "path" => Slot::Path,
            "query" => Slot::Query,
            "header" if name.eq_ignore_ascii_case("idempotency-key") => Slot::IdempotencyKey,
            _ => continue,
        };
        let argument = if slot == Slot::IdempotencyKey { "idempotency_key".to_string() } else { name.to_string() };
        let mut schema = rewrite(&param["schema"], &mut refs);
        if let (Some(d), Value::Object(m)) = (param["description"].as_str(), &mut schema) {
            m.entry("description").or_insert_with(|| Value::String(d.to_string()));
        }
        if param["required"] == true {
            required.push(Value::String(argument.clone()));
        }
        properties.insert(argument.clone(), schema);
        arguments.insert(argument, slot);
    }
    if let Some(body) = entry.pointer("/requestBody/content/application~1json/schema") {
        let mut schema = rewrite(body, &mut refs);
        if let (Some(d), Value::Object(m)) =
            (entry.pointer("/requestBody/description").and_then(Value::as_str), &mut schema)
        {
            m.entry("description").or_insert_with(|| Value::String(d.to_string()));
        }
        if entry.pointer("/requestBody/required") == Some(&Value::Bool(true)) {
            required.push(Value::String("body".into()));
        }
        properties.insert("body".into(), schema);
        arguments.insert("body".into(), Slot::Body);
    }
    let mut input = json!({ "type": "object", "properties": properties, "additionalProperties": false });
    if !required.is_empty() {
        input["required"] = Value::Array(required);
    }
    attach_defs(&mut input, refs, components);
    Tool {
        operation: op,
        title: summary,
        description,
        arguments,
        input_schema: input,
        output_schema: output_schema(entry, components),
    }
}

/// The first 2xx JSON response's schema, as an object schema at the root (MCP requires it); `None` when the
/// response is not an object.
fn output_schema(entry: &Value, components: &Value) -> Option<Value> {
    let responses = entry["responses"].as_object()?;
    let (_, response) = responses.iter().find(|(status, _)| status.starts_with('2'))?;
    let schema = response.pointer("/content/application~1json/schema")?;
    let mut refs = BTreeSet::new();
    // A `$ref` at the root is replaced by what it names, so the root says `"type": "object"`.
    let root = match schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")) {
        Some(name) => components.pointer(&format!("/schemas/{}", pointer_escape(name)))?.clone(),
        None => schema.clone(),
    };
    if root["type"] != "object" {
        return None;
    }
    let mut out = rewrite(&root, &mut refs);
    attach_defs(&mut out, refs, components);
    Some(out)
}

/// A `$ref`'d parameter, resolved.
fn resolve<'a>(value: &'a Value, components: &'a Value) -> &'a Value {
    match value["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/")) {
        Some(path) => components.pointer(&format!("/{path}")).unwrap_or(value),
        None => value,
    }
}

/// Copies a schema with `#/components/schemas/X` rewritten to `#/$defs/X`, collecting the names, and
/// without `example`/`examples` (for people reading the document, not part of the contract).
fn rewrite(schema: &Value, refs: &mut BTreeSet<String>) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                match k.as_str() {
                    "example" | "examples" => {}
                    "$ref" => {
                        let r = v.as_str().unwrap_or_default();
                        let rewritten = match r.strip_prefix("#/components/schemas/") {
                            Some(name) => {
                                refs.insert(name.to_string());
                                format!("#/$defs/{name}")
                            }
                            None => r.to_string(),
                        };
                        out.insert(k.clone(), Value::String(rewritten));
                    }
                    // Maps of names to schemas: the names are data, the values are schemas.
                    "properties" | "patternProperties" | "$defs" => {
                        let named = v.as_object().map(|props| {
                            props.iter().map(|(name, s)| (name.clone(), rewrite(s, refs))).collect::<Map<_, _>>()
                        });
                        out.insert(k.clone(), named.map_or_else(|| v.clone(), Value::Object));
                    }
                    _ => {
                        out.insert(k.clone(), rewrite(v, refs));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| rewrite(v, refs)).collect()),
        other => other.clone(),
    }
}

/// Adds `$defs` with every component `refs` names, transitively.
fn attach_defs(schema: &mut Value, mut refs: BTreeSet<String>, components: &Value) {
    let mut defs = Map::new();
    while let Some(name) = refs.pop_first() {
        if defs.contains_key(&name) {
            continue;
        }
        let Some(component) = components.pointer(&format!("/schemas/{}", pointer_escape(&name))) else { continue };
        let mut more = BTreeSet::new();
        let rewritten = rewrite(component, &mut more);
        defs.insert(name, rewritten);
        refs.extend(more.into_iter().filter(|n| !defs.contains_key(n)));
    }
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
}
