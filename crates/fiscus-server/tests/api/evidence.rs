//! Autonomy assessment evidence: sealed, classified by domain, granting nothing, and listed page by page in
//! creation order.

use fiscus_apptest::{EVIDENCE, evidence_body, spawn_app};
use serde_json::Value;

#[tokio::test]
async fn evidence_is_sealed_classified_and_grants_nothing() {
    let app = spawn_app().await;
    let response = app.post_json(EVIDENCE, &app.key, &evidence_body("SOC 2"), None).await;
    assert_eq!(response.status(), 201);
    let record: Value = response.json().await.expect("json");
    assert_eq!(record["domain"], "security");
    assert_eq!(record["grants_authority"], false);
    let hash = record["evidence_hash"].as_str().expect("hash");
    assert!(fiscus_actions::rules::autonomy::is_sha256_ref(hash));
    // The seal is reproducible from the record alone (minus the seal itself, plus the workspace).
    let mut payload = record.clone();
    let obj = payload.as_object_mut().expect("object");
    obj.remove("evidence_hash");
    obj.insert("workspace_id".into(), Value::String(app.workspace_id.clone()));
    assert_eq!(fiscus_domain::evidence::seal(&payload).expect("seal"), hash);
}

#[tokio::test]
async fn evidence_lists_page_by_page_in_creation_order() {
    let app = spawn_app().await;
    for i in 0..5 {
        let mut body = evidence_body(&format!("item {i}"));
        if i % 2 == 1 {
            body["domain"] = Value::String("governance".into());
        }
        assert_eq!(app.post_json(EVIDENCE, &app.key, &body, None).await.status(), 201);
    }
    let first: Value = app.get(&format!("{EVIDENCE}?limit=2"), &app.key).await.json().await.expect("json");
    assert_eq!(first["object"], "list");
    assert_eq!(first["has_more"], true);
    assert_eq!(first["data"][0]["title"], "item 0");
    let after = first["next_after_id"].as_str().expect("cursor");
    let second: Value =
        app.get(&format!("{EVIDENCE}?limit=2&after_id={after}"), &app.key).await.json().await.expect("json");
    assert_eq!(second["data"][0]["title"], "item 2");
    let third: Value = app
        .get(&format!("{EVIDENCE}?limit=2&after_id={}", second["next_after_id"].as_str().expect("cursor")), &app.key)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(third["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(third["has_more"], false);
    assert_eq!(third["next_after_id"], Value::Null);
    let governance: Value =
        app.get(&format!("{EVIDENCE}?domain=governance"), &app.key).await.json().await.expect("json");
    assert_eq!(governance["data"].as_array().map(Vec::len), Some(2));
}
