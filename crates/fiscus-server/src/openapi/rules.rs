//! Rules across fields that the handlers enforce, stated in the request schemas as JSON Schema keywords
//! (`oneOf`, `if`/`then`), so that a generated client or a schema-driven tester knows them before it is
//! refused. Each rule here has its handler-side twin, named beside it; the suite's Schemathesis run sends
//! schema-valid bodies and fails on any 422 for one of them, which keeps the two in step.
//!
//! Rules no JSON Schema can state stay in the handlers and in the prose: comparisons of two values
//! (`max_weight` not below `min_weight`), lengths that must match (a weight per asset), and facts of the
//! workspace (a named instrument exists).

use serde_json::{Value, json};

/// One way to fill a body: these fields given (present and not `null`), those left out (absent or `null`).
struct Branch {
    give: &'static [&'static str],
    without: &'static [&'static str],
}

const fn give(fields: &'static [&'static str]) -> Branch {
    Branch { give: fields, without: &[] }
}

/// Exactly one of the branches; each branch's given fields of the other branches must be left out.
fn exactly_one(branches: &[Branch]) -> Value {
    let alternatives: Vec<Value> = branches
        .iter()
        .map(|b| {
            let mut properties = serde_json::Map::new();
            for f in b.give {
                properties.insert(f.to_string(), json!({ "not": { "type": "null" } }));
            }
            let others = branches.iter().flat_map(|o| o.give.iter()).filter(|f| !b.give.contains(f));
            for f in others.chain(b.without.iter()) {
                properties.insert(f.to_string(), json!({ "type": "null" }));
            }
            json!({ "required": b.give, "properties": properties })
        })
        .collect();
    json!({ "oneOf": alternatives })
}

/// When `field` is `value`, `then` fields are required (and not `null`).
fn when(field: &str, value: &str, then: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> =
        then.iter().map(|f| (f.to_string(), json!({ "not": { "type": "null" } }))).collect();
    json!({
        "if": { "required": [field], "properties": { field: { "const": value } } },
        "then": { "required": then, "properties": properties }
    })
}

/// The rules, by request schema.
fn rules() -> Vec<(&'static str, Vec<Value>)> {
    // Inline numbers carry their own dates (none): a date range applies to data-plane reads only.
    let instruments_or_returns =
        || exactly_one(&[give(&["instruments"]), Branch { give: &["returns"], without: &["start", "end"] }]);
    let one_series = || {
        exactly_one(&[
            give(&["series"]),
            give(&["instrument"]),
            Branch { give: &["values"], without: &["start", "end"] },
            give(&["ledger_account"]),
        ])
    };
    vec![
        // Written by the types they belong to (fiscus-domain).
        ("ProposalRequest", vec![fiscus_domain::actions::envelope::ProposalRequest::schema_conditions()]),
        ("TokenForm", vec![fiscus_domain::api::platform::oauth_form_conditions()]),
        ("TokenReferenceForm", vec![fiscus_domain::api::platform::oauth_form_conditions()]),
        // compute/optimization.rs `pin`, compute/inputs.rs `returns_of`.
        (
            "OptimizationRequest",
            vec![
                instruments_or_returns(),
                when("objective", "efficient_return", &["target_return"]),
                when("objective", "efficient_risk", &["target_volatility"]),
            ],
        ),
        // compute/scenarios.rs (through `returns_of`); shocks are a stress's, and a stress needs them.
        (
            "ScenarioRequest",
            vec![instruments_or_returns(), {
                let mut rule = when("method", "stress", &["shocks"]);
                rule["else"] = json!({ "properties": { "shocks": { "type": "null" } } });
                rule
            }],
        ),
        // compute/models.rs `pin_input`: a feature set is isolation forest's input only.
        (
            "AnomalyRequest",
            vec![
                // compute/models.rs `pin_input` and `pin_features`: a series (inline values, or one
                // instrument, optionally with catalogue features) or an inline feature set; never a panel.
                json!({ "properties": { "input": {
                    "allOf": [exactly_one(&[
                        Branch { give: &["values"], without: &["start", "end", "transform", "features"] },
                        give(&["instruments"]),
                        Branch { give: &["columns", "rows"], without: &["start", "end", "transform", "features"] },
                    ])],
                    "properties": { "returns": { "type": "null" }, "instruments": { "maxItems": 1 } }
                } } }),
                json!({
                "if": { "required": ["method"], "properties": { "method": { "const": "robust_z" } } },
                "then": { "properties": { "input": { "properties": {
                    "features": { "type": "null" }, "columns": { "type": "null" }, "rows": { "type": "null" }
                } } } }
                }),
            ],
        ),
        // compute/simulation.rs `check`.
        ("SimulationRequest", vec![exactly_one(&[give(&["instruments"]), give(&["parameters"])])]),
        // compute/generative.rs: GBM from either; the bootstrap resamples instruments' history.
        (
            "GenerativeRequest",
            vec![
                exactly_one(&[give(&["instruments"]), give(&["parameters"])]),
                when("generator", "block_bootstrap", &["instruments"]),
            ],
        ),
        // lqm/qlm.rs `create`: 1 to 8 components, each role a member name (`role_ok`).
        (
            "CreateQlm",
            vec![json!({ "allOf": [{ "properties": { "components": {
                "minProperties": 1,
                "maxProperties": 8,
                "propertyNames": { "pattern": "^[a-z][a-z0-9_]{0,31}$" }
            } } }] })],
        ),
        // investment/scenarios.rs.
        ("StressRequest", vec![exactly_one(&[give(&["historical"]), give(&["hypothetical"])])]),
        // investment/scenarios.rs `stress`: at least one shock, each a return from -1 to 10, at most 500 named.
        (
            "HypotheticalScenario",
            vec![
                json!({ "anyOf": [
                    { "required": ["market"], "properties": { "market": { "type": "number" } } },
                    { "required": ["sectors"], "properties": { "sectors": { "minProperties": 1 } } },
                    { "required": ["instruments"], "properties": { "instruments": { "minProperties": 1 } } }
                ] }),
                json!({ "properties": {
                    "sectors": { "additionalProperties": { "type": "number", "minimum": -1, "maximum": 10 } },
                    "instruments": { "additionalProperties": { "type": "number", "minimum": -1, "maximum": 10 } }
                } }),
            ],
        ),
        // compute/forecast.rs, compute/tournament.rs.
        ("ForecastRequest", vec![one_series()]),
        ("TournamentRequest", vec![one_series()]),
        // compute/research.rs `pin`: new steps are filed under a project; a re-run under its snapshot's.
        (
            "ResearchRunRequest",
            vec![exactly_one(&[give(&["steps", "project"]), Branch { give: &["snapshot"], without: &["project"] }])],
        ),
        // workflows/studio.rs: a version of a workflow, or a new workflow with its name.
        ("CreateWorkflowVersion", vec![exactly_one(&[give(&["workflow_uid"]), give(&["name"])])]),
        // compute/research.rs: a step is exactly one computation.
        (
            "ResearchStepRequest",
            vec![exactly_one(&[
                give(&["optimization"]),
                give(&["simulation"]),
                give(&["backtest"]),
                give(&["forecast"]),
                give(&["tournament"]),
                give(&["model_run"]),
            ])],
        ),
        // investment/scenarios.rs: a preset, or a window with both ends (a start after its end is refused
        // there: two values cannot be compared in JSON Schema).
        (
            "HistoricalScenario",
            vec![exactly_one(&[give(&["preset"]), Branch { give: &["start", "end"], without: &[] }])],
        ),
    ]
}

/// Tagged enums whose variants take no other member (`deny_unknown_fields` on the enum): utoipa leaves
/// the variants open, so they are closed here.
const CLOSED_VARIANTS: &[&str] = &["CallConsentRequest", "ContractTarget"];

/// U+0000 is refused in every string the API reads (`http/json.rs`, `http/query.rs`): every string schema
/// without a pattern of its own says so with one.
const NO_NUL: &str = "^[^\\u0000]*$";

fn no_nul(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            // A lone alternative (what utoipa makes of an inlined type with a description) is the schema.
            let lone = match map.get("oneOf") {
                Some(Value::Array(alternatives)) if alternatives.len() == 1 => alternatives[0].as_object().cloned(),
                _ => None,
            };
            if let Some(only) = lone {
                map.remove("oneOf");
                for (k, v) in only {
                    map.entry(k).or_insert(v);
                }
            }
            let is_string = match map.get("type") {
                Some(Value::String(t)) => t == "string",
                Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
                _ => false,
            };
            let constrained = ["pattern", "enum", "const", "format", "$ref"].iter().any(|k| map.contains_key(*k));
            if is_string && !constrained {
                map.insert("pattern".into(), json!(NO_NUL));
            }
            // Member names too, wherever an object takes members it does not list.
            let is_object = match map.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
                _ => false,
            };
            if is_object && map.get("additionalProperties") != Some(&Value::Bool(false)) {
                map.entry("propertyNames").or_insert_with(|| json!({ "pattern": NO_NUL }));
            }
            for (key, value) in map.iter_mut() {
                // Examples are values, not schemas.
                if key != "example" && key != "examples" && key != "default" {
                    no_nul(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(no_nul),
        _ => {}
    }
}

/// Adds each rule to its schema in `components.schemas` (under `allOf` when there are several).
pub fn apply(doc: &mut Value) {
    if let Some(schemas) = doc.pointer_mut("/components/schemas") {
        no_nul(schemas);
    }
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for item in paths.values_mut() {
            for op in item.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
                if let Some(parameters) = op.get_mut("parameters") {
                    no_nul(parameters);
                }
                if let Some(body) = op.get_mut("requestBody") {
                    no_nul(body);
                }
            }
        }
    }
    for name in CLOSED_VARIANTS {
        let variants = doc.pointer_mut(&format!("/components/schemas/{name}/oneOf")).and_then(Value::as_array_mut);
        for variant in variants.into_iter().flatten() {
            variant["additionalProperties"] = json!(false);
        }
    }
    for (name, mut keywords) in rules() {
        let Some(schema) = doc.pointer_mut(&format!("/components/schemas/{name}")).and_then(Value::as_object_mut)
        else {
            // A renamed schema would drop its rules silently: tests/api/openapi.rs checks each is applied.
            continue;
        };
        if keywords.len() == 1 {
            if let Some(Value::Object(rule)) = keywords.pop() {
                schema.extend(rule);
            }
        } else {
            schema.insert("allOf".into(), Value::Array(keywords));
        }
    }
}

/// The schemas that carry rules (for the test that each is found).
pub fn schemas() -> Vec<&'static str> {
    rules().into_iter().map(|(name, _)| name).collect()
}
