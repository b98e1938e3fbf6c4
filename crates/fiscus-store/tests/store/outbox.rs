//! The event outbox: events by subject in order, pages by id, tenants apart, and stored events the code does
//! not know refused as corrupt.

use crate::helpers::*;
use fiscus_domain::actions::ControlState;
use fiscus_domain::actor::Actor;
use fiscus_domain::events::{ActionEventData, Event, EventData, EventType};
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Store, outbox};
use serde_json::json;

fn event(tenant: &Tenant, action_id: &str, event_type: EventType) -> Event {
    Event {
        id: new_id("evt"),
        event_type,
        created_at: "2026-11-22T10:15:30.123456Z".into(),
        workspace_id: tenant.workspace_id.clone(),
        environment: tenant.environment,
        actor: Actor::application("app_test"),
        data: EventData::Action(ActionEventData {
            action_id: action_id.into(),
            from_state: None,
            to_state: ControlState::Draft,
            envelope_hash: "sha256:00".into(),
            detail: json!({"n": 1}),
        }),
    }
}

async fn enqueue(db: &Store, e: &Event, subject: &str) {
    let mut tx = db.begin().await.expect("begin");
    outbox::enqueue(&mut tx, e, subject, None, NOW).await.expect("enqueue");
    tx.commit().await.expect("commit");
}

#[tokio::test]
async fn events_read_back_by_subject_in_order() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let first = event(&t, "act_1", EventType::ActionProposed);
    let second = event(&t, "act_1", EventType::ActionSubmitted);
    let unrelated = event(&t, "act_2", EventType::ActionProposed);
    for (e, subject) in [(&first, "act_1"), (&second, "act_1"), (&unrelated, "act_2")] {
        enqueue(&db, e, subject).await;
    }
    let mut conn = db.read().await.expect("conn");
    assert_eq!(outbox::events_of(&mut conn, &t, "act_1").await.expect("events"), vec![first, second]);
}

#[tokio::test]
async fn list_pages_by_id() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let events: Vec<Event> = (0..3).map(|_| event(&t, "act_1", EventType::ActionProposed)).collect();
    for e in &events {
        enqueue(&db, e, "act_1").await;
    }
    let mut conn = db.read().await.expect("conn");
    assert_eq!(outbox::list(&mut conn, &t, None, 1).await.expect("list"), events[..2]);
    assert_eq!(outbox::list(&mut conn, &t, Some(&events[1].id), 5).await.expect("list"), events[2..]);
}

#[tokio::test]
async fn events_of_another_workspace_or_environment_are_invisible() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    enqueue(&db, &event(&t, "act_1", EventType::ActionProposed), "act_1").await;
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert!(outbox::events_of(&mut conn, &other, "act_1").await.expect("events").is_empty());
        assert!(outbox::list(&mut conn, &other, None, 10).await.expect("list").is_empty());
    }
}

#[tokio::test]
async fn a_stored_event_the_code_does_not_know_is_corrupt_naming_the_payload() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let e = event(&t, "act_1", EventType::ActionProposed);
    enqueue(&db, &e, "act_1").await;
    exec(
        &db,
        "UPDATE outbox SET payload = replace(payload, 'action.proposed', 'action.teleported') WHERE id = $1",
        &e.id,
    )
    .await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(outbox::events_of(&mut conn, &t, "act_1").await, "payload");
    assert_corrupt(outbox::list(&mut conn, &t, None, 10).await, "payload");
}

#[tokio::test]
async fn a_stored_event_with_an_unknown_member_is_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let e = event(&t, "act_1", EventType::ActionProposed);
    enqueue(&db, &e, "act_1").await;
    exec(
        &db,
        "UPDATE outbox SET payload = replace(payload, '\"actor\"', '\"extra\":1,\"actor\"') WHERE id = $1",
        &e.id,
    )
    .await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(outbox::events_of(&mut conn, &t, "act_1").await, "payload");
}
