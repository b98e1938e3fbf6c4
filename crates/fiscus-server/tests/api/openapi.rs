//! The OpenAPI 3.1 document against what the server does: the catalogue, cross-field rules, every served
//! route with its scope, the offline docs page, the common contract of every operation and named schemas.

use fiscus_apptest::spawn_app;
use fiscus_domain::catalogue::{self, Method};
use serde_json::Value;

#[tokio::test]
async fn the_document_is_openapi_31_and_agrees_with_the_catalogue() {
    let app = spawn_app().await;
    // Examples that compute spend credits.
    let sandbox = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&sandbox, 100, "examples").await.expect("grant");
    // Examples that read instruments find the demo's.
    app.load_demo().await;
    let doc: Value =
        app.http.get(app.url("/api/v2/openapi.json")).send().await.expect("request").json().await.expect("json");
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], "2.0.0");
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (key, method) in [("get", Method::Get), ("post", Method::Post), ("delete", Method::Delete)] {
            let Some(op) = item.get(key) else { continue };
            operations += 1;
            let entry = catalogue::find(method, path).unwrap_or_else(|| panic!("{key} {path} is not catalogued"));
            assert_eq!(op["operationId"], entry.id);
            assert_eq!(op["tags"][0], entry.group.name());
            assert_eq!(op["x-fiscus-scope"].as_str(), entry.scope, "{}", entry.id);
            match entry.scope {
                Some(scope) => {
                    assert_eq!(op["security"][0]["bearer"], serde_json::json!([]));
                    assert_eq!(op["security"][1]["oauth2"][0], scope);
                    for status in ["401", "403", "429"] {
                        assert!(op["responses"][status].is_object(), "{} documents {status}", entry.id);
                    }
                }
                None => assert!(path.contains("/oauth/")),
            }
            // Every operation that takes a JSON body documents an example that works.
            if key == "post" && entry.scope.is_some() && op.get("requestBody").is_some() {
                let mut example = op["requestBody"]["content"]["application/json"]["example"].clone();
                assert!(example.is_object(), "{} has an example body", entry.id);
                if path.ends_with("/quant/research/snapshots") {
                    // The documented snapshot freezes a run of the documented research example.
                    let runs = &doc["paths"]["/api/v2/quant/research/runs"]["post"];
                    let run_example = &runs["requestBody"]["content"]["application/json"]["example"];
                    let run: Value = app
                        .post_json("/api/v2/quant/research/runs", &app.key, run_example, None)
                        .await
                        .json()
                        .await
                        .expect("json");
                    example["run"] = run["id"].clone();
                }
                if path.contains("/investment/") {
                    // Investment examples name the demo book's first portfolio.
                    demo_book(&app).await;
                }
                if path.ends_with("/investment/governed-ai-operations") {
                    // The documented operation steers by a model portfolio drawn here.
                    demo_book(&app).await;
                    let universe = serde_json::json!({ "name": "Example", "theme": "quality", "source": "test",
                        "members": [{ "symbol": "MSFT", "relevance": 0.9 }] });
                    let u: Value = app
                        .post_json("/api/v2/investment/themes/universes", &app.key, &universe, None)
                        .await
                        .json()
                        .await
                        .expect("json");
                    let draw = format!("/api/v2/investment/themes/universes/{}/model-portfolio", u["id"]);
                    let model: Value =
                        app.post_json(&draw, &app.key, &serde_json::json!({}), None).await.json().await.expect("json");
                    example["model_portfolio"] = model["id"].clone();
                }
                let lqm = if path.contains("/lqm/") || path.contains("/qlms") {
                    Some(crate::lqm::example_path(&app, path, &mut example).await)
                } else if path.contains("/workflow") {
                    Some(crate::workflows::example_path(&app, path, &mut example).await)
                } else if path.contains("/bank-accounts") {
                    Some(fiscus_apptest::bank::example_path(&app, path, &mut example).await)
                } else {
                    None
                };
                let example = &example;
                // The example works against a live workspace (path ids name a freshly proposed action).
                let concrete = if let Some(p) = lqm {
                    p
                } else if path.contains("/agentic/identities/{uid}") {
                    let identity: Value = app
                        .post_json(
                            "/api/v2/actions/agentic/identities",
                            &app.key,
                            &serde_json::json!({ "name": "example", "public_key": "11qYAYKxCrfVS/7TyWQHOg7hcvPaoiMlrwIaaPcHURo=" }),
                            None,
                        )
                        .await
                        .json()
                        .await
                        .expect("json");
                    path.replace("{uid}", identity["id"].as_str().expect("id"))
                } else if path.contains("/investment/rebalance-proposals/{uid}") {
                    // A proposal needs a model portfolio a person approved at the console.
                    let universe = serde_json::json!({ "name": "Example", "theme": "quality", "source": "test",
                        "members": [{ "symbol": "MSFT", "relevance": 0.9 }, { "symbol": "AAPL", "relevance": 0.8 },
                                    { "symbol": "JNJ", "relevance": 0.7 }, { "symbol": "PG", "relevance": 0.7 },
                                    { "symbol": "KO", "relevance": 0.6 }] });
                    let u: Value = app
                        .post_json("/api/v2/investment/themes/universes", &app.key, &universe, None)
                        .await
                        .json()
                        .await
                        .expect("json");
                    let draw = format!("/api/v2/investment/themes/universes/{}/model-portfolio", u["id"]);
                    let model: Value =
                        app.post_json(&draw, &app.key, &serde_json::json!({}), None).await.json().await.expect("json");
                    let model_id = model["id"].as_str().expect("model");
                    let op = fiscus_apptest::console::enrolled_operator(
                        &app,
                        "examples@example.com",
                        fiscus_domain::people::Role::Approver,
                    )
                    .await;
                    let cookie = fiscus_apptest::console::sign_in(&app, &op).await;
                    crate::model_portfolios::console_decision(&app, &cookie, model_id, "approve").await;
                    let body =
                        serde_json::json!({ "portfolio_id": 1, "model_portfolio": model_id, "objective": "example" });
                    let operation: Value = app
                        .post_json("/api/v2/investment/governed-ai-operations", &app.key, &body, None)
                        .await
                        .json()
                        .await
                        .expect("json");
                    let rebalance = format!(
                        "/api/v2/investment/governed-ai-operations/{}/rebalance",
                        operation["id"].as_str().expect("id")
                    );
                    let proposal: Value = app
                        .post_json(&rebalance, &app.key, &serde_json::json!({}), None)
                        .await
                        .json()
                        .await
                        .expect("json");
                    path.replace("{uid}", proposal["id"].as_str().expect("proposal"))
                } else if path.contains("/investment/themes/universes/{universe}")
                    || path.contains("/investment/governed-ai-operations")
                {
                    // A universe of the demo's instruments: announced for the handoff example, handed off
                    // for the others; an operation on a model portfolio drawn from it.
                    demo_book(&app).await;
                    let handoff = path.ends_with("/handoff");
                    let mut universe = serde_json::json!({ "name": "Example", "theme": "quality", "source": "test" });
                    if !handoff {
                        universe["members"] = serde_json::json!([{ "symbol": "MSFT", "relevance": 0.9 }, { "symbol": "AAPL", "relevance": 0.8 }]);
                    }
                    let u: Value = app
                        .post_json("/api/v2/investment/themes/universes", &app.key, &universe, None)
                        .await
                        .json()
                        .await
                        .expect("json");
                    let u = u["id"].to_string();
                    if path.contains("/governed-ai-operations") {
                        let draw = format!("/api/v2/investment/themes/universes/{u}/model-portfolio");
                        let model: Value = app
                            .post_json(&draw, &app.key, &serde_json::json!({}), None)
                            .await
                            .json()
                            .await
                            .expect("json");
                        let op = serde_json::json!({ "portfolio_id": 1, "model_portfolio": model["id"], "objective": "example" });
                        let op: Value = app
                            .post_json("/api/v2/investment/governed-ai-operations", &app.key, &op, None)
                            .await
                            .json()
                            .await
                            .expect("json");
                        path.replace("{uid}", op["id"].as_str().expect("id"))
                    } else {
                        path.replace("{universe}", &u)
                    }
                } else if path.contains("/investment/portfolios/{portfolio}") {
                    // The documented example proposes on the demo book (its first portfolio).
                    demo_book(&app).await;
                    let list: Value =
                        app.get("/api/v2/investment/portfolios", &app.key).await.json().await.expect("json");
                    path.replace("{portfolio}", &list["data"][0]["id"].to_string())
                } else if path.contains("/client-intelligence/calls") {
                    crate::calls::example_path(&app, path).await
                } else if path.contains("/agents/spaces/{uid}") {
                    // The documented prompt runs on the market watch space, promoted by an admin.
                    crate::workflows::demo(&app).await;
                    path.replace("{uid}", &crate::agent_spaces::promoted(&app, "market_watch").await)
                } else if path.contains("/quant/models/{key}") {
                    // The documented example runs the documented model.
                    path.replace("{key}", "robust_z")
                } else if path.contains("{uid}") {
                    let action: Value = app
                        .post_json("/api/v2/actions", &app.key, &fiscus_apptest::actions::proposal(), None)
                        .await
                        .json()
                        .await
                        .expect("json");
                    path.replace("{uid}", action["id"].as_str().expect("id"))
                } else {
                    path.clone()
                };
                let key = format!("example-{}", entry.id);
                let response = app.post_json(&concrete, &app.key, example, Some(&key)).await;
                // The example is accepted as input: success, or (for execution requests on a fresh action)
                // a refusal by the action's state or its control gates rather than by body validation.
                let status = response.status();
                let body: Value = response.json().await.unwrap_or(Value::Null);
                // A rebalance's model portfolio awaits a person's approval, which no credential can give.
                assert!(
                    status.is_success()
                        || body["code"] == "execution_refused"
                        || body["code"] == "action_state_conflict"
                        || body["code"] == "rebalance_refused",
                    "{} example answered {status}: {body}",
                    entry.id
                );
                // Every POST honours Idempotency-Key: the same request again is a replay.
                let again = app.post_json(&concrete, &app.key, example, Some(&key)).await;
                assert_eq!(
                    again.headers().get("idempotent-replayed").and_then(|v| v.to_str().ok()),
                    Some("true"),
                    "{} does not honour Idempotency-Key",
                    entry.id
                );
            }
        }
    }
    assert!(operations >= 12);
}

/// The rules across fields the handlers enforce are in the schemas (`openapi/rules.rs`), and the server
/// refuses what they refuse: an `efficient_return` optimisation without its `target_return`.
#[tokio::test]
async fn cross_field_rules_are_stated_in_the_schemas_the_server_holds_to() {
    let doc = fiscus_server::app::openapi_document();
    for name in fiscus_server::openapi::rules::schemas() {
        let schema = &doc["components"]["schemas"][name];
        let ruled = ["oneOf", "allOf"].iter().any(|k| schema[*k].is_array())
            || ["if", "additionalProperties"].iter().any(|k| schema[*k].is_object());
        assert!(ruled, "{name} carries its rules: {schema:#}");
    }
    for (pointer, keywords) in fiscus_server::openapi::rules::patched() {
        let member = doc["components"]["schemas"].pointer(pointer).unwrap_or_else(|| panic!("{pointer} exists"));
        for (k, v) in keywords.as_object().expect("keywords") {
            assert_eq!(&member[k], v, "{pointer} holds `{k}`");
        }
    }
    // Free-form members take any value whose strings are free of U+0000 at any depth (a recursive schema).
    let metadata = &doc["components"]["schemas"]["ProposalRequest"]["properties"]["metadata"];
    assert_eq!(metadata["additionalProperties"]["$ref"], "#/components/schemas/JsonValue");
    let value = &doc["components"]["schemas"]["JsonValue"];
    assert_eq!(value["items"]["$ref"], "#/components/schemas/JsonValue");
    assert_eq!(value["pattern"], "^[^\\u0000]*$");
    let optimisation = &doc["components"]["schemas"]["OptimizationRequest"]["allOf"];
    let rule = optimisation
        .as_array()
        .expect("rules")
        .iter()
        .find(|r| r["if"]["properties"]["objective"]["const"] == "efficient_return")
        .expect("the efficient_return rule");
    assert_eq!(rule["then"]["required"], serde_json::json!(["target_return"]));
    let spdx = &doc["components"]["schemas"]["RegisterRequest"]["properties"]["license"]["anyOf"];
    assert!(spdx[0]["enum"].as_array().is_some_and(|ids| ids.len() > 600 && ids.contains(&"MIT".into())), "{spdx}");

    let app = spawn_app().await;
    let body = serde_json::json!({ "objective": "efficient_return",
        "returns": fiscus_apptest::columns(&["A", "B"], &serde_json::json!([[0.01, 0.0], [0.0, 0.02], [-0.01, 0.01]])) });
    let refused = app.post_json("/api/v2/quant/compute/optimizations", &app.key, &body, None).await;
    let problem = fiscus_apptest::problem(refused, 422, "invalid_request").await;
    assert_eq!(problem["errors"][0]["field"], "target_return", "{problem}");
}

#[test]
fn every_served_route_is_catalogued_with_its_scope() {
    let report = fiscus_platform::catalogue_check::check(&fiscus_server::app::openapi_document());
    assert!(report.mismatches.is_empty(), "{:?}", report.mismatches);
    assert_eq!(report.scopes, 75);
    assert_eq!(report.seed_operations, 114);
    assert!(report.served.contains(&"get_workspace"));
}

#[tokio::test]
async fn the_docs_page_works_offline() {
    let app = spawn_app().await;
    let page = app.http.get(app.url("/docs")).send().await.expect("request").text().await.expect("text");
    assert!(page.contains("/api/v2/workspace"));
    assert!(!page.contains("<script"), "no scripts");
    // URLs may appear as text (a webhook endpoint's example); nothing may be loaded or linked from elsewhere.
    for reference in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!page.contains(reference), "nothing fetched from elsewhere: {reference}");
    }
    let problem = app.http.get(app.url("/problems/scope_missing")).send().await.expect("request");
    assert_eq!(problem.status(), 200);
}

/// The common contract is in the document for every operation: the headers every response carries, the
/// problem schema by reference, `Idempotency-Key` on every bearer POST, and links that name real operations.
#[tokio::test]
async fn every_operation_states_the_common_contract() {
    let app = spawn_app().await;
    let doc: Value =
        app.http.get(app.url("/api/v2/openapi.json")).send().await.expect("request").json().await.expect("json");
    assert_eq!(doc["servers"][0]["url"], "/");
    let ids: Vec<&str> = doc["paths"]
        .as_object()
        .expect("paths")
        .values()
        .flat_map(|item| item.as_object().expect("item").values())
        .filter_map(|op| op["operationId"].as_str())
        .collect();
    let mut links = 0;
    let mut examples_seen = std::collections::HashSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("item") {
            let bearer = !path.contains("/oauth/");
            let id = op["operationId"].as_str().expect("id");
            for status in ["400", "413", "500"] {
                assert!(op["responses"][status].is_object(), "{id} documents {status}");
            }
            if bearer {
                assert!(op["responses"]["422"].is_object(), "{id} documents 422 (undeclared query parameters)");
            }
            if method == "post" && bearer {
                let params = op["parameters"].as_array().expect("parameters");
                let key = params.iter().find(|p| p["name"] == "Idempotency-Key" && p["in"] == "header");
                let example = key.unwrap_or_else(|| panic!("{id} takes Idempotency-Key"))["example"].as_str();
                assert!(example.is_some_and(|e| e.ends_with(id)), "{id}: an example key of its own: {example:?}");
                assert!(examples_seen.insert(example.map(str::to_string)), "{id}: its example key is another's");
            }
            for (status, response) in op["responses"].as_object().expect("responses") {
                assert!(response["headers"]["Request-Id"].is_object(), "{id} {status} declares Request-Id");
                if let Some(problem) = response.pointer("/content/application~1problem+json/schema") {
                    assert_eq!(problem["$ref"], "#/components/schemas/Problem", "{id} {status}");
                }
                for link in response["links"].as_object().into_iter().flat_map(|l| l.values()) {
                    links += 1;
                    let target = link["operationId"].as_str().expect("target");
                    assert!(ids.contains(&target), "{id} links to unknown {target}");
                }
            }
            if bearer {
                assert!(op["responses"]["429"]["headers"]["Retry-After"].is_object(), "{id}");
                assert!(op["responses"]["403"]["headers"]["WWW-Authenticate"].is_object(), "{id}");
            }
        }
    }
    assert!(links >= 10, "the workflows are linked: {links}");
}

/// The demo data, once per database (found by hash the second time).
async fn demo_book(app: &fiscus_apptest::TestApp) {
    app.load_demo().await;
}

/// utoipa names a component after its type and silently keeps one of two types with the same name, so a
/// second `ScenarioRequest` would document the other's body. Every schema type's name is unique.
#[test]
fn every_schema_type_has_a_name_of_its_own() {
    fn walk(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).expect("dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("source");
                let mut derived = false;
                for line in text.lines().map(str::trim) {
                    if line.starts_with("#[derive(") && line.contains("ToSchema") {
                        derived = true;
                    } else if derived && (line.starts_with("pub struct ") || line.starts_with("pub enum ")) {
                        let name: String = line
                            .split_whitespace()
                            .nth(2)
                            .unwrap_or("")
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        out.push((name, path.display().to_string()));
                        derived = false;
                    } else if derived && !line.starts_with("#[") && !line.starts_with("///") && !line.is_empty() {
                        derived = false;
                    }
                }
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut names = Vec::new();
    // Every crate: since the server was split along its areas, schema types live in each area's crate.
    for krate in std::fs::read_dir(&root).expect("crates").flatten() {
        let src = krate.path().join("src");
        if src.is_dir() {
            walk(&src, &mut names);
        }
    }
    assert!(names.len() > 100, "{}", names.len());
    let mut seen: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
    for (name, file) in &names {
        if let Some(first) = seen.insert(name, file) {
            panic!("two schema types are named {name}: {first} and {file}");
        }
    }
}

#[tokio::test]
async fn the_gateways_state_where_they_answer_outside_grant_otherwise_than_the_seed() {
    let app = spawn_app().await;
    let doc: Value =
        app.http.get(app.url("/api/v2/openapi.json")).send().await.expect("request").json().await.expect("json");
    for path in ["/api/v2/agent-execution/mcp", "/api/v2/agent-execution/a2a"] {
        let description = doc["paths"][path]["post"]["description"].as_str().unwrap_or_default();
        assert!(
            description.contains("Deviation from the seed") && description.contains("-32602"),
            "{path}: {description}"
        );
    }
}
