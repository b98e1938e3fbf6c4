//! Thematic universes, model portfolios and governed AI operations: a universe numbered from its counter and
//! read in its workspace only, handed off once; a model portfolio and an operation read in their tenant
//! only, a draft decided once, pages newest first; edited rows refused by their seals and unknown stored
//! values refused as corrupt.

use crate::helpers::*;
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_investment::rules::model_portfolio::{ModelHolding, ModelState, Weighting};
use fiscus_investment::tables::themes::{
    self, Member, ModelPortfolio, Operation, OperationStatus, Universe, UniverseStatus,
};
use fiscus_store::{Store, seals};

fn universe(name: &str, handed_off: bool) -> Universe {
    Universe {
        id: 0,
        uid: new_id("thu"),
        name: name.into(),
        theme: "clean energy".into(),
        source: "research:desk".into(),
        status: if handed_off { UniverseStatus::HandedOff } else { UniverseStatus::Pending },
        members_hash: handed_off.then(|| "sha256:members".to_string()),
        created_by: fiscus_domain::actor::Actor::application("app_test"),
        created_at: NOW,
        handed_off_at: handed_off.then_some(NOW),
    }
}

fn member(symbol: &str, relevance: &str) -> Member {
    Member {
        symbol: symbol.into(),
        instrument_id: format!("ins_{symbol}"),
        relevance: relevance.into(),
        rationale: format!("{symbol} builds the grid"),
    }
}

async fn add_universe(db: &Store, workspace_id: &str, u: &mut Universe, members: &[Member]) {
    let mut tx = db.begin().await.expect("begin");
    themes::insert_universe(&mut tx, workspace_id, u, members).await.expect("insert universe");
    tx.commit().await.expect("commit");
}

fn model(universe_id: i64, name: &str) -> ModelPortfolio {
    let holdings = vec![
        ModelHolding { symbol: "ENPH".into(), relevance: "0.9".into(), weight_ppm: 600_000 },
        ModelHolding { symbol: "FSLR".into(), relevance: "0.6".into(), weight_ppm: 400_000 },
    ];
    ModelPortfolio {
        id: new_id("mdp"),
        universe_id,
        name: name.into(),
        weighting: Weighting::Relevance,
        limit: 2,
        benchmark_symbol: Some("SPX".into()),
        holdings_json: serde_json::to_string(&holdings).expect("json"),
        holdings,
        content_hash: "sha256:model".into(),
        state: ModelState::ApprovalRequired,
        created_by: fiscus_domain::actor::Actor::application("app_test"),
        created_at: NOW,
        decided_by: None,
        decided_at: None,
        decision_note: None,
    }
}

async fn add_model(db: &Store, t: &Tenant, m: &ModelPortfolio) {
    let mut tx = db.begin().await.expect("begin");
    themes::insert_model(&mut tx, t, m).await.expect("insert model");
    tx.commit().await.expect("commit");
}

fn operation(model_portfolio_id: &str, agent: Option<&str>) -> Operation {
    Operation {
        id: new_id("gao"),
        portfolio_id: 7,
        model_portfolio_id: model_portfolio_id.into(),
        model_portfolio_hash: "sha256:model".into(),
        objective: "track the model within 2%".into(),
        agent: agent.map(str::to_string),
        status: OperationStatus::GovernedReview,
        created_by: fiscus_domain::actor::Actor::application("app_test"),
        created_at: NOW + 1,
    }
}

async fn add_operation(db: &Store, t: &Tenant, o: &Operation) {
    let mut tx = db.begin().await.expect("begin");
    themes::insert_operation(&mut tx, t, o).await.expect("insert operation");
    tx.commit().await.expect("commit");
}

fn ids(models: &[ModelPortfolio]) -> Vec<String> {
    models.iter().map(|m| m.id.clone()).collect()
}

#[tokio::test]
async fn a_universe_takes_the_next_number_and_is_read_sealed_in_its_workspace_only() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut pending = universe("Grid", false);
    let mut handed = universe("Solar", true);
    add_universe(&db, &t.workspace_id, &mut pending, &[]).await;
    add_universe(&db, &t.workspace_id, &mut handed, &[member("FSLR", "0.6"), member("ENPH", "0.9")]).await;
    assert!(pending.id >= 1);
    assert_eq!(handed.id, pending.id + 1, "numbers come from one counter, in order");
    let mut conn = db.read().await.expect("conn");
    assert_eq!(
        themes::get_universe(&mut conn, db.seal_key(), &t.workspace_id, pending.id).await.expect("get"),
        pending
    );
    assert_eq!(themes::get_universe(&mut conn, db.seal_key(), &t.workspace_id, handed.id).await.expect("get"), handed);
    // Pages by number: `limit + 1` rows, and the cursor is exclusive.
    assert_eq!(
        themes::list_universes(&mut conn, db.seal_key(), &t.workspace_id, 0, 1).await.expect("list"),
        vec![pending.clone(), handed.clone()]
    );
    assert_eq!(
        themes::list_universes(&mut conn, db.seal_key(), &t.workspace_id, pending.id, 10).await.expect("list"),
        vec![handed.clone()]
    );
    assert_eq!(
        themes::members(&mut conn, &t.workspace_id, handed.id).await.expect("members"),
        vec![member("ENPH", "0.9"), member("FSLR", "0.6")],
        "members by symbol"
    );
    assert!(themes::members(&mut conn, &t.workspace_id, pending.id).await.expect("members").is_empty());
    // A universe is the workspace's: both environments read it, another workspace nothing of it.
    let other = workspace(&db).await;
    assert_not_found(themes::get_universe(&mut conn, db.seal_key(), &other, handed.id).await);
    assert!(themes::list_universes(&mut conn, db.seal_key(), &other, 0, 10).await.expect("list").is_empty());
    assert!(themes::members(&mut conn, &other, handed.id).await.expect("members").is_empty());
    drop(conn);
    // The uid is the row's key.
    let mut again = universe("Grid again", false);
    again.uid = pending.uid.clone();
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(themes::insert_universe(&mut tx, &t.workspace_id, &mut again, &[]).await);
}

#[tokio::test]
async fn a_pending_universe_is_handed_off_once_in_its_own_workspace() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut u = universe("Grid", false);
    add_universe(&db, &t.workspace_id, &mut u, &[]).await;
    let other = workspace(&db).await;
    let members = [member("NEE", "0.8"), member("ENPH", "0.9")];
    let mut tx = db.begin().await.expect("begin");
    assert!(!themes::hand_off(&mut tx, &other, &u, &members, "sha256:h", NOW + 5).await.expect("stranger"));
    assert!(themes::hand_off(&mut tx, &t.workspace_id, &u, &members, "sha256:h", NOW + 5).await.expect("hand off"));
    assert!(
        !themes::hand_off(&mut tx, &t.workspace_id, &u, &[member("XOM", "0.1")], "sha256:x", NOW + 6)
            .await
            .expect("again"),
        "the members are fixed once handed off"
    );
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let read = themes::get_universe(&mut conn, db.seal_key(), &t.workspace_id, u.id).await.expect("resealed");
    let expected = Universe {
        status: UniverseStatus::HandedOff,
        members_hash: Some("sha256:h".into()),
        handed_off_at: Some(NOW + 5),
        ..u.clone()
    };
    assert_eq!(read, expected);
    assert_eq!(
        themes::members(&mut conn, &t.workspace_id, u.id).await.expect("members"),
        vec![member("ENPH", "0.9"), member("NEE", "0.8")]
    );
}

#[tokio::test]
async fn an_edited_universe_is_refused_by_its_seal() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut u = universe("Grid", true);
    add_universe(&db, &t.workspace_id, &mut u, &[]).await;
    exec(&db, "UPDATE investment_universes SET members_hash = 'sha256:other' WHERE uid = $1", &u.uid).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(themes::get_universe(&mut conn, db.seal_key(), &t.workspace_id, u.id).await);
    assert_tampered(themes::list_universes(&mut conn, db.seal_key(), &t.workspace_id, 0, 10).await);
}

#[tokio::test]
async fn a_model_portfolio_is_read_in_its_tenant_only_and_decided_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let m = model(1, "Solar core");
    add_model(&db, &t, &m).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(themes::get_model(&mut conn, db.seal_key(), &t, &m.id).await.expect("get"), m);
    let strangers = strangers(&db, &t).await;
    for other in &strangers {
        assert_not_found(themes::get_model(&mut conn, db.seal_key(), other, &m.id).await);
        assert!(themes::list_models(&mut conn, db.seal_key(), other, None, None, 10).await.expect("list").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    for other in &strangers {
        assert!(
            !themes::decide_model(
                &mut tx,
                other,
                &m.id,
                ModelState::Approved,
                &fiscus_domain::actor::Actor::operator("opr_x"),
                NOW + 1,
                None
            )
            .await
            .expect("stranger")
        );
    }
    assert!(
        themes::decide_model(
            &mut tx,
            &t,
            &m.id,
            ModelState::Approved,
            &fiscus_domain::actor::Actor::operator("opr_1"),
            NOW + 2,
            Some("fits")
        )
        .await
        .expect("decide")
    );
    assert!(
        !themes::decide_model(
            &mut tx,
            &t,
            &m.id,
            ModelState::Rejected,
            &fiscus_domain::actor::Actor::operator("opr_2"),
            NOW + 3,
            None
        )
        .await
        .expect("again"),
        "a decided portfolio awaits no decision"
    );
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let expected = ModelPortfolio {
        state: ModelState::Approved,
        decided_by: Some(fiscus_domain::actor::Actor::operator("opr_1")),
        decided_at: Some(NOW + 2),
        decision_note: Some("fits".into()),
        ..m.clone()
    };
    assert_eq!(themes::get_model(&mut conn, db.seal_key(), &t, &m.id).await.expect("resealed"), expected);
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(themes::insert_model(&mut tx, &t, &m).await);
}

#[tokio::test]
async fn model_portfolios_list_newest_first_by_page_and_by_state() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (a, b, c) = (model(1, "A"), model(1, "B"), model(1, "C"));
    for m in [&a, &b, &c] {
        add_model(&db, &t, m).await;
    }
    let mut tx = db.begin().await.expect("begin");
    assert!(
        themes::decide_model(
            &mut tx,
            &t,
            &b.id,
            ModelState::Rejected,
            &fiscus_domain::actor::Actor::operator("opr_1"),
            NOW + 1,
            None
        )
        .await
        .expect("reject")
    );
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    let page = themes::list_models(&mut conn, key, &t, None, None, 1).await.expect("list");
    assert_eq!(ids(&page), vec![c.id.clone(), b.id.clone()], "limit + 1, newest first");
    let rest = themes::list_models(&mut conn, key, &t, None, Some(&c.id), 10).await.expect("list");
    assert_eq!(ids(&rest), vec![b.id.clone(), a.id.clone()]);
    assert_eq!(rest[0].state, ModelState::Rejected);
    let drafts = themes::list_models(&mut conn, key, &t, Some(ModelState::ApprovalRequired), None, 10).await;
    assert_eq!(ids(&drafts.expect("list")), vec![c.id.clone(), a.id.clone()]);
    let rejected = themes::list_models(&mut conn, key, &t, Some(ModelState::Rejected), None, 10).await;
    assert_eq!(ids(&rejected.expect("list")), vec![b.id.clone()]);
    let approved = themes::list_models(&mut conn, key, &t, Some(ModelState::Approved), None, 10).await;
    assert!(approved.expect("list").is_empty());
}

#[tokio::test]
async fn the_first_page_is_the_newest_whatever_the_database_s_collation() {
    // Under a language collation `~` sorts before letters: a first page bounded by it came back empty.
    let db = fresh_store_collated().await;
    let t = tenant(&db).await;
    let (a, b) = (model(1, "A"), model(1, "B"));
    for m in [&a, &b] {
        add_model(&db, &t, m).await;
    }
    let mut conn = db.read().await.expect("conn");
    let page = themes::list_models(&mut conn, db.seal_key(), &t, None, None, 10).await.expect("list");
    assert_eq!(ids(&page), vec![b.id.clone(), a.id.clone()]);
}

#[tokio::test]
async fn an_edited_model_portfolio_is_refused_and_an_unknown_stored_value_is_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let edited = model(1, "Edited");
    add_model(&db, &t, &edited).await;
    exec(&db, "UPDATE model_portfolios SET member_limit = 50 WHERE id = $1", &edited.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(themes::get_model(&mut conn, db.seal_key(), &t, &edited.id).await);
    assert_tampered(themes::list_models(&mut conn, db.seal_key(), &t, None, None, 10).await);
    drop(conn);
    exec(&db, "DELETE FROM model_portfolios WHERE id = $1", &edited.id).await;
    // Resealed after the edit, so that what is refused is the value, not the seal.
    for (column, value) in [("weighting", "momentum"), ("state", "archived"), ("holdings", "{")] {
        let m = model(1, column);
        add_model(&db, &t, &m).await;
        force(&db, "model_portfolios", column, &m.id, value).await;
        let mut tx = db.begin().await.expect("begin");
        seals::seal(&mut tx, &themes::MODEL_PORTFOLIOS_SEALED, &t.workspace_id, &m.id).await.expect("reseal");
        tx.commit().await.expect("commit");
        let mut conn = db.read().await.expect("conn");
        assert_corrupt(themes::get_model(&mut conn, db.seal_key(), &t, &m.id).await, column);
        drop(conn);
        exec(&db, "DELETE FROM model_portfolios WHERE id = $1", &m.id).await;
    }
}

#[tokio::test]
async fn an_operation_is_read_sealed_in_its_tenant_only() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let m = model(1, "Solar core");
    add_model(&db, &t, &m).await;
    let with_agent = operation(&m.id, Some("rebalancer"));
    let without = operation(&m.id, None);
    add_operation(&db, &t, &with_agent).await;
    add_operation(&db, &t, &without).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(themes::get_operation(&mut conn, db.seal_key(), &t, &with_agent.id).await.expect("get"), with_agent);
    assert_eq!(themes::get_operation(&mut conn, db.seal_key(), &t, &without.id).await.expect("get"), without);
    for other in strangers(&db, &t).await {
        assert_not_found(themes::get_operation(&mut conn, db.seal_key(), &other, &with_agent.id).await);
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(themes::insert_operation(&mut tx, &t, &with_agent).await);
    drop(tx);
    exec(&db, "UPDATE governed_ai_operations SET objective = 'anything goes' WHERE id = $1", &with_agent.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(themes::get_operation(&mut conn, db.seal_key(), &t, &with_agent.id).await);
    drop(conn);
    force(&db, "governed_ai_operations", "status", &without.id, "paused").await;
    let mut tx = db.begin().await.expect("begin");
    seals::seal(&mut tx, &themes::OPERATIONS_SEALED, &t.workspace_id, &without.id).await.expect("reseal");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(themes::get_operation(&mut conn, db.seal_key(), &t, &without.id).await, "status");
}
