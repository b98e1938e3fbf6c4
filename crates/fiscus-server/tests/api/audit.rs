//! The audit chain over HTTP: every change extends it and it verifies; an edited row, a cut tail, a full
//! rewrite with recomputed hashes, a rewound head and edited business rows are each caught, by the head's
//! MAC, a node's anchor or the log's signed checkpoint.

use fiscus_apptest::{EVIDENCE, evidence_body, spawn_app};
use fiscus_domain::audit::ChainBreak;

async fn head(app: &fiscus_apptest::TestApp) -> i64 {
    let body: serde_json::Value = app.get("/api/v2/trust/audit-head", &app.key).await.json().await.expect("json");
    body["seq"].as_i64().expect("seq")
}

#[tokio::test]
async fn every_mutating_request_extends_the_chain_and_it_verifies() {
    let app = spawn_app().await;
    let before = head(&app).await;
    app.post_json(EVIDENCE, &app.key, &evidence_body("audited"), None).await;
    assert_eq!(head(&app).await, before + 1);
    let report =
        fiscus_kernel::verify::verify_workspace(&app.state.store, &app.workspace_id, None).await.expect("verify");
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
    let report =
        fiscus_kernel::verify::verify_workspace(&app.state.store, &app.workspace_id, None).await.expect("verify");
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
    let report =
        fiscus_kernel::verify::verify_workspace(&app.state.store, &app.workspace_id, None).await.expect("verify");
    assert!(matches!(report.result, Err(ChainBreak::HeadMismatch { .. })), "{:?}", report.result);
}

/// Every event of the workspace as stored.
async fn stored_events(app: &fiscus_apptest::TestApp) -> Vec<fiscus_store::audit::StoredEvent> {
    let mut conn = app.state.store.read().await.expect("conn");
    fiscus_store::audit::events_after(&mut conn, &app.workspace_id, 0, 10_000).await.expect("events")
}

async fn set_head(app: &fiscus_apptest::TestApp, seq: i64, hash: &str, mac: Option<&str>) {
    let mut conn = app.state.store.read().await.expect("conn");
    sqlx::query("UPDATE audit_heads SET seq = $1, hash = $2, mac = COALESCE($3, mac) WHERE workspace_id = $4")
        .bind(seq)
        .bind(hash)
        .bind(mac)
        .bind(&app.workspace_id)
        .execute(&mut *conn)
        .await
        .expect("rewind");
}

async fn verify_anchored(app: &fiscus_apptest::TestApp) -> Result<(), ChainBreak> {
    let anchors = fiscus_kernel::verify::anchors(&app.state.settings, &app.state.store).expect("anchors");
    fiscus_kernel::verify::verify_workspace(&app.state.store, &app.workspace_id, anchors.get(&app.workspace_id))
        .await
        .expect("verify")
        .result
}

#[tokio::test]
async fn a_full_rewrite_with_recomputed_hashes_is_not_authenticated() {
    let app = spawn_app().await;
    for i in 0..4 {
        app.post_json(EVIDENCE, &app.key, &evidence_body(&format!("e{i}")), None).await;
    }
    // Someone with database access (but not the server key) changes event 3 and recomputes every public
    // hash after it, and the head: the chain of hashes is consistent again.
    let mut events = stored_events(&app).await;
    events[2].event.details = serde_json::json!({ "tampered": true });
    let mut prev = events[1].hash.clone();
    let mut conn = app.state.store.read().await.expect("conn");
    for stored in events.iter_mut().skip(2) {
        stored.event.prev_hash = prev.clone();
        let hash = stored.event.hash().expect("hash");
        sqlx::query(
            "UPDATE audit_events SET details = $1, prev_hash = $2, hash = $3 WHERE workspace_id = $4 AND seq = $5",
        )
        .bind(stored.event.details.to_string())
        .bind(&stored.event.prev_hash)
        .bind(&hash)
        .bind(&app.workspace_id)
        .bind(stored.event.seq)
        .execute(&mut *conn)
        .await
        .expect("rewrite");
        prev = hash;
    }
    drop(conn);
    set_head(&app, events.last().expect("last").event.seq, &prev, None).await;
    assert_eq!(verify_anchored(&app).await, Err(ChainBreak::NotAuthenticated { seq: 3 }));
}

#[tokio::test]
async fn a_cut_tail_with_a_rewound_head_is_caught_by_the_head_mac_and_by_the_anchor() {
    let app = spawn_app().await;
    app.post_json(EVIDENCE, &app.key, &evidence_body("kept"), None).await;
    // A head row saved now, MAC and all, as someone with database access could keep it.
    let (saved_seq, saved_hash, saved_mac) = {
        let mut conn = app.state.store.read().await.expect("conn");
        fiscus_store::audit::head(&mut conn, &app.workspace_id).await.expect("head")
    };
    for i in 0..3 {
        app.post_json(EVIDENCE, &app.key, &evidence_body(&format!("later {i}")), None).await;
    }
    fiscus_server::workers::housekeeping::anchor_heads(&app.state).await;
    assert_eq!(verify_anchored(&app).await, Ok(()));
    app.execute(&format!("DELETE FROM audit_events WHERE workspace_id = '{}' AND seq > {saved_seq}", app.workspace_id))
        .await;
    // Rewound by hand: the head's MAC no longer matches.
    set_head(&app, saved_seq, &saved_hash, None).await;
    assert_eq!(verify_anchored(&app).await, Err(ChainBreak::HeadNotAuthenticated { head_seq: saved_seq }));
    // Rewound to the saved row: every remaining event and the head are genuine, but the anchor outside the
    // database still names the removed events.
    set_head(&app, saved_seq, &saved_hash, saved_mac.as_deref()).await;
    assert_eq!(
        verify_anchored(&app).await,
        Err(ChainBreak::BehindAnchor { anchored_seq: saved_seq + 3, last_seq: saved_seq })
    );
    // And the next anchoring keeps the old anchor instead of anchoring the truncation.
    fiscus_server::workers::housekeeping::anchor_heads(&app.state).await;
    assert!(matches!(verify_anchored(&app).await, Err(ChainBreak::BehindAnchor { .. })));
}

/// What `fiscus verify audit` finds on a node that keeps no anchor file of its own (one started after the
/// events were written, or the CLI on another machine): only the anchor every node shares.
async fn verify_from_another_node(app: &fiscus_apptest::TestApp) -> Result<(), ChainBreak> {
    fiscus_kernel::verify::verify_anchored(&app.state, &app.workspace_id, None).await.expect("verify").result
}

#[tokio::test]
async fn a_cut_tail_is_caught_from_any_node_by_the_logs_signed_checkpoint() {
    let app = spawn_app().await;
    let trust = app.new_app(fiscus_domain::credentials::Environment::Sandbox, "trust:read trust:write", None).await.1;
    app.post_json(EVIDENCE, &app.key, &evidence_body("kept"), None).await;
    let (saved_seq, saved_hash, saved_mac) = {
        let mut conn = app.state.store.read().await.expect("conn");
        fiscus_store::audit::head(&mut conn, &app.workspace_id).await.expect("head")
    };
    // No shared anchor without a signed checkpoint (the evidence worker may sign the first one at any moment,
    // so the anchor is read first: if there is one, a checkpoint existed before the second read).
    let early = fiscus_kernel::verify::checkpoint_anchor(&app.state, &app.workspace_id).await.expect("read");
    let signed = {
        let mut ev = app.state.store.evidence_read().await.expect("evidence");
        fiscus_store::tlog::latest_checkpoint(&mut ev, &app.workspace_id).await.expect("read").is_some()
    };
    assert!(early.is_none() || signed, "an anchor without a checkpoint: {early:?}");
    for i in 0..3 {
        app.post_json(EVIDENCE, &app.key, &evidence_body(&format!("later {i}")), None).await;
    }
    let checkpoint = app.post_json("/api/v2/evidence/checkpoints", &trust, &serde_json::json!({}), None).await;
    assert_eq!(checkpoint.status(), 201);
    assert_eq!(verify_from_another_node(&app).await, Ok(()));
    let Some(Ok(fiscus_kernel::verify::LogAnchor { event: anchored, .. })) =
        fiscus_kernel::verify::checkpoint_anchor(&app.state, &app.workspace_id).await.expect("read")
    else {
        panic!("the checkpoint covers the events written before it");
    };
    assert!(anchored.seq >= saved_seq + 3, "{anchored:?} {saved_seq}");

    // Cut back to the saved head, MAC and all: every remaining event and the head are genuine, and this
    // node has no file naming the removed events; the checkpoint still covers them.
    app.execute(&format!("DELETE FROM audit_events WHERE workspace_id = '{}' AND seq > {saved_seq}", app.workspace_id))
        .await;
    set_head(&app, saved_seq, &saved_hash, saved_mac.as_deref()).await;
    let found = verify_from_another_node(&app).await;
    assert!(
        matches!(found, Err(ChainBreak::BehindCheckpoint { anchored_seq, last_seq, .. })
            if anchored_seq >= anchored.seq && last_seq == saved_seq),
        "{found:?}"
    );
}

async fn checkpoint_size(app: &fiscus_apptest::TestApp) -> i64 {
    let mut ev = app.state.store.evidence_read().await.expect("evidence");
    fiscus_store::tlog::latest_checkpoint(&mut ev, &app.workspace_id).await.expect("read").expect("one").tree_size
}

#[tokio::test]
async fn a_checkpoint_not_signed_by_the_deployment_anchors_nothing_and_is_named() {
    let app = spawn_app().await;
    let trust = app.new_app(fiscus_domain::credentials::Environment::Sandbox, "trust:read trust:write", None).await.1;
    app.post_json(EVIDENCE, &app.key, &evidence_body("kept"), None).await;
    let r = app.post_json("/api/v2/evidence/checkpoints", &trust, &serde_json::json!({}), None).await;
    assert_eq!(r.status(), 201);
    let size = checkpoint_size(&app).await;
    // Someone with database access puts a smaller size in the note (to anchor less): the signature breaks.
    app.execute_evidence(&format!(
        "UPDATE tlog_checkpoints SET note = replace(note, '\n{size}\n', '\n1\n') WHERE workspace_id = '{}'",
        app.workspace_id
    ))
    .await;
    assert_eq!(verify_from_another_node(&app).await, Err(ChainBreak::CheckpointNotAuthenticated { tree_size: size }));
}

#[tokio::test]
async fn business_rows_edited_by_hand_are_found_by_verify_and_refused_before_a_decision() {
    let app = spawn_app().await;
    app.post_json(EVIDENCE, &app.key, &evidence_body("SOC 2 Type II"), None).await;
    let created: serde_json::Value = app
        .post_json("/api/v2/actions", &app.key, &fiscus_apptest::actions::proposal(), None)
        .await
        .json()
        .await
        .expect("json");
    let id = created["id"].as_str().expect("id").to_string();
    let (checked, failing) =
        fiscus_kernel::verify::verify_records(&app.state.store, &app.workspace_id).await.expect("verify");
    assert!(checked >= 2 && failing.is_empty(), "{checked} {failing:?}");
    app.execute("UPDATE autonomy_evidence SET title = 'SOC 2 Type I'").await;
    // Even with the public envelope hash recomputed to match, the keyed seal would not: it needs the key.
    app.execute(&format!("UPDATE actions SET amount_minor = 99999999 WHERE id = '{id}'")).await;
    let (_, failing) =
        fiscus_kernel::verify::verify_records(&app.state.store, &app.workspace_id).await.expect("verify");
    let tables: Vec<&str> = failing.iter().map(|u| u.table).collect();
    assert_eq!(tables, ["actions", "autonomy_evidence"], "{failing:?}");
    let (checked, altered) =
        fiscus_actions::verify::verify_envelopes(&app.state.store, &app.workspace_id).await.expect("verify");
    assert_eq!((checked, altered), (1, vec![id.clone()]), "the public envelope hash no longer matches the row");
    // Executing (or deciding) on the edited row is refused, and nothing moves.
    let response =
        app.post_json(&format!("/api/v2/actions/{id}/execute"), &app.key, &serde_json::json!({}), None).await;
    fiscus_apptest::problem(response, 500, "integrity_failure").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM settlement_jobs").await, 0);
}
