//! The workflow gateway's A2A tasks: read by their application only, a message id used once, listed newest
//! first with exact filters, and an unknown stored state refused as corrupt.

use crate::helpers::*;
use fiscus_agents::tables::a2a_tasks::{self, Filter, Owner, Task, TaskState};

const APP: Owner<'static> = Owner { application_id: "app_1", credential_id: None };

fn task(message_id: &str, context_id: &str, state: TaskState) -> Task {
    Task {
        id: fiscus_domain::ids::new_id("task"),
        application_id: "app_1".into(),
        credential_id: "key_1".into(),
        context_id: context_id.into(),
        message_id: message_id.into(),
        skill: "get_actions".into(),
        state,
        http_status: if state == TaskState::Completed { 200 } else { 422 },
        request_hash: "sha256:01".into(),
        response_hash: "sha256:02".into(),
        message: r#"{"messageId":"m"}"#.into(),
        result: r#"{"object":"list"}"#.into(),
        created_at: NOW,
    }
}

async fn insert(db: &fiscus_store::Store, t: &fiscus_domain::tenancy::Tenant, task: &Task) -> fiscus_store::Result<()> {
    let mut tx = db.begin().await.expect("begin");
    a2a_tasks::insert(&mut tx, t, task).await?;
    tx.commit().await.expect("commit");
    Ok(())
}

#[tokio::test]
async fn tasks_are_read_by_their_application_only_and_a_message_id_is_used_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let first = task("m-1", "ctx_a", TaskState::Completed);
    insert(&db, &t, &first).await.expect("insert");
    assert_conflict(insert(&db, &t, &task("m-1", "ctx_b", TaskState::Completed)).await);
    let mut conn = db.read().await.expect("conn");
    assert_eq!(a2a_tasks::get(&mut conn, db.seal_key(), &t, APP, &first.id).await.expect("get"), first);
    assert_eq!(
        a2a_tasks::by_message(&mut conn, db.seal_key(), &t, "app_1", "m-1").await.expect("by message"),
        Some(first.clone())
    );
    assert_not_found(
        a2a_tasks::get(&mut conn, db.seal_key(), &t, Owner { application_id: "app_2", credential_id: None }, &first.id)
            .await,
    );
    let other_credential = Owner { application_id: "app_1", credential_id: Some("ecl_other") };
    assert_not_found(a2a_tasks::get(&mut conn, db.seal_key(), &t, other_credential, &first.id).await);
    let own = Owner { application_id: "app_1", credential_id: Some("key_1") };
    assert_eq!(a2a_tasks::get(&mut conn, db.seal_key(), &t, own, &first.id).await.expect("get").id, first.id);
    assert_eq!(
        a2a_tasks::list(&mut conn, db.seal_key(), &t, other_credential, &Filter::default(), None, 10)
            .await
            .expect("list")
            .1,
        0
    );
    for other in strangers(&db, &t).await {
        assert_not_found(a2a_tasks::get(&mut conn, db.seal_key(), &other, APP, &first.id).await);
    }
}

#[tokio::test]
async fn tasks_list_newest_first_by_page_with_exact_filters() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = task("m-1", "ctx_a", TaskState::Completed);
    let b = task("m-2", "ctx_a", TaskState::Failed);
    let c = task("m-3", "ctx_b", TaskState::Completed);
    for x in [&a, &b, &c] {
        insert(&db, &t, x).await.expect("insert");
    }
    let mut conn = db.read().await.expect("conn");
    let all = Filter::default();
    let (page, total) = a2a_tasks::list(&mut conn, db.seal_key(), &t, APP, &all, None, 2).await.expect("list");
    assert_eq!((page.iter().map(|x| x.id.clone()).collect::<Vec<_>>(), total), (vec![c.id.clone(), b.id.clone()], 3));
    let (rest, _) = a2a_tasks::list(&mut conn, db.seal_key(), &t, APP, &all, Some(&b.id), 2).await.expect("list");
    assert_eq!(rest, vec![a.clone()]);
    let ctx = Filter { context_id: Some("ctx_a".into()), state: Some(TaskState::Failed), since: None };
    let (failed, total) = a2a_tasks::list(&mut conn, db.seal_key(), &t, APP, &ctx, None, 10).await.expect("list");
    assert_eq!((failed, total), (vec![b.clone()], 1));
    let later = Filter { since: Some(NOW + 1), ..Filter::default() };
    assert_eq!(a2a_tasks::list(&mut conn, db.seal_key(), &t, APP, &later, None, 10).await.expect("list").1, 0);
}

#[tokio::test]
async fn an_unknown_stored_task_state_is_refused_as_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let x = task("m-1", "ctx_a", TaskState::Completed);
    insert(&db, &t, &x).await.expect("insert");
    force(&db, "a2a_tasks", "state", &x.id, "working").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(a2a_tasks::get(&mut conn, db.seal_key(), &t, APP, &x.id).await, "state");
}
