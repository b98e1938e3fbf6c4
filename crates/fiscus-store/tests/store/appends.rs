//! Appends handed to the store whole (`Store::append`): written with their key and audit event or not at
//! all, batched with concurrent members, a held key writing nothing, and a failing member failing alone.

use crate::helpers::*;
use fiscus_domain::actor::Actor;
use fiscus_domain::audit::ChainVerifier;
use fiscus_domain::credentials::Environment;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::appends::{Appended, Appends, KeyRecord, KeyWrite};
use fiscus_store::audit::{self, NewAuditEvent};
use fiscus_store::idempotency::{self, Fingerprint, KeyRef, Reservation, StoredResponse};
use fiscus_store::{Store, StoreError};
use serde_json::json;

/// The appends of one keyed evidence request: its row, its audit event and its key (`body` stands for the
/// request body's hash).
fn request(db: &Store, t: &Tenant, app: &str, id: &str, key: &str, body: &str) -> Appends {
    let mut appends = Appends::new();
    // A summary, so a text value (not only a null) lands in the nullable column.
    append_evidence(&mut appends, db.seal_key(), t, id, "security", Some("No findings"));
    appends.audit(
        &t.workspace_id,
        NewAuditEvent {
            environment: Some(Environment::Sandbox),
            actor: &Actor::application(app.to_string()),
            action: fiscus_domain::audit_action::AuditAction::Operation(
                const { fiscus_domain::catalogue::named("post_actions_autonomy_assessment_evidence") },
            ),
            request_id: Some("req_1"),
            subject: Some(id),
            details: json!({ "id": id }),
            occurred_at: NOW,
        },
    );
    appends.key(KeyWrite::Record(KeyRecord {
        workspace_id: t.workspace_id.clone(),
        application_id: app.to_string(),
        key: key.to_string(),
        method: "POST".into(),
        path: "/api/v2/actions/autonomy/assessment-evidence".into(),
        fingerprint: body.to_string(),
        lock_token: fiscus_domain::ids::new_id("lck"),
        response: StoredResponse { status: 201, headers: "{}".into(), body: format!("{{\"id\":\"{id}\"}}") },
        now: NOW,
        stale_after: 60_000_000,
        retain_for: 86_400_000_000,
    }));
    appends
}

async fn evidence_ids(db: &Store, t: &Tenant) -> Vec<String> {
    let mut conn = db.read().await.expect("conn");
    let ids: Vec<String> =
        sqlx::query_scalar("SELECT id FROM autonomy_evidence WHERE workspace_id = $1 AND environment = $2 ORDER BY id")
            .bind(&t.workspace_id)
            .bind(t.environment.as_str())
            .fetch_all(&mut *conn)
            .await
            .expect("ids");
    // Each row written matches its seal.
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    fiscus_store::seals::check_keys(
        &mut conn,
        db.seal_key(),
        &fiscus_store::seals::AUTONOMY_EVIDENCE,
        &t.workspace_id,
        "id",
        &refs,
    )
    .await
    .expect("sealed");
    ids
}

/// The workspace's audit events (subjects in chain order), after checking the chain links and its head.
async fn verified_subjects(db: &Store, workspace_id: &str) -> Vec<String> {
    let mut conn = db.read().await.expect("conn");
    let events = audit::events_after(&mut conn, workspace_id, 0, 1000).await.expect("events");
    let mut verifier = ChainVerifier::new(db.seal_key().clone());
    for stored in &events {
        verifier.push(&stored.event, &stored.hash, stored.mac.as_deref()).expect("chain link");
    }
    let (seq, hash, mac) = audit::head(&mut conn, workspace_id).await.expect("head");
    verifier.finish(workspace_id, seq, &hash, mac.as_deref()).expect("head verifies");
    events
        .into_iter()
        .filter(|e| e.event.action == "post_actions_autonomy_assessment_evidence")
        .filter_map(|e| e.event.subject)
        .collect()
}

#[tokio::test]
async fn appends_land_with_their_key_and_audit_event_and_a_held_key_writes_nothing() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let written = db.append(request(&db, &t, &app, "aev_1", "k1", "body-a")).await.expect("append");
    assert!(matches!(written, Appended::Written));
    assert_eq!(evidence_ids(&db, &t).await, vec!["aev_1"]);
    assert_eq!(verified_subjects(&db, &t.workspace_id).await, vec!["aev_1"]);
    let mut conn = db.read().await.expect("conn");
    let key = KeyRef { workspace_id: &t.workspace_id, application_id: &app, key: "k1" };
    let fp = Fingerprint { method: "POST", path: "/api/v2/actions/autonomy/assessment-evidence", body: "body-a" };
    let found = idempotency::peek(&mut conn, &key, &fp, NOW).await.expect("peek");
    assert!(matches!(found, Some(Reservation::Replay(r)) if r.body == "{\"id\":\"aev_1\"}"));
    drop(conn);

    // The same key again: with the same body it is the first one's replay, with another a reuse; either
    // way no row, no audit event.
    let again = db.append(request(&db, &t, &app, "aev_2", "k1", "body-a")).await.expect("append");
    assert!(matches!(again, Appended::Held(Reservation::Replay(r)) if r.body == "{\"id\":\"aev_1\"}"));
    let reused = db.append(request(&db, &t, &app, "aev_3", "k1", "body-b")).await.expect("append");
    assert!(matches!(reused, Appended::Held(Reservation::Mismatch)));
    assert_eq!(evidence_ids(&db, &t).await, vec!["aev_1"]);
    assert_eq!(verified_subjects(&db, &t.workspace_id).await, vec!["aev_1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_share_groups_and_one_key_keeps_one_effect() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (store, t, app) = (db.store.clone(), t.clone(), app.clone());
        // Every fourth request repeats one key with one body: exactly one of them may land.
        let key = if i % 4 == 0 { "dup".to_string() } else { format!("k{i}") };
        tasks.push(tokio::spawn(async move {
            let appends = request(&store, &t, &app, &format!("aev_{i:02}"), &key, "body");
            (i, store.append(appends).await.expect("append"))
        }));
    }
    let mut written = Vec::new();
    let mut replays = 0;
    for task in tasks {
        match task.await.expect("task") {
            (i, Appended::Written) => written.push(format!("aev_{i:02}")),
            (i, Appended::Held(Reservation::Replay(_))) if i % 4 == 0 => replays += 1,
            (i, other) => panic!("request {i}: {other:?}"),
        }
    }
    assert_eq!((written.len(), replays), (31, 9));
    written.sort();
    assert_eq!(evidence_ids(&db, &t).await, written);
    let mut subjects = verified_subjects(&db, &t.workspace_id).await;
    subjects.sort();
    assert_eq!(subjects, written, "an audit event for each row written, none for a held key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_member_whose_rows_fail_fails_alone() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    assert!(matches!(db.append(request(&db, &t, &app, "aev_taken", "k0", "b")).await, Ok(Appended::Written)));
    let mut tasks = Vec::new();
    for i in 0..12 {
        let (store, t, app) = (db.store.clone(), t.clone(), app.clone());
        // Request 5 reuses an evidence id: its row breaks the primary key, and only it may fail.
        let id = if i == 5 { "aev_taken".to_string() } else { format!("aev_{i:02}") };
        tasks.push(tokio::spawn(async move {
            let appends = request(&store, &t, &app, &id, &format!("k{}", i + 1), "b");
            (i, store.append(appends).await)
        }));
    }
    let mut written = vec!["aev_taken".to_string()];
    for task in tasks {
        match task.await.expect("task") {
            (5, Err(e)) => assert!(matches!(e, StoreError::Conflict(_)), "{e:?}"),
            (i, Ok(Appended::Written)) if i != 5 => written.push(format!("aev_{i:02}")),
            (i, other) => panic!("request {i}: {other:?}"),
        }
    }
    written.sort();
    assert_eq!(evidence_ids(&db, &t).await, written);
    let mut subjects = verified_subjects(&db, &t.workspace_id).await;
    subjects.sort();
    assert_eq!(subjects, written);
    // The failed request's key was not recorded with the others: a retry may run.
    let mut conn = db.read().await.expect("conn");
    let key = KeyRef { workspace_id: &t.workspace_id, application_id: &app, key: "k6" };
    let fp = Fingerprint { method: "POST", path: "/api/v2/actions/autonomy/assessment-evidence", body: "b" };
    assert!(idempotency::peek(&mut conn, &key, &fp, NOW).await.expect("peek").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn appends_and_write_transactions_commit_side_by_side() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let mut tasks = Vec::new();
    for i in 0..24 {
        let (store, t, app) = (db.store.clone(), t.clone(), app.clone());
        tasks.push(tokio::spawn(async move {
            if i % 2 == 0 {
                let appends = request(&store, &t, &app, &format!("aev_{i:02}"), &format!("k{i}"), "b");
                assert!(matches!(store.append(appends).await.expect("append"), Appended::Written));
            } else {
                let actor = Actor::cli();
                let mut tx = store.begin().await.expect("begin");
                audit::append(
                    &mut tx,
                    &t.workspace_id,
                    NewAuditEvent {
                        environment: None,
                        actor: &actor,
                        action: fiscus_domain::audit_action::Change::DataImport.into(),
                        request_id: None,
                        subject: Some("tx"),
                        details: json!({ "i": i }),
                        occurred_at: NOW,
                    },
                )
                .await
                .expect("audit");
                tx.commit().await.expect("commit");
            }
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    assert_eq!(evidence_ids(&db, &t).await.len(), 12);
    assert_eq!(verified_subjects(&db, &t.workspace_id).await.len(), 12);
    let mut conn = db.read().await.expect("conn");
    let events = audit::events_after(&mut conn, &t.workspace_id, 0, 1000).await.expect("events");
    assert_eq!(events.iter().filter(|e| e.event.action == "data.import").count(), 12);
}

/// Rounds of mixed writers on a multi-threaded runtime. A writer that hands its group on and queues again
/// can find its group committed by a writer that took the lane between its release and its queueing (on
/// another thread), while a leader meanwhile opened a group of appends and handed it on to it; it must
/// commit that group, or those appends wait for ever (a hang once seen in CI on PostgreSQL).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rounds_of_mixed_writers_leave_no_group_waiting() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    const ROUNDS: usize = 30;
    for round in 0..ROUNDS {
        let mut tasks = Vec::new();
        for i in 0..16 {
            let (store, t, app) = (db.store.clone(), t.clone(), app.clone());
            tasks.push(tokio::spawn(async move {
                if i % 2 == 0 {
                    let id = format!("aev_{round:02}_{i:02}");
                    let appends = request(&store, &t, &app, &id, &format!("k{round}_{i}"), "b");
                    assert!(matches!(store.append(appends).await.expect("append"), Appended::Written));
                } else {
                    let actor = Actor::cli();
                    let mut tx = store.begin().await.expect("begin");
                    let event = NewAuditEvent {
                        environment: None,
                        actor: &actor,
                        action: fiscus_domain::audit_action::Change::DataImport.into(),
                        request_id: None,
                        subject: Some("tx"),
                        details: json!({ "round": round, "i": i }),
                        occurred_at: NOW,
                    };
                    audit::append(&mut tx, &t.workspace_id, event).await.expect("audit");
                    tx.commit().await.expect("commit");
                }
            }));
        }
        let all = async {
            for task in tasks {
                task.await.expect("task");
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), all)
            .await
            .unwrap_or_else(|_| panic!("round {round}: a writer waited for a group nobody commits"));
    }
    let mut conn = db.read().await.expect("conn");
    let (rows,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM autonomy_evidence").fetch_one(&mut *conn).await.expect("count");
    assert_eq!(rows as usize, ROUNDS * 8);
    drop(conn);
    assert_eq!(verified_subjects(&db, &t.workspace_id).await.len(), ROUNDS * 8);
}

#[tokio::test]
async fn without_group_commit_appends_are_a_transaction_of_their_own() {
    let db = fresh_store().await;
    let store = db.store.clone().with_group_commit(false);
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    assert!(matches!(store.append(request(&store, &t, &app, "aev_1", "k1", "b")).await, Ok(Appended::Written)));
    let again = store.append(request(&store, &t, &app, "aev_2", "k1", "b")).await.expect("append");
    assert!(matches!(again, Appended::Held(Reservation::Replay(_))));
    assert_eq!(evidence_ids(&db, &t).await, vec!["aev_1"]);
    assert_eq!(verified_subjects(&db, &t.workspace_id).await, vec!["aev_1"]);
}

#[tokio::test]
async fn appends_completing_a_reservation_land_only_while_it_is_theirs() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let key = KeyRef { workspace_id: &t.workspace_id, application_id: &app, key: "k1" };
    let fp = Fingerprint { method: "POST", path: "/api/v2/actions/autonomy/assessment-evidence", body: "b" };
    let mut tx = db.begin().await.expect("begin");
    let reserved = idempotency::reserve(tx.conn(), &key, &fp, "lock-1", NOW, 60_000_000, 86_400_000_000).await;
    assert!(matches!(reserved, Ok(Reservation::Acquired { .. })));
    tx.commit().await.expect("commit");
    let completing = |id: &str, token: &str| {
        let mut appends = request(&db, &t, &app, id, "k1", "b");
        appends.key(KeyWrite::Complete {
            workspace_id: t.workspace_id.clone(),
            application_id: app.clone(),
            key: "k1".into(),
            lock_token: token.into(),
            response: StoredResponse { status: 201, headers: "{}".into(), body: format!("{{\"id\":\"{id}\"}}") },
        });
        appends
    };
    // Another request's token (a retry that took the key over would hold it): nothing lands.
    let stolen = db.append(completing("aev_0", "lock-2")).await.expect("append");
    assert!(matches!(stolen, Appended::Held(Reservation::InFlight)));
    assert!(evidence_ids(&db, &t).await.is_empty());
    assert!(matches!(db.append(completing("aev_1", "lock-1")).await, Ok(Appended::Written)));
    assert_eq!(evidence_ids(&db, &t).await, vec!["aev_1"]);
    assert_eq!(verified_subjects(&db, &t.workspace_id).await, vec!["aev_1"]);
    let mut conn = db.read().await.expect("conn");
    let found = idempotency::peek(&mut conn, &key, &fp, NOW).await.expect("peek");
    assert!(matches!(found, Some(Reservation::Replay(r)) if r.body == "{\"id\":\"aev_1\"}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn appends_after_another_writer_moved_the_head_still_chain_and_a_held_key_is_resolved() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let mut written = Vec::new();
    for i in 0..6 {
        let id = format!("aev_{i:02}");
        let appends = request(&db, &t, &app, &id, &format!("k{i}"), "b");
        assert!(matches!(db.append(appends).await.expect("append"), Appended::Written));
        written.push(id);
        if i % 2 == 1 {
            // Another writer (here a write transaction, which may take another lane) moves the head the
            // appends' lane remembers: the next group must find it and chain after it.
            let actor = Actor::cli();
            let mut tx = db.begin().await.expect("begin");
            let event = NewAuditEvent {
                environment: None,
                actor: &actor,
                action: fiscus_domain::audit_action::Change::DataImport.into(),
                request_id: None,
                subject: Some("tx"),
                details: json!({ "i": i }),
                occurred_at: NOW,
            };
            audit::append(&mut tx, &t.workspace_id, event).await.expect("audit");
            tx.commit().await.expect("commit");
        }
    }
    // A held key in a group the lane could write in one statement: nothing of that member lands.
    let again = db.append(request(&db, &t, &app, "aev_99", "k0", "b")).await.expect("append");
    assert!(matches!(again, Appended::Held(Reservation::Replay(r)) if r.body == "{\"id\":\"aev_00\"}"));
    assert_eq!(evidence_ids(&db, &t).await, written);
    assert_eq!(verified_subjects(&db, &t.workspace_id).await, written);
    if db.backend() == fiscus_store::Backend::Postgres {
        // After the first group (which reads the head), groups whose remembered head still held went in one
        // statement: at least the ones right after another append of the same lane.
        assert!(db.one_statement_groups() >= 2, "one-statement groups: {}", db.one_statement_groups());
    } else {
        assert_eq!(db.one_statement_groups(), 0);
    }
}
