//! Rules across fields that the handlers enforce, stated in the request schemas as JSON Schema keywords
//! (`oneOf`, `if`/`then`), so that a generated client or a schema-driven tester knows them before it is
//! refused. Each rule here has its handler-side twin, named beside it; the suite's Schemathesis run sends
//! schema-valid bodies and fails on any 422 for one of them, which keeps the two in step.
//!
//! Rules no JSON Schema can state stay in the handlers and in the prose: comparisons of two values
//! (`max_weight` not below `min_weight`), lengths that must match (a weight per asset), and facts of the
//! workspace (a named instrument exists).
//!
//! It is long because it is the list of the document's rules, each with its own small function; one list is what
//! a reviewer checks against the conventions.

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
        ("ProposalRequest", vec![fiscus_actions::rules::envelope::ProposalRequest::schema_conditions()]),
        ("TokenForm", vec![fiscus_platform::views::oauth_form_conditions()]),
        ("TokenReferenceForm", vec![fiscus_platform::views::oauth_form_conditions()]),
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
                        Branch { give: &["instruments"], without: &["features"] },
                        // Catalogue features are computed from prices: no transform (`pin_features`).
                        Branch { give: &["instruments", "features"], without: &["transform"] },
                        Branch { give: &["columns"], without: &["start", "end", "transform", "features"] },
                    ])],
                    "properties": { "returns": { "type": "null" }, "instruments": { "maxItems": 1 } }
                } } }),
                // Each method's parameters (compute/models.rs `pin`, with the method as the model).
                json!({ "allOf": (["isolation_forest", "robust_z"].into_iter().filter_map(fiscus_models::compute::models::find).map(|m| json!({
                    "if": { "required": ["method"], "properties": { "method": { "const": m.key } } },
                    "then": { "properties": { "parameters": { "anyOf": [{ "type": "null" }, (m.parameters)()] } } }
                })).collect::<Vec<Value>>()) }),
                json!({
                "if": { "required": ["method"], "properties": { "method": { "const": "robust_z" } } },
                "then": { "properties": { "input": { "properties": {
                    "features": { "type": "null" }, "columns": { "type": "null" }
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
        // compute/models.rs `pin` and `conflict`: the parameters of one model of the catalogue or a promoted
        // LQM's, and an input of one shape (the path's model is checked against its catalogue entry, 409).
        (
            "ModelRunRequest",
            vec![json!({ "allOf": [{ "properties": {
                "input": { "allOf": [{ "anyOf": model_input_branches(&[Shape::Series, Shape::Panel, Shape::Features]) }] }
            } }] })],
        ),
        // compute/research.rs `pin_step`: a model of the catalogue, with its parameters and input.
        (
            "ResearchModelStep",
            vec![
                json!({ "properties": { "model": { "enum": fiscus_models::compute::models::CATALOGUE.iter().map(|m| m.key).collect::<Vec<_>>() } } }),
                json!({ "allOf": fiscus_models::compute::models::CATALOGUE.iter().map(|m| json!({
                "if": { "required": ["model"], "properties": { "model": { "const": m.key } } },
                "then": { "properties": {
                    "parameters": { "anyOf": [{ "type": "null" }, (m.parameters)()] },
                    "input": { "anyOf": model_input_branches(&shapes_read(m.input)) }
                } }
            })).collect::<Vec<Value>>() }),
            ],
        ),
        // lqm/fit.rs `hyperparameters` and `members`: each algorithm's members and their rules. Without
        // `algorithm`, the model's family decides which algorithm's they must be (409 there: the family is the
        // model's state, not the body's).
        (
            "RetrainingInput",
            vec![json!({ "properties": { "hyperparameters": hyperparameters() } }), {
                let per_algorithm: Vec<Value> = fiscus_models::rules::lqm::family::Algorithm::ALL
                    .iter()
                    .map(|a| {
                        json!({
                            "if": { "required": ["algorithm"], "properties": { "algorithm": { "const": a.as_str() } } },
                            "then": { "properties": { "hyperparameters": { "propertyNames": { "enum": fiscus_models::lqm::fit::members(*a) } } } }
                        })
                    })
                    .collect();
                json!({ "allOf": per_algorithm })
            }],
        ),
    ]
}

/// Keywords merged into one member's schema (a JSON pointer below `components/schemas`) rather than added
/// beside it under `allOf`: generators (openapi-python-client) make a second model of a member restated
/// under `allOf` and cannot merge the two.
fn patches() -> Vec<(&'static str, Value)> {
    vec![
        // compute/backtest.rs `pin`: 1 to 500 instruments, each weight from 0 to 1 (a name per instrument,
        // so a weight per instrument by construction).
        (
            "/BacktestRequest/properties/weights",
            json!({
                "minProperties": 1,
                "maxProperties": 500,
                "propertyNames": { "minLength": 1, "maxLength": 64, "pattern": NO_NUL },
                "additionalProperties": { "type": "number", "minimum": 0, "maximum": 1 }
            }),
        ),
        // compute/inputs.rs `pin`: an instrument named twice.
        ("/SimulationRequest/properties/instruments", json!({ "uniqueItems": true })),
        ("/GenerativeRequest/properties/instruments", json!({ "uniqueItems": true })),
        ("/ScenarioRequest/properties/instruments", json!({ "uniqueItems": true })),
        ("/OptimizationRequest/properties/instruments", json!({ "uniqueItems": true })),
        ("/ModelInput/properties/instruments", json!({ "uniqueItems": true })),
        ("/ConstructRequest/properties/instruments", json!({ "uniqueItems": true })),
        // compute/simulation.rs `GbmAssets::check` and compute/inputs.rs `by_asset`: assets, correlations, weights and
        // moves by name, each name text.
        ("/GbmAssets", names(1, 50)),
        ("/GbmAsset/properties/correlations", names(0, 49)),
        ("/SimulationRequest/properties/weights", names(1, 50)),
        ("/ScenarioRequest/properties/weights", names(1, 100)),
        ("/ShockRequest/properties/moves", names(1, 500)),
        // compute/inputs.rs `InlineReturns::check`: 1 to 500 assets named as text, each with 2 to 10,000
        // returns above -1 and at most 100.
        ("/ReturnColumns", named_series(500, 2, 10_000, json!({ "exclusiveMinimum": -1, "maximum": 100 }))),
        // fiscus-data routes/intake.rs: a column mapping names fields some kind has.
        ("/ImportBody/properties/columns", json!({ "propertyNames": { "enum": fiscus_data::import::all_fields() } })),
        // compute/models.rs `pin_features`: features of the catalogue, each named once.
        (
            "/ModelInput/properties/features",
            json!({
                "uniqueItems": true,
                "items": { "enum": fiscus_data_core::rules::features::FEATURES.iter().map(|f| f.key).collect::<Vec<_>>() }
            }),
        ),
        // compute/models.rs `pin_features`: 1 to 64 features named as text, each with 3 to 20,000 values
        // finite and at most 1e12 in size.
        ("/FeatureColumns", named_series(64, 3, 20_000, json!({ "minimum": -1e12, "maximum": 1e12 }))),
        // compute/models.rs `pin` and `conflict`: the parameters of one model of the catalogue or of a
        // promoted LQM. Without `type`, each alternative holds of objects only, so `null` stays allowed.
        (
            "/ModelRunRequest/properties/parameters",
            json!({
                "anyOf": fiscus_models::compute::models::CATALOGUE.iter().map(|m| (m.parameters)())
                    .chain(std::iter::once(lqm_parameters()))
                    .map(|mut alternative| {
                        if let Some(o) = alternative.as_object_mut() {
                            o.remove("type");
                        }
                        alternative
                    })
                    .collect::<Vec<Value>>()
            }),
        ),
    ]
}

/// An object from 1 to `names` names (text) to series of `min` to `max` numbers within `bounds`.
fn named_series(names: usize, min: usize, max: usize, bounds: Value) -> Value {
    let mut number = json!({ "type": "number" });
    if let (Some(n), Value::Object(b)) = (number.as_object_mut(), bounds) {
        n.extend(b);
    }
    json!({
        "type": "object",
        "minProperties": 1,
        "maxProperties": names,
        "propertyNames": text_name(),
        "additionalProperties": { "type": "array", "minItems": min, "maxItems": max, "items": number }
    })
}

/// An object of `min` to `max` members named as text (the members' own schema is the derive's).
fn names(min: usize, max: usize) -> Value {
    json!({ "minProperties": min, "maxProperties": max, "propertyNames": text_name() })
}

/// A name of 1 to 64 characters of text (`fiscus_domain::fields::text_ok`), as a member name's schema.
fn text_name() -> Value {
    let mut name = serde_json::to_value(fiscus_domain::fields::schema::text::<1, 64>()).unwrap_or_default();
    if let Some(o) = name.as_object_mut() {
        o.remove("type");
    }
    name
}

/// A promoted LQM's run parameters (compute/models.rs `pin_lqm`).
fn lqm_parameters() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": { "horizon": { "type": "integer", "minimum": 1, "maximum": 500 } }
    })
}

use fiscus_models::compute::models::InputShape as Shape;

/// The shapes a model reading `shape` takes (a feature-set model takes a series too).
fn shapes_read(shape: Shape) -> Vec<Shape> {
    match shape {
        Shape::Features => vec![Shape::Series, Shape::Features],
        other => vec![other],
    }
}

/// The ways to give a model's input of these shapes (compute/models.rs `shapes_of`, its twin): each gives
/// its members and leaves every other out.
fn model_input_branches(shapes: &[Shape]) -> Vec<Value> {
    const MEMBERS: [&str; 9] =
        ["values", "returns", "instruments", "transform", "start", "end", "features", "columns", "rows"];
    let branch = |give: &[&str], allow: &[&str], one_instrument: bool| {
        let mut properties = serde_json::Map::new();
        for m in MEMBERS {
            if give.contains(&m) {
                properties.insert(m.into(), json!({ "not": { "type": "null" } }));
            } else if !allow.contains(&m) {
                properties.insert(m.into(), json!({ "type": "null" }));
            }
        }
        if one_instrument {
            properties.insert("instruments".into(), json!({ "not": { "type": "null" }, "maxItems": 1 }));
        }
        json!({ "required": give, "properties": properties })
    };
    let mut branches = Vec::new();
    for shape in shapes {
        match shape {
            Shape::Series => {
                branches.push(branch(&["values"], &[], false));
                branches.push(branch(&["instruments"], &["transform", "start", "end"], true));
            }
            Shape::Panel => {
                branches.push(branch(&["returns"], &[], false));
                branches.push(branch(&["instruments"], &["start", "end"], false));
            }
            Shape::Features => {
                branches.push(branch(&["columns"], &[], false));
                branches.push(branch(&["features", "instruments"], &["start", "end"], true));
            }
        }
    }
    branches
}

/// The hyperparameters of one trainable algorithm (`lqm/fit.rs`): Holt-Winters' (a damped model has a
/// trend; a season has a period of 2 to 366, no season none or 0), robust z's or the VaR algorithms'.
fn hyperparameters() -> Value {
    use fiscus_models::rules::lqm::family::Algorithm;
    json!({
        "type": ["object", "null"],
        "additionalProperties": false,
        "properties": {
            "trend": { "type": "boolean" },
            "damped": { "type": "boolean" },
            "seasonal": { "enum": ["none", "additive", "multiplicative"] },
            "period": { "type": "integer", "minimum": 0, "maximum": 366 },
            "threshold": { "type": "number", "exclusiveMinimum": 0, "maximum": 100 },
            "cutoff": { "type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5 }
        },
        "anyOf": std::iter::once(json!({ "type": "null" }))
            .chain(Algorithm::ALL.iter().map(|a| json!({ "propertyNames": { "enum": fiscus_models::lqm::fit::members(*a) } })))
            .collect::<Vec<Value>>(),
        "allOf": [
            {
                "if": { "type": "object", "required": ["damped"], "properties": { "damped": { "const": true } } },
                "then": { "required": ["trend"], "properties": { "trend": { "const": true } } }
            },
            {
                "if": { "type": "object", "required": ["seasonal"], "properties": { "seasonal": { "enum": ["additive", "multiplicative"] } } },
                "then": { "required": ["period"], "properties": { "period": { "minimum": 2 } } },
                "else": { "properties": { "period": { "const": 0 } } }
            }
        ]
    })
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

/// Any JSON value whose strings and member names are free of U+0000, at any depth: what a free-form member
/// of a request (`metadata`, `metrics`) takes. The refusal is `http/json.rs`'s; JSON Schema can state it of a
/// nested value only through a recursive schema.
const JSON_VALUE: &str = "JsonValue";

/// The free-form members of request bodies, as JSON pointers below `components/schemas`: objects take
/// `JsonValue` members, arrays `JsonValue` items.
const FREE_OBJECTS: &[&str] = &[
    "/ProposalRequest/properties/metadata",
    "/EvidenceRequest/properties/metadata",
    "/JsonRpcRequest/properties/params",
    // The request object itself: members JSON-RPC does not define are values like any other.
    "/JsonRpcRequest",
];
const FREE_ARRAYS: &[&str] = &["/CheckRequest/properties/metrics", "/CheckRequest/properties/metadata"];

fn free_values(doc: &mut Value) {
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else {
        return;
    };
    let reference = json!({ "$ref": format!("#/components/schemas/{JSON_VALUE}") });
    schemas.insert(
        JSON_VALUE.into(),
        // No `type`: each keyword applies to the values of its own type only, which says "any value" to a
        // validator and to generators that cannot follow a recursive union (openapi-python-client).
        json!({
            "description": "Any JSON value; no string or member name, at any depth, contains U+0000.",
            "pattern": NO_NUL,
            "items": reference,
            "propertyNames": { "pattern": NO_NUL },
            "additionalProperties": reference
        }),
    );
    let schemas = doc.pointer_mut("/components/schemas").expect("schemas");
    for pointer in FREE_OBJECTS {
        if let Some(Value::Object(member)) = schemas.pointer_mut(pointer) {
            member.insert("additionalProperties".into(), reference.clone());
        }
    }
    for pointer in FREE_ARRAYS {
        if let Some(Value::Object(member)) = schemas.pointer_mut(pointer) {
            member.insert("items".into(), reference.clone());
        }
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
    free_values(doc);
    for (pointer, keywords) in patches() {
        let member = doc.pointer_mut(&format!("/components/schemas{pointer}")).and_then(Value::as_object_mut);
        // A renamed member would drop its rule silently: tests/api/openapi.rs checks each is applied.
        if let (Some(member), Value::Object(keywords)) = (member, keywords) {
            member.extend(keywords);
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

/// The members that carry patched keywords, with them (for the test that each is found and holds them).
pub fn patched() -> Vec<(&'static str, Value)> {
    patches()
}
