//! A2A 1.0 (JSON-RPC binding) on the agent gateway: the card, messages that name a skill, persisted tasks,
//! the protocol's errors. `python_clients` drives the same with the unmodified `a2a-sdk` client.

use crate::signed_clients::{Signed, granted_client};
use fiscus_apptest::actions::proposal;
use fiscus_apptest::{TestApp, spawn_app};
use fiscus_domain::credentials::Environment;
use serde_json::{Value, json};

const A2A: &str = "/api/v2/agent-execution/a2a";

async fn rpc(app: &TestApp, key: &str, method: &str, params: Value) -> Value {
    let response = app
        .http
        .post(app.url(A2A))
        .bearer_auth(key)
        .header("A2A-Version", "1.0")
        .json(&json!({ "jsonrpc": "2.0", "id": "r1", "method": method, "params": params }))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.expect("json");
    assert_eq!((body["jsonrpc"].as_str(), body["id"].as_str()), (Some("2.0"), Some("r1")), "{body}");
    body
}

fn message(id: &str, skill: &str, arguments: Value) -> Value {
    json!({ "message": {
        "messageId": id, "role": "ROLE_USER",
        "parts": [{ "data": { "skill": skill, "arguments": arguments } }],
    } })
}

#[tokio::test]
async fn the_card_is_public_and_points_at_the_json_rpc_interface() {
    let app = spawn_app().await;
    for path in ["/api/v2/agent-execution/.well-known/agent-card.json", "/.well-known/agent-card.json"] {
        let card: Value = app.http.get(app.url(path)).send().await.expect("request").json().await.expect("json");
        assert_eq!(card["supportedInterfaces"][0]["url"], format!("{}{A2A}", app.base));
        assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
        assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
        assert_eq!(card["capabilities"]["streaming"], false);
        let skills: Vec<&str> =
            card["skills"].as_array().expect("skills").iter().filter_map(|s| s["id"].as_str()).collect();
        assert!(skills.contains(&"get_actions") && skills.contains(&"post_actions"), "{skills:?}");
        assert!(!skills.iter().any(|s| s.contains("a2a") || s.contains("mcp")), "entry points are not skills");
    }
}

#[tokio::test]
async fn a_message_naming_a_skill_becomes_a_persisted_terminal_task() {
    let app = spawn_app().await;
    // Protobuf's Value sends whole numbers as doubles; the operation sees integers.
    let sent = rpc(&app, &app.key, "SendMessage", message("m-1", "get_actions", json!({ "limit": 5.0 }))).await;
    let task = &sent["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    assert_eq!(task["artifacts"][0]["parts"][0]["data"]["object"], "list");
    assert_eq!(task["history"][0]["messageId"], "m-1");
    assert_eq!(task["metadata"]["httpStatus"], 200);
    let task_id = task["id"].as_str().expect("id").to_string();
    let context = task["contextId"].as_str().expect("context").to_string();

    // The same message again is the same task, not a second call.
    let again = rpc(&app, &app.key, "SendMessage", message("m-1", "get_actions", json!({ "limit": 5.0 }))).await;
    assert_eq!(again["result"]["task"]["id"], task_id.as_str());
    let reused = rpc(&app, &app.key, "SendMessage", message("m-1", "get_workspace", json!({}))).await;
    assert_eq!(reused["error"]["code"], -32602, "{reused}");

    // A write skill is the operation itself; its refusal is a failed task with the problem document.
    let created = rpc(
        &app,
        &app.key,
        "SendMessage",
        json!({ "message": {
            "messageId": "m-2", "role": "ROLE_USER", "contextId": context,
            "parts": [{ "data": { "skill": "post_actions", "arguments": { "body": proposal(), "idempotency_key": "a2a-1" } } }],
        } }),
    )
    .await;
    assert_eq!(created["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{created}");
    assert_eq!(created["result"]["task"]["artifacts"][0]["parts"][0]["data"]["control_state"], "pending_approval");
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, 1);
    let mut bad = proposal();
    bad["amount_minor"] = json!(-5);
    let failed = rpc(&app, &app.key, "SendMessage", message("m-3", "post_actions", json!({ "body": bad }))).await;
    let failed = &failed["result"]["task"];
    assert_eq!(failed["status"]["state"], "TASK_STATE_FAILED");
    assert_eq!(failed["status"]["message"]["parts"][0]["data"]["code"], "invalid_request");
    assert!(failed.get("artifacts").is_none());

    let read = rpc(&app, &app.key, "GetTask", json!({ "id": task_id, "historyLength": 0 })).await;
    assert_eq!(read["result"]["id"], task_id.as_str());
    assert!(read["result"].get("history").is_none());
    let in_context = rpc(&app, &app.key, "ListTasks", json!({ "contextId": context, "includeArtifacts": true })).await;
    assert_eq!(in_context["result"]["totalSize"], 2, "{in_context}");
    let first = rpc(&app, &app.key, "ListTasks", json!({ "pageSize": 2 })).await;
    assert_eq!(
        (first["result"]["totalSize"].as_i64(), first["result"]["tasks"].as_array().map(Vec::len)),
        (Some(3), Some(2))
    );
    assert!(first["result"]["tasks"][0].get("artifacts").is_none(), "artifacts only when asked");
    let token = first["result"]["nextPageToken"].as_str().expect("token");
    let second = rpc(&app, &app.key, "ListTasks", json!({ "pageSize": 2, "pageToken": token })).await;
    assert_eq!(second["result"]["tasks"][0]["id"], task_id.as_str());
    assert_eq!(second["result"]["nextPageToken"], "");
    let failed_only = rpc(&app, &app.key, "ListTasks", json!({ "status": "TASK_STATE_FAILED" })).await;
    assert_eq!(failed_only["result"]["totalSize"], 1);

    let cancel = rpc(&app, &app.key, "CancelTask", json!({ "id": task_id })).await;
    assert_eq!(cancel["error"]["code"], -32002);
    let continued = rpc(
        &app,
        &app.key,
        "SendMessage",
        json!({ "message": { "messageId": "m-4", "role": "ROLE_USER", "taskId": task_id, "parts": [{ "text": "more" }] } }),
    )
    .await;
    assert_eq!(continued["error"]["code"], -32004);

    // Another application of the workspace sees none of it.
    let (_, other) = app.new_app(Environment::Sandbox, "agent:execution:invoke actions:read", None).await;
    assert_eq!(rpc(&app, &other, "GetTask", json!({ "id": task_id })).await["error"]["code"], -32001);
    assert_eq!(rpc(&app, &other, "ListTasks", json!({})).await["result"]["totalSize"], 0);
    let audit: Value = app.get("/api/v2/agents/invocations?limit=10", &app.key).await.json().await.expect("json");
    let a2a_rows = audit["data"].as_array().expect("rows").iter().filter(|r| r["protocol"] == "a2a").count();
    assert_eq!(a2a_rows, 3, "one invocation per task, none for the repeated message: {audit}");
}

#[tokio::test]
async fn protocol_errors_are_json_rpc_errors_and_record_nothing() {
    let app = spawn_app().await;
    let no_version = app
        .http
        .post(app.url(A2A))
        .bearer_auth(&app.key)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": { "id": "task_x" } }))
        .send()
        .await
        .expect("request");
    let body: Value = no_version.json().await.expect("json");
    assert_eq!(body["error"]["code"], -32009, "no A2A-Version means 0.3: {body}");
    assert_eq!(body["error"]["data"][0]["reason"], "VERSION_NOT_SUPPORTED");
    let text = rpc(
        &app,
        &app.key,
        "SendMessage",
        json!({ "message": { "messageId": "t", "role": "ROLE_USER", "parts": [{ "text": "pay the supplier" }] } }),
    )
    .await;
    assert_eq!(text["error"]["code"], -32005);
    assert_eq!(rpc(&app, &app.key, "message/send", json!({})).await["error"]["code"], -32601);
    assert_eq!(rpc(&app, &app.key, "SendStreamingMessage", json!({})).await["error"]["code"], -32004);
    assert_eq!(rpc(&app, &app.key, "GetTaskPushNotificationConfig", json!({})).await["error"]["code"], -32003);
    assert_eq!(rpc(&app, &app.key, "SendMessage", json!({})).await["error"]["code"], -32602);
    assert_eq!(rpc(&app, &app.key, "GetTask", json!({ "id": "task_nope" })).await["error"]["code"], -32001);
    assert_eq!(rpc(&app, &app.key, "ListTasks", json!({ "pageSize": 1000 })).await["error"]["code"], -32602);
    let unknown = rpc(&app, &app.key, "SendMessage", message("u", "no_such_tool", json!({}))).await;
    assert_eq!(unknown["error"]["code"], -32602);
    let notified = app
        .http
        .post(app.url(A2A))
        .bearer_auth(&app.key)
        .header("A2A-Version", "1.0")
        .json(&json!({ "jsonrpc": "2.0", "method": "SendMessage", "params": message("n", "get_actions", json!({})) }))
        .send()
        .await
        .expect("request");
    assert_eq!(notified.status(), 202);
    assert_eq!(app.count("SELECT COUNT(*) FROM a2a_tasks").await, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM tool_invocations").await, 0);
}

#[tokio::test]
async fn a_skill_outside_the_grant_is_refused_and_only_granted_skills_are_listed() {
    let app = spawn_app().await;
    let signer = granted_client(&app, &["post_agent_execution_proposals"], &["payment"], (600, 10_000)).await;
    let call = |method: &str, params: Value| {
        Signed::post(A2A, &json!({ "jsonrpc": "2.0", "id": 9, "method": method, "params": params }))
    };
    // The signed test client covers no A2A-Version header, so it is sent unsigned as a client would.
    let send = |s: Signed| {
        let app = &app;
        let signer = &signer;
        async move {
            let (input, signature, digest) = s.headers(app, signer);
            app.http
                .post(app.url(A2A))
                .header("Signature-Input", input)
                .header("Signature", signature)
                .header("Content-Digest", digest.expect("digest"))
                .header("Content-Type", "application/json")
                .header("A2A-Version", "1.0")
                .body(s.body.clone().expect("body"))
                .send()
                .await
                .expect("request")
                .json::<Value>()
                .await
                .expect("json")
        }
    };
    let card = send(call("GetExtendedAgentCard", json!({}))).await;
    let mut skills: Vec<&str> =
        card["result"]["skills"].as_array().expect("skills").iter().filter_map(|s| s["id"].as_str()).collect();
    skills.sort_unstable();
    assert!(skills.contains(&"post_agent_execution_proposals") && !skills.contains(&"get_actions"), "{skills:?}");
    let outside = send(call("SendMessage", message("o-1", "post_actions", json!({ "body": proposal() })))).await;
    assert_eq!(outside["error"]["code"], -32602, "{outside}");
    assert_eq!(outside["error"]["data"][0]["reason"], "OUTSIDE_GRANT");
    assert_eq!(outside["error"]["data"][0]["metadata"]["code"], "outside_grant");
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM a2a_tasks").await, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM tool_invocations WHERE outcome = 'refused'").await, 1);
    let proposed =
        send(call("SendMessage", message("o-2", "post_agent_execution_proposals", json!({ "body": proposal() }))))
            .await;
    assert_eq!(proposed["result"]["task"]["artifacts"][0]["parts"][0]["data"]["control_state"], "draft", "{proposed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_message_sent_twice_at_once_has_one_effect() {
    let app = spawn_app().await;
    let sent = message("twice", "post_actions", json!({ "body": proposal() }));
    let (a, b) =
        tokio::join!(rpc(&app, &app.key, "SendMessage", sent.clone()), rpc(&app, &app.key, "SendMessage", sent));
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, 1, "{a} {b}");
    assert_eq!(app.count("SELECT COUNT(*) FROM a2a_tasks").await, 1);
    let ids: Vec<&str> = [&a, &b].iter().filter_map(|r| r["result"]["task"]["id"].as_str()).collect();
    assert!(!ids.is_empty() && ids.iter().all(|i| *i == ids[0]), "{a} {b}");
}
