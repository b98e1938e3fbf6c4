//! Webhook deliveries: events fanned out once to the active endpoints that hear them, queues held by one
//! worker until released or stale, and the log purged past its retention while pending deliveries stay.

use crate::helpers::*;
use fiscus_domain::actions::ControlState;
use fiscus_domain::actor::Actor;
use fiscus_domain::events::{ActionEventData, Event, EventData, EventType};
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::tables::webhook_deliveries::{self as deliveries, After, Attempt, DeliveryState};
use fiscus_kernel::tables::webhooks::{self, Endpoint, EndpointStatus};
use fiscus_store::{Store, outbox};
use serde_json::json;

async fn endpoint(db: &Store, t: &Tenant, types: &[&str], status: EndpointStatus, created_at: i64) -> String {
    let e = Endpoint {
        id: new_id("whe"),
        environment: t.environment,
        application_id: "app_1".into(),
        url: "https://hooks.example.com/fiscus".into(),
        description: String::new(),
        event_types: types.iter().map(|s| s.to_string()).collect(),
        secret_sealed: "sealed".into(),
        status,
        status_reason: None,
        created_by: "app_1".into(),
        created_at,
        updated_at: created_at,
    };
    let mut tx = db.begin().await.expect("begin");
    // The endpoint's application: active, with every scope (fan-out reads what it may hear).
    sqlx::query(
        "INSERT INTO applications (id, workspace_id, environment, name, status, scopes, service_class, created_at, \
         updated_at) VALUES ('app_1', $1, $2, 'App', 'active', $3, 'standard', $4, $4) ON CONFLICT (id) DO NOTHING",
    )
    .bind(&t.workspace_id)
    .bind(t.environment.as_str())
    .bind(fiscus_domain::scopes::ScopeSet::all().iter().collect::<Vec<_>>().join(" "))
    .bind(created_at)
    .execute(tx.conn())
    .await
    .expect("application");
    webhooks::insert(&mut tx, t, &e).await.expect("insert endpoint");
    tx.commit().await.expect("commit");
    e.id
}

async fn event(db: &Store, t: &Tenant, event_type: EventType) -> String {
    let e = Event {
        id: new_id("evt"),
        event_type,
        created_at: "2026-09-21T14:13:20Z".into(),
        workspace_id: t.workspace_id.clone(),
        environment: t.environment,
        actor: Actor::application("app_1"),
        data: EventData::Action(ActionEventData {
            action_id: "act_1".into(),
            from_state: None,
            to_state: ControlState::Draft,
            envelope_hash: "sha256:00".into(),
            detail: json!({}),
        }),
    };
    let mut tx = db.begin().await.expect("begin");
    outbox::enqueue(&mut tx, &e, "act_1", Some("app_1"), NOW).await.expect("enqueue");
    tx.commit().await.expect("commit");
    e.id
}

async fn fan_out(db: &Store) -> deliveries::FannedOut {
    let mut tx = db.begin().await.expect("begin");
    let n = deliveries::fan_out(&mut tx, NOW, 100).await.expect("fan out");
    tx.commit().await.expect("commit");
    n
}

/// A store with one active endpoint hearing everything and two events fanned out to it.
async fn two_events_for_one_endpoint() -> (TestDb, Tenant, String) {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let e = endpoint(&db, &t, &["*"], EndpointStatus::Active, NOW - 10).await;
    event(&db, &t, EventType::ActionProposed).await;
    event(&db, &t, EventType::ActionSubmitted).await;
    fan_out(&db).await;
    (db, t, e)
}

/// One attempt at a delivery, answered with `status`.
fn attempt(due: &deliveries::Due, status: i64, after: After) -> Attempt {
    Attempt {
        delivery_id: due.id.clone(),
        event_id: due.event_id.clone(),
        attempt: 1,
        status: Some(status),
        error: None,
        latency_micros: 1000,
        after,
        at: NOW + 2,
    }
}

#[tokio::test]
async fn events_fan_out_to_the_active_endpoints_that_hear_them_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let all = endpoint(&db, &t, &["*"], EndpointStatus::Active, NOW - 10).await;
    let approvals = endpoint(&db, &t, &["action.approved"], EndpointStatus::Active, NOW - 10).await;
    endpoint(&db, &t, &["*"], EndpointStatus::PendingApproval, NOW - 10).await;
    endpoint(&db, &t, &["*"], EndpointStatus::Active, NOW + 10).await; // registered after the events
    let [other, _] = strangers(&db, &t).await;
    endpoint(&db, &other, &["*"], EndpointStatus::Active, NOW - 10).await;
    let proposed = event(&db, &t, EventType::ActionProposed).await;
    let approved = event(&db, &t, EventType::ActionApproved).await;
    assert_eq!(fan_out(&db).await, deliveries::FannedOut { events: 2, deliveries: 3 });
    assert_eq!(fan_out(&db).await, deliveries::FannedOut::default(), "each event is fanned out once");
    let mut conn = db.read().await.expect("conn");
    let to_all: Vec<String> =
        deliveries::pending(&mut conn, &all, 10).await.expect("pending").into_iter().map(|d| d.event_id).collect();
    assert_eq!(to_all, vec![proposed, approved.clone()], "in event order");
    let to_approvals = deliveries::pending(&mut conn, &approvals, 10).await.expect("pending");
    assert_eq!(to_approvals.len(), 1);
    assert_eq!(to_approvals[0].event_id, approved);
    assert!(to_approvals[0].payload.contains("action.approved"), "the stored envelope is the body");
}

#[tokio::test]
async fn a_queue_is_held_by_one_worker_until_it_lets_go_or_its_claim_goes_stale() {
    let (db, t, e) = two_events_for_one_endpoint().await;
    let claim = |worker: &'static str, now: i64, stale_before: i64| {
        let db = db.clone();
        async move {
            let mut tx = db.begin().await.expect("begin");
            let got = deliveries::claim(&mut tx, worker, now, stale_before, 10, 10).await.expect("claim");
            tx.commit().await.expect("commit");
            got
        }
    };
    let held = claim("wrk_a", NOW, NOW - 60_000_000).await;
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].endpoint_id, e);
    assert!(claim("wrk_b", NOW + 1, NOW - 60_000_000).await.is_empty(), "held by wrk_a");
    // wrk_a's claim goes stale: wrk_b takes the queue over, and wrk_a can no longer record anything.
    let taken = claim("wrk_b", NOW + 120_000_000, NOW + 60_000_000).await;
    assert_eq!(taken.len(), 1);
    let mut conn = db.read().await.expect("conn");
    let due = deliveries::pending(&mut conn, &e, 10).await.expect("pending");
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert!(
        !deliveries::record(&mut tx, &held[0], "wrk_a", &[attempt(&due[0], 200, After::Succeeded)], true, NOW + 2)
            .await
            .expect("record")
    );
    drop(tx);
    // wrk_b's first attempt fails with a retry: the queue is next due at the head's retry, and let go.
    let retry_at = NOW + 300_000_000;
    let mut tx = db.begin().await.expect("begin");
    assert!(
        deliveries::record(
            &mut tx,
            &taken[0],
            "wrk_b",
            &[attempt(&due[0], 200, After::Retry(retry_at))],
            true,
            NOW + 2
        )
        .await
        .expect("record")
    );
    tx.commit().await.expect("commit");
    assert!(claim("wrk_c", NOW + 3, NOW - 60_000_000).await.is_empty(), "not due before the head's retry");
    assert_eq!(claim("wrk_c", retry_at, NOW - 60_000_000).await.len(), 1);
    let mut conn = db.read().await.expect("conn");
    let log = deliveries::log(&mut conn, &t.workspace_id, &e, 10).await.expect("log");
    assert_eq!(log.len(), 1, "only the attempt recorded by the claim's holder");
    assert_eq!((log[0].status, log[0].next_attempt_at), (Some(200), Some(retry_at)));
}

#[tokio::test]
async fn the_delivery_log_is_purged_past_its_retention_but_pending_deliveries_stay() {
    let (db, t, e) = two_events_for_one_endpoint().await;
    let mut tx = db.begin().await.expect("begin");
    let queue = deliveries::claim(&mut tx, "wrk_a", NOW, NOW - 1, 10, 10).await.expect("claim").remove(0);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let due = deliveries::pending(&mut conn, &e, 10).await.expect("pending");
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    let done = attempt(&due[0], 204, After::Succeeded);
    assert!(deliveries::record(&mut tx, &queue, "wrk_a", &[done], true, NOW).await.expect("record"));
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_eq!(deliveries::purge(&mut conn, NOW + 2).await.expect("purge"), 0, "nothing is older than the cutoff");
    assert_eq!(deliveries::purge(&mut conn, NOW + 3).await.expect("purge"), 2, "the attempt and its finished delivery");
    let left = deliveries::counts(&mut conn, &t.workspace_id, &e).await.expect("counts");
    assert_eq!(left.get(&DeliveryState::Pending), Some(&1), "{left:?}");
    assert_eq!(left.len(), 1);
}
