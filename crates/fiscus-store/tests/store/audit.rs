//! The audit chain in the store: genesis heads, appends that chain and verify, pages by sequence, edits
//! caught, chains of workspaces apart, concurrent appends without gaps, and each event's log leaf.

use crate::helpers::*;
use fiscus_domain::actor::Actor;
use fiscus_domain::audit::{ChainVerifier, GENESIS_HASH};
use fiscus_domain::credentials::Environment;
use fiscus_store::audit::{self, NewAuditEvent};
use fiscus_store::{Store, StoreError};
use serde_json::json;

async fn append(db: &Store, workspace_id: &str, n: i64) {
    let actor = Actor::cli();
    let mut tx = db.begin().await.expect("begin");
    audit::append(
        &mut tx,
        workspace_id,
        NewAuditEvent {
            environment: Some(Environment::Sandbox),
            actor: &actor,
            action: fiscus_domain::audit_action::Change::DataImport.into(),
            request_id: Some("req_1"),
            subject: Some("act_1"),
            details: json!({"n": n}),
            occurred_at: NOW + n,
        },
    )
    .await
    .expect("append");
    tx.commit().await.expect("commit");
}

#[tokio::test]
async fn a_new_workspace_has_a_genesis_head() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let mut conn = db.read().await.expect("conn");
    let (seq, hash, mac) = audit::head(&mut conn, &ws).await.expect("head");
    assert_eq!((seq, hash.as_str()), (0, GENESIS_HASH));
    assert_eq!(mac.as_deref(), Some(db.seal_key().audit_head(&ws, 0, GENESIS_HASH).as_str()));
    assert!(audit::events_after(&mut conn, &ws, 0, 10).await.expect("events").is_empty());
}

#[tokio::test]
async fn appends_build_a_chain_that_reads_back_in_order_and_verifies() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    for n in 1..=3 {
        append(&db, &ws, n).await;
    }
    let mut conn = db.read().await.expect("conn");
    let events = audit::events_after(&mut conn, &ws, 0, 10).await.expect("events");
    assert_eq!(events.iter().map(|e| e.event.seq).collect::<Vec<_>>(), vec![1, 2, 3]);
    let mut verifier = ChainVerifier::new(db.seal_key().clone());
    for stored in &events {
        assert_eq!(stored.event.details, json!({"n": stored.event.seq}));
        assert_eq!(stored.event.actor_kind, "cli");
        verifier.push(&stored.event, &stored.hash, stored.mac.as_deref()).expect("chain link");
    }
    let (head_seq, head_hash, head_mac) = audit::head(&mut conn, &ws).await.expect("head");
    assert_eq!(verifier.finish(&ws, head_seq, &head_hash, head_mac.as_deref()).expect("head verifies"), 3);
    assert_eq!(events[1].event.prev_hash, events[0].hash);
    assert_eq!(audit::hash_at(&mut conn, &ws, 2).await.expect("hash_at"), Some(events[1].hash.clone()));
    assert_eq!(audit::hash_at(&mut conn, &ws, 4).await.expect("hash_at"), None);
}

#[tokio::test]
async fn events_after_pages_by_sequence() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    for n in 1..=4 {
        append(&db, &ws, n).await;
    }
    let mut conn = db.read().await.expect("conn");
    let seqs = |v: Vec<audit::StoredEvent>| v.into_iter().map(|e| e.event.seq).collect::<Vec<_>>();
    assert_eq!(seqs(audit::events_after(&mut conn, &ws, 0, 2).await.expect("page")), vec![1, 2]);
    assert_eq!(seqs(audit::events_after(&mut conn, &ws, 2, 10).await.expect("page")), vec![3, 4]);
}

#[tokio::test]
async fn an_edited_event_no_longer_verifies() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    append(&db, &ws, 1).await;
    exec(&db, "UPDATE audit_events SET details = '{\"n\":2}' WHERE workspace_id = $1", &ws).await;
    let mut conn = db.read().await.expect("conn");
    let events = audit::events_after(&mut conn, &ws, 0, 10).await.expect("events");
    let mut verifier = ChainVerifier::new(db.seal_key().clone());
    assert!(verifier.push(&events[0].event, &events[0].hash, events[0].mac.as_deref()).is_err());
}

#[tokio::test]
async fn details_that_are_not_json_read_back_as_a_string() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    append(&db, &ws, 1).await;
    exec(&db, "UPDATE audit_events SET details = 'not json' WHERE workspace_id = $1", &ws).await;
    let mut conn = db.read().await.expect("conn");
    let events = audit::events_after(&mut conn, &ws, 0, 10).await.expect("events");
    assert_eq!(events[0].event.details, json!("not json"));
}

#[tokio::test]
async fn chains_of_two_workspaces_are_separate() {
    let db = fresh_store().await;
    let a = workspace(&db).await;
    let b = workspace(&db).await;
    append(&db, &a, 1).await;
    append(&db, &a, 2).await;
    append(&db, &b, 1).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(audit::events_after(&mut conn, &b, 0, 10).await.expect("events").len(), 1);
    assert_eq!(
        audit::head(&mut conn, &b).await.expect("head").0,
        1,
        "another workspace's events do not advance this chain"
    );
    assert_eq!(audit::hash_at(&mut conn, &b, 2).await.expect("hash_at"), None);
    let mut heads = audit::all_heads(&mut conn).await.expect("all heads");
    heads.sort();
    let mut expected = vec![a.clone(), b.clone()];
    expected.sort();
    assert_eq!(heads.iter().map(|(w, _, _)| w.clone()).collect::<Vec<_>>(), expected);
    let head_a = heads.iter().find(|(w, _, _)| *w == a).expect("head of a");
    assert_eq!(head_a.1, 2);
}

#[tokio::test]
async fn appending_to_an_unknown_workspace_is_not_found_and_its_head_too() {
    let db = fresh_store().await;
    let actor = Actor::cli();
    let mut tx = db.begin().await.expect("begin");
    let result = audit::append(
        &mut tx,
        "wsp_unknown",
        NewAuditEvent {
            environment: None,
            actor: &actor,
            action: fiscus_domain::audit_action::Change::DataImport.into(),
            request_id: None,
            subject: None,
            details: json!({}),
            occurred_at: NOW,
        },
    )
    .await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
    drop(tx);
    let mut conn = db.read().await.expect("conn");
    assert_not_found(audit::head(&mut conn, "wsp_unknown").await);
}

/// Concurrent appends to one workspace (one commit group on SQLite; several lanes on PostgreSQL), some of
/// them by writers that give up: the chain holds exactly the committed events, numbered without a gap, and
/// verifies to its head.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_chain_only_committed_events_without_gaps() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let mut first = db.begin().await.expect("begin");
    let actor = Actor::cli();
    let event = |n: i64| NewAuditEvent {
        environment: None,
        actor: &actor,
        action: fiscus_domain::audit_action::Change::DataImport.into(),
        request_id: None,
        subject: None,
        details: json!({ "n": n }),
        occurred_at: NOW + n,
    };
    audit::append(&mut first, &ws, event(0)).await.expect("append");
    let mut tasks = Vec::new();
    for n in 1..=12 {
        let (db, ws) = (db.clone(), ws.clone());
        tasks.push(tokio::spawn(async move {
            let actor = Actor::cli();
            let mut tx = db.begin().await.expect("begin");
            let new = NewAuditEvent {
                environment: None,
                actor: &actor,
                action: fiscus_domain::audit_action::Change::DataImport.into(),
                request_id: None,
                subject: None,
                details: json!({ "n": n }),
                occurred_at: NOW + n,
            };
            audit::append(&mut tx, &ws, new).await.expect("append");
            if n % 3 == 0 {
                drop(tx); // gives up: its event must not be in the chain
            } else {
                tx.commit().await.expect("commit");
            }
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    first.commit().await.expect("commit");
    for t in tasks {
        t.await.expect("task");
    }
    let mut conn = db.read().await.expect("conn");
    let events = audit::events_after(&mut conn, &ws, 0, 100).await.expect("events");
    assert_eq!(events.iter().map(|e| e.event.seq).collect::<Vec<_>>(), (1..=9).collect::<Vec<i64>>());
    let mut kept: Vec<i64> = events.iter().map(|e| e.event.details["n"].as_i64().expect("n")).collect();
    kept.sort_unstable();
    assert_eq!(kept, vec![0, 1, 2, 4, 5, 7, 8, 10, 11]);
    let mut verifier = ChainVerifier::new(db.seal_key().clone());
    for stored in &events {
        verifier.push(&stored.event, &stored.hash, stored.mac.as_deref()).expect("chain link");
    }
    let (head_seq, head_hash, head_mac) = audit::head(&mut conn, &ws).await.expect("head");
    assert_eq!(verifier.finish(&ws, head_seq, &head_hash, head_mac.as_deref()).expect("head verifies"), 9);
}

/// The leaf index each event of `ws` keeps on its row, by sequence number.
async fn leaf_places(db: &Store, ws: &str) -> Vec<(i64, Option<i64>)> {
    let mut conn = db.read().await.expect("connection");
    sqlx::query_as("SELECT seq, leaf_index FROM audit_events WHERE workspace_id = $1 ORDER BY seq")
        .bind(ws)
        .fetch_all(&mut *conn)
        .await
        .expect("places")
}

#[tokio::test]
async fn an_event_names_its_leaf_on_its_row_which_is_found_there_and_left_out_of_the_index_by_record() {
    use fiscus_domain::tlog::{AUDIT_EVENT, audit_event_id};
    use fiscus_store::tlog;
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    for n in 1..=3 {
        append(&db, &ws, n).await;
    }
    let places: Vec<(i64, i64)> = leaf_places(&db, &ws)
        .await
        .into_iter()
        .map(|(seq, place)| (seq, place.expect("every event chained with the log on names its leaf")))
        .collect();
    let mut conn = db.read().await.expect("connection");
    let log = tlog::leaves(&mut conn, &ws, 0, 100).await.expect("log");
    assert!(places.len() >= 3, "{places:?}");
    for (seq, place) in &places {
        let leaf = &log[*place as usize].leaf;
        assert_eq!((leaf.kind.as_str(), leaf.id.clone()), (AUDIT_EVENT, audit_event_id(*seq)));
    }

    // Found by its row, as the log holds it, and only below the size asked.
    let ids: Vec<String> = places.iter().map(|(seq, _)| audit_event_id(*seq)).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut ev = db.evidence_read().await.expect("evidence");
    let found = tlog::find_many(&mut conn, &mut ev, &ws, &refs, i64::MAX).await.expect("found");
    for (seq, place) in &places {
        let leaves = &found[&audit_event_id(*seq)];
        assert_eq!(leaves.iter().map(|l| l.index).collect::<Vec<_>>(), vec![*place]);
        assert_eq!(leaves[0], log[*place as usize]);
    }
    let (last_seq, last_place) = places[places.len() - 1];
    let below = tlog::find_many(&mut conn, &mut ev, &ws, &refs, last_place).await.expect("found");
    assert!(!below.contains_key(&audit_event_id(last_seq)));

    // The index by record is not asked to hold them.
    assert!(tlog::to_index(&mut conn, &ws, &log).await.expect("to index").iter().all(|l| l.leaf.kind != AUDIT_EVENT));

    // A row whose place was edited to another event's leaf never gives that leaf: its own is found in the
    // log instead (here past the integrated tree), and the index is asked to hold it.
    let (first_seq, first_place) = places[0];
    sqlx::query("UPDATE audit_events SET leaf_index = $1 WHERE workspace_id = $2 AND seq = $3")
        .bind(last_place)
        .bind(&ws)
        .bind(first_seq)
        .execute(&mut *conn)
        .await
        .expect("edit");
    let id = audit_event_id(first_seq);
    let found = tlog::find_many(&mut conn, &mut ev, &ws, &[id.as_str()], i64::MAX).await.expect("found");
    assert_eq!(found[&id].iter().map(|l| l.index).collect::<Vec<_>>(), vec![first_place]);
    let to_index = tlog::to_index(&mut conn, &ws, &log).await.expect("to index");
    let events: Vec<String> =
        to_index.iter().filter(|l| l.leaf.kind == AUDIT_EVENT).map(|l| l.leaf.id.clone()).collect();
    assert_eq!(events, vec![id]);
}
