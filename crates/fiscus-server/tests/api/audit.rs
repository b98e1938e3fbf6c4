use crate::helpers::{EVIDENCE, evidence_body, spawn_app};
use fiscus_domain::audit::ChainBreak;

async fn head(app: &crate::helpers::TestApp) -> i64 {
    let body: serde_json::Value = app.get("/api/v2/trust/audit-head", &app.key).await.json().await.expect("json");
    body["seq"].as_i64().expect("seq")
}

#[tokio::test]
async fn every_mutating_request_extends_the_chain_and_it_verifies() {
    let app = spawn_app().await;
    let before = head(&app).await;
    app.post_json(EVIDENCE, &app.key, &evidence_body("audited"), None).await;
    assert_eq!(head(&app).await, before + 1);
    let report = fiscus_server::verify::verify_workspace(&app.state.store, &app.workspace_id).await.expect("verify");
    assert_eq!(report.result, Ok(()));
    assert_eq!(report.events, before + 1);
}

#[tokio::test]
async fn a_row_changed_by_hand_is_named() {
    let app = spawn_app().await;
    for i in 0..3 {
        app.post_json(EVIDENCE, &app.key, &evidence_body(&format!("e{i}")), None).await;
    }
    app.execute(&format!(
        "UPDATE audit_events SET details = '{{\"tampered\":true}}' WHERE workspace_id = '{}' AND seq = 4",
        app.workspace_id
    ))
    .await;
    let report = fiscus_server::verify::verify_workspace(&app.state.store, &app.workspace_id).await.expect("verify");
    assert_eq!(report.result, Err(ChainBreak::ContentAltered { seq: 4 }));
}

#[tokio::test]
async fn a_removed_tail_is_caught_by_the_head() {
    let app = spawn_app().await;
    app.post_json(EVIDENCE, &app.key, &evidence_body("last"), None).await;
    let (seq,): (i64,) = {
        let mut conn = app.state.store.read().await.expect("conn");
        sqlx::query_as("SELECT seq FROM audit_heads WHERE workspace_id = $1")
            .bind(&app.workspace_id)
            .fetch_one(&mut *conn)
            .await
            .expect("head")
    };
    app.execute(&format!("DELETE FROM audit_events WHERE workspace_id = '{}' AND seq = {seq}", app.workspace_id)).await;
    let report = fiscus_server::verify::verify_workspace(&app.state.store, &app.workspace_id).await.expect("verify");
    assert!(matches!(report.result, Err(ChainBreak::HeadMismatch { .. })), "{:?}", report.result);
}
