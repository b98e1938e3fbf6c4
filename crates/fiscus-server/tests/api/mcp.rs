//! MCP (2025-11-25, Streamable HTTP, stateless, JSON) on both endpoints, over tools generated from the
//! catalogue. `python_clients` drives the same with the unmodified `mcp` SDK.

use crate::signed_clients::{Signed, granted_client};
use fiscus_apptest::actions::proposal;
use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::credentials::Environment;
use serde_json::{Value, json};

async fn rpc(app: &TestApp, key: &str, method: &str, params: Value) -> reqwest::Response {
    app.http
        .post(app.url("/api/mcp"))
        .bearer_auth(key)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25")
        .json(&json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }))
        .send()
        .await
        .expect("request")
}

async fn result(app: &TestApp, key: &str, method: &str, params: Value) -> Value {
    let response = rpc(app, key, method, params).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("mcp-session-id").is_none(), "stateless: no session");
    let body: Value = response.json().await.expect("json");
    assert_eq!((body["jsonrpc"].as_str(), body["id"].as_i64()), (Some("2.0"), Some(7)), "{body}");
    body
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect()
}

#[tokio::test]
async fn the_bearer_endpoint_initialises_lists_and_calls_tools_statelessly() {
    let app = spawn_app().await;
    let init = result(
        &app,
        &app.key,
        "initialize",
        json!({
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "test", "version": "1" }
        }),
    )
    .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], false);
    let older = result(&app, &app.key, "initialize", json!({ "protocolVersion": "2025-06-18" })).await;
    assert_eq!(older["result"]["protocolVersion"], "2025-06-18");
    let notified = app
        .http
        .post(app.url("/api/mcp"))
        .bearer_auth(&app.key)
        .json(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .send()
        .await
        .expect("request");
    assert_eq!(notified.status(), 202);
    assert!(notified.text().await.expect("body").is_empty());

    let list = result(&app, &app.key, "tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().expect("tools");
    let get_action = tools.iter().find(|t| t["name"] == "get_actions_uid").expect("get_actions_uid is a tool");
    assert_eq!(get_action["inputSchema"]["type"], "object");
    assert_eq!(get_action["inputSchema"]["required"], json!(["uid"]));
    assert_eq!(get_action["outputSchema"]["type"], "object");
    assert_eq!(get_action["annotations"]["readOnlyHint"], true);
    assert!(!tool_names(&list).iter().any(|n| n.contains("mcp") || n.contains("oauth")), "entry points are not tools");

    let called = result(&app, &app.key, "tools/call", json!({ "name": "get_workspace", "arguments": {} })).await;
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(called["result"]["structuredContent"]["id"], app.workspace_id.as_str());
    let text: Value =
        serde_json::from_str(called["result"]["content"][0]["text"].as_str().expect("text")).expect("json");
    assert_eq!(text["id"], app.workspace_id.as_str());

    // A tool call is the operation itself: its validation, its effect, its errors.
    let created = result(
        &app,
        &app.key,
        "tools/call",
        json!({
            "name": "post_actions", "arguments": { "body": proposal(), "idempotency_key": "mcp-1" }
        }),
    )
    .await;
    assert_eq!(created["result"]["isError"], false, "{created}");
    let id = created["result"]["structuredContent"]["id"].as_str().expect("id").to_string();
    let read =
        result(&app, &app.key, "tools/call", json!({ "name": "get_actions_uid", "arguments": { "uid": id } })).await;
    assert_eq!(read["result"]["structuredContent"]["control_state"], "pending_approval");
    let mut bad = proposal();
    bad["amount_minor"] = json!(-5);
    let refused =
        result(&app, &app.key, "tools/call", json!({ "name": "post_actions", "arguments": { "body": bad } })).await;
    assert_eq!(refused["result"]["isError"], true);
    assert!(refused["result"].get("structuredContent").is_none());
    let answer: Value =
        serde_json::from_str(refused["result"]["content"][0]["text"].as_str().expect("text")).expect("json");
    assert_eq!(answer["code"], "invalid_request");
    let missing = result(&app, &app.key, "tools/call", json!({ "name": "get_actions_uid", "arguments": {} })).await;
    assert_eq!(missing["error"]["code"], -32602);
    let unknown_argument =
        result(&app, &app.key, "tools/call", json!({ "name": "get_workspace", "arguments": { "x": 1 } })).await;
    assert_eq!(unknown_argument["error"]["code"], -32602);
    let unknown = result(&app, &app.key, "server/discover", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);

    // Transport rules: GET is 405, a batch and an unknown protocol version are 400.
    let get = app.http.get(app.url("/api/mcp")).bearer_auth(&app.key).send().await.expect("request");
    assert_eq!(get.status(), 405);
    // A batch is answered as JSON-RPC answers an invalid request (MCP 2025-06-18 has no batches): on every
    // JSON-RPC endpoint, and nothing in it runs.
    for path in [
        "/api/mcp",
        "/api/v2/agent-execution/mcp",
        "/api/v2/agent-execution/a2a",
        "/api/v2/agent-execution/workflows/a2a",
    ] {
        let batch = app
            .http
            .post(app.url(path))
            .bearer_auth(&app.key)
            .header("A2A-Version", "1.0")
            .json(&json!([{ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": { "name": "post_actions", "arguments": {} } }]))
            .send()
            .await
            .expect("request");
        assert_eq!(batch.status(), 400, "{path}");
        assert_eq!(batch.headers()["content-type"], "application/json", "{path}");
        let batch: Value = batch.json().await.expect("json");
        assert_eq!((batch["jsonrpc"].as_str(), &batch["id"]), (Some("2.0"), &Value::Null), "{path}");
        assert_eq!(batch["error"]["code"], -32600, "{path}");
        assert!(batch.get("result").is_none(), "{path}");
    }
    let old = app
        .http
        .post(app.url("/api/mcp"))
        .bearer_auth(&app.key)
        .header("MCP-Protocol-Version", "2024-01-01")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }))
        .send()
        .await
        .expect("request");
    problem(old, 400, "malformed_request").await;
}

#[tokio::test]
async fn an_unauthenticated_call_points_at_the_protected_resource_metadata() {
    let app = spawn_app().await;
    let response = app
        .http
        .post(app.url("/api/mcp"))
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize" }))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 401);
    let challenge = response.headers()["www-authenticate"].to_str().expect("header").to_string();
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/api/mcp", app.base);
    assert!(challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")), "{challenge}");
    let metadata: Value = app.http.get(&metadata_url).send().await.expect("request").json().await.expect("json");
    assert_eq!(metadata["resource"], format!("{}/api/mcp", app.base));
    assert_eq!(metadata["authorization_servers"], json!([app.base]));
    assert_eq!(metadata["scopes_supported"], json!(["agents:mcp:read"]));
}

#[tokio::test]
async fn a_tool_outside_the_scopes_or_the_grant_is_refused_at_every_entry() {
    let app = spawn_app().await;
    // Bearer: only what the scopes allow is offered, and a call of anything else is refused and audited.
    let (_, key) = app.new_app(Environment::Sandbox, "agents:mcp:read workspace:read", None).await;
    let list = result(&app, &key, "tools/list", json!({})).await;
    assert_eq!(tool_names(&list), vec!["get_agents_invocations", "get_agents_tools", "get_workspace"]);
    let refused =
        result(&app, &key, "tools/call", json!({ "name": "post_actions", "arguments": { "body": proposal() } })).await;
    assert_eq!(refused["error"]["code"], -32602);
    assert_eq!(refused["error"]["data"]["code"], "scope_missing");
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, 0);
    let tools: Value = app.get("/api/v2/agents/tools", &key).await.json().await.expect("json");
    let granted: Vec<&str> = tools["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|t| t["granted"] == true)
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(granted, vec!["get_agents_invocations", "get_agents_tools", "get_workspace"]);
    let audit: Value = app.get("/api/v2/agents/invocations?limit=5", &key).await.json().await.expect("json");
    let row = &audit["data"][0];
    assert_eq!(
        (row["tool"].as_str(), row["outcome"].as_str(), row["protocol"].as_str()),
        (Some("post_actions"), Some("refused"), Some("mcp"))
    );
    assert!(row["request_hash"].as_str().expect("hash").starts_with("sha256:"));
    assert!(row.get("arguments").is_none() && row.get("body").is_none(), "hash-only: {row}");

    // Signed client on the gateway: only the grant's tools, and the rest refused as outside the grant.
    let signer = granted_client(
        &app,
        &["get_agent_execution_actions_uid", "post_agent_execution_proposals"],
        &["payment"],
        (600, 10_000),
    )
    .await;
    let call = |method: &str, params: Value| {
        Signed::post(
            "/api/v2/agent-execution/mcp",
            &json!({ "jsonrpc": "2.0", "id": 3, "method": method, "params": params }),
        )
    };
    let listed: Value = call("tools/list", json!({})).send(&app, &signer).await.json().await.expect("json");
    let mut names = tool_names(&listed);
    names.sort();
    // The grant's operations, and the gateway's reads of the client itself, which every active client has.
    assert_eq!(
        names,
        vec![
            "get_agent_execution_actions_uid",
            "get_agent_execution_capabilities",
            "get_agent_execution_requests_uid",
            "get_agent_execution_service_level",
            "get_agent_execution_usage",
            "post_agent_execution_proposals",
        ]
    );
    let outside: Value = call("tools/call", json!({ "name": "get_actions", "arguments": {} }))
        .send(&app, &signer)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(outside["error"]["data"]["code"], "outside_grant");
    let proposed: Value =
        call("tools/call", json!({ "name": "post_agent_execution_proposals", "arguments": { "body": proposal() } }))
            .send(&app, &signer)
            .await
            .json()
            .await
            .expect("json");
    assert_eq!(proposed["result"]["structuredContent"]["control_state"], "draft", "{proposed}");
    // The grant's action kinds bind tool calls too.
    let mut transfer = proposal();
    transfer["kind"] = json!("transfer");
    let kind: Value =
        call("tools/call", json!({ "name": "post_agent_execution_proposals", "arguments": { "body": transfer } }))
            .send(&app, &signer)
            .await
            .json()
            .await
            .expect("json");
    assert_eq!(kind["result"]["isError"], true);
    assert!(kind["result"]["content"][0]["text"].as_str().expect("text").contains("outside_grant"));
}

#[test]
fn every_tool_schema_is_self_contained_and_a_new_operation_becomes_a_tool_with_no_mcp_code() {
    let doc = fiscus_server::app::openapi_document();
    let tools = fiscus_agents::tools::generate(&doc);
    assert!(tools.len() >= 25, "{}", tools.len());
    for tool in &tools {
        for schema in [Some(&tool.input_schema), tool.output_schema.as_ref()].into_iter().flatten() {
            assert_eq!(schema["type"], "object", "{}", tool.name());
            let text = schema.to_string();
            assert!(!text.contains("#/components/"), "{}: a $ref leaves the tool's schema", tool.name());
            for (i, _) in text.match_indices("\"#/$defs/") {
                let name: String = text[i + 9..].chars().take_while(|c| *c != '"').collect();
                assert!(schema["$defs"].get(&name).is_some(), "{}: $defs lacks {name}", tool.name());
            }
        }
    }
    // A catalogued operation the document does not have is no tool; once the document has it, it is one
    // (the operation is taken out of this build's document first, so the test holds whatever is served).
    let mut shrunk = doc.clone();
    shrunk["paths"].as_object_mut().expect("paths").remove("/api/v2/investment/risk");
    let tools = fiscus_agents::tools::generate(&shrunk);
    assert!(tools.iter().all(|t| t.name() != "get_investment_risk"));
    let mut grown = shrunk.clone();
    grown["paths"]["/api/v2/investment/risk"] = json!({ "get": {
        "operationId": "get_investment_risk", "summary": "Portfolio risk.",
        "parameters": [{ "name": "limit", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 1 } }],
        "responses": { "200": { "description": "A page", "content": { "application/json": {
            "schema": { "type": "object", "properties": { "data": { "type": "array" } } } } } } }
    } });
    let more = fiscus_agents::tools::generate(&grown);
    let instruments = more.iter().find(|t| t.name() == "get_investment_risk").expect("the new operation is a tool");
    assert_eq!(instruments.input_schema["properties"]["limit"]["minimum"], 1);
    assert_eq!(more.len(), tools.len() + 1);
}
