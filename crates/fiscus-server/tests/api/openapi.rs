use crate::helpers::spawn_app;
use fiscus_domain::catalogue::{self, Method};
use serde_json::Value;

#[tokio::test]
async fn the_document_is_openapi_31_and_agrees_with_the_catalogue() {
    let app = spawn_app().await;
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
                    assert_eq!(op["security"][0]["bearer"][0], scope);
                    for status in ["401", "403", "429"] {
                        assert!(op["responses"][status].is_object(), "{} documents {status}", entry.id);
                    }
                }
                None => assert!(path.contains("/oauth/")),
            }
            // Every operation that takes a JSON body documents an example that works.
            if key == "post" && entry.scope.is_some() && op.get("requestBody").is_some() {
                let example = &op["requestBody"]["content"]["application/json"]["example"];
                assert!(example.is_object(), "{} has an example body", entry.id);
                // The example works against a live workspace (path ids name a freshly proposed action).
                let concrete = if path.contains("/agentic/identities/{uid}") {
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
                } else if path.contains("{uid}") {
                    let action: Value = app
                        .post_json("/api/v2/actions", &app.key, &crate::actions::proposal(), None)
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
                // a refusal by the control gates rather than by body validation.
                let status = response.status();
                let body: Value = response.json().await.unwrap_or(Value::Null);
                assert!(
                    status.is_success() || body["code"] == "execution_refused",
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

#[test]
fn every_served_route_is_catalogued_with_its_scope() {
    let report = fiscus_server::catalogue_check::check();
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
    assert!(!page.contains("http://") && !page.contains("https://"), "nothing fetched from elsewhere");
    let problem = app.http.get(app.url("/problems/scope_missing")).send().await.expect("request");
    assert_eq!(problem.status(), 200);
}
