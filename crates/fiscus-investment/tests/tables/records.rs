//! Sealed investment records, theme universes, model portfolios and their operations: sealed, listed by
//! kind, decided once, bound to their tenant, and refused when altered.

use crate::helpers::*;
use fiscus_domain::ids::new_id;
use fiscus_investment::tables::investment_records::{self, Record, RecordKind};

#[tokio::test]
async fn an_investment_record_is_sealed_listed_by_kind_and_refused_when_altered() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let record = |kind: RecordKind, portfolio_id: Option<i64>| Record {
        id: new_id(kind.prefix()),
        kind,
        portfolio_id,
        request: "{}".into(),
        output: r#"{"executable":false}"#.into(),
        content_hash: "sha256:00".into(),
        created_by: fiscus_domain::actor::Actor::application("app_1"),
        created_at: NOW,
    };
    let (a, b, c) = (
        record(RecordKind::TaxHarvest, Some(1)),
        record(RecordKind::TaxHarvest, Some(2)),
        record(RecordKind::Scenario, None),
    );
    let mut tx = db.begin().await.expect("begin");
    for r in [&a, &b, &c] {
        investment_records::insert(&mut tx, &t, r).await.expect("insert");
    }
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(investment_records::get(&mut conn, key, &t, &a.id).await.expect("get"), a);
    let harvests =
        investment_records::list(&mut conn, key, &t, RecordKind::TaxHarvest, None, None, 10).await.expect("list");
    assert_eq!(harvests.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [b.id.as_str(), a.id.as_str()]);
    let of_one =
        investment_records::list(&mut conn, key, &t, RecordKind::TaxHarvest, Some(1), None, 10).await.expect("list");
    assert_eq!(of_one, vec![a.clone()]);
    let after = investment_records::list(&mut conn, key, &t, RecordKind::TaxHarvest, None, Some(&b.id), 10)
        .await
        .expect("list");
    assert_eq!(after, vec![a.clone()]);
    for stranger in strangers(&db, &t).await {
        assert_not_found(investment_records::get(&mut conn, key, &stranger, &a.id).await);
        assert!(
            investment_records::list(&mut conn, key, &stranger, RecordKind::TaxHarvest, None, None, 10)
                .await
                .expect("list")
                .is_empty()
        );
    }
    drop(conn);
    exec(&db, "UPDATE investment_records SET output = '{}' WHERE id = $1", &a.id).await;
    let mut conn = db.read().await.expect("conn");
    assert!(investment_records::get(&mut conn, key, &t, &a.id).await.is_err(), "an altered record is never served");
    drop(conn);
    force(&db, "investment_records", "kind", &c.id, "horoscope").await;
    let mut conn = db.read().await.expect("conn");
    assert!(investment_records::get(&mut conn, key, &t, &c.id).await.is_err());
}

#[tokio::test]
async fn universes_model_portfolios_and_operations_are_sealed_decided_once_and_tenant_bound() {
    use fiscus_investment::rules::model_portfolio::{ModelHolding, ModelState, Weighting};
    use fiscus_investment::tables::themes::{
        self, Member, ModelPortfolio, Operation, OperationStatus, Universe, UniverseStatus,
    };
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = t.workspace_id.clone();
    let key = db.seal_key();
    let mut u = Universe {
        id: 0,
        uid: new_id("thu"),
        name: "Quality".into(),
        theme: "quality".into(),
        source: "research".into(),
        status: UniverseStatus::Pending,
        members_hash: None,
        created_by: fiscus_domain::actor::Actor::application("app_1"),
        created_at: NOW,
        handed_off_at: None,
    };
    let mut tx = db.begin().await.expect("begin");
    themes::insert_universe(&mut tx, &ws, &mut u, &[]).await.expect("universe");
    tx.commit().await.expect("commit");
    assert!(u.id > 0, "an integer id was taken");
    let members = vec![Member {
        symbol: "AAPL".into(),
        instrument_id: "ins_aapl".into(),
        relevance: "0.9".into(),
        rationale: String::new(),
    }];
    let mut tx = db.begin().await.expect("begin");
    assert!(themes::hand_off(&mut tx, &ws, &u, &members, "sha256:aa", NOW + 1).await.expect("handoff"));
    assert!(!themes::hand_off(&mut tx, &ws, &u, &members, "sha256:bb", NOW + 2).await.expect("handoff"), "once");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let stored = themes::get_universe(&mut conn, key, &ws, u.id).await.expect("universe");
    assert_eq!((stored.status, stored.members_hash.as_deref()), (UniverseStatus::HandedOff, Some("sha256:aa")));
    assert_eq!(themes::members(&mut conn, &ws, u.id).await.expect("members"), members);
    assert_eq!(themes::list_universes(&mut conn, key, &ws, 0, 10).await.expect("list").len(), 1);
    let other = tenant(&db).await;
    assert_not_found(themes::get_universe(&mut conn, key, &other.workspace_id, u.id).await);
    assert!(themes::members(&mut conn, &other.workspace_id, u.id).await.expect("members").is_empty());
    drop(conn);

    let holdings = vec![ModelHolding { symbol: "AAPL".into(), relevance: "0.9".into(), weight_ppm: 1_000_000 }];
    let m = ModelPortfolio {
        id: new_id("mdp"),
        universe_id: u.id,
        name: "Quality".into(),
        weighting: Weighting::Relevance,
        limit: 20,
        benchmark_symbol: None,
        holdings_json: serde_json::to_string(&holdings).expect("json"),
        holdings,
        content_hash: "sha256:cc".into(),
        state: ModelState::ApprovalRequired,
        created_by: fiscus_domain::actor::Actor::application("app_1"),
        created_at: NOW,
        decided_by: None,
        decided_at: None,
        decision_note: None,
    };
    let op = Operation {
        id: new_id("gao"),
        portfolio_id: 1,
        model_portfolio_id: m.id.clone(),
        model_portfolio_hash: "sha256:cc".into(),
        objective: "rebalance".into(),
        agent: None,
        status: OperationStatus::GovernedReview,
        created_by: fiscus_domain::actor::Actor::application("app_1"),
        created_at: NOW,
    };
    let mut tx = db.begin().await.expect("begin");
    themes::insert_model(&mut tx, &t, &m).await.expect("model");
    themes::insert_operation(&mut tx, &t, &op).await.expect("operation");
    assert!(
        themes::decide_model(
            &mut tx,
            &t,
            &m.id,
            ModelState::Approved,
            &fiscus_domain::actor::Actor::operator("opr_1"),
            NOW + 5,
            None
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
            &fiscus_domain::actor::Actor::operator("opr_1"),
            NOW + 6,
            None
        )
        .await
        .expect("decide"),
        "decided once"
    );
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let stored = themes::get_model(&mut conn, key, &t, &m.id).await.expect("model");
    assert_eq!(
        (stored.state, stored.decided_by),
        (ModelState::Approved, Some(fiscus_domain::actor::Actor::operator("opr_1")))
    );
    assert_eq!(themes::get_operation(&mut conn, key, &t, &op.id).await.expect("operation"), op);
    let approved = themes::list_models(&mut conn, key, &t, Some(ModelState::Approved), None, 10).await.expect("list");
    assert_eq!(approved.len(), 1);
    assert!(
        themes::list_models(&mut conn, key, &t, Some(ModelState::Rejected), None, 10).await.expect("list").is_empty()
    );
    for stranger in strangers(&db, &t).await {
        assert_not_found(themes::get_model(&mut conn, key, &stranger, &m.id).await);
        assert_not_found(themes::get_operation(&mut conn, key, &stranger, &op.id).await);
        assert!(themes::list_models(&mut conn, key, &stranger, None, None, 10).await.expect("list").is_empty());
    }
    let (checked, failing) = fiscus_store::sealed_tables::verify_workspace(&mut conn, key, &ws).await.expect("verify");
    assert!(checked >= 3 && failing.is_empty(), "{failing:?}");
    drop(conn);
    // An unknown stored state or status is refused; so is an edited sealed column.
    force(&db, "governed_ai_operations", "status", &op.id, "paused").await;
    force(&db, "model_portfolios", "weighting", &m.id, "market_cap").await;
    let mut conn = db.read().await.expect("conn");
    assert!(themes::get_operation(&mut conn, key, &t, &op.id).await.is_err());
    assert!(themes::get_model(&mut conn, key, &t, &m.id).await.is_err());
    let (_, failing) = fiscus_store::sealed_tables::verify_workspace(&mut conn, key, &ws).await.expect("verify");
    assert_eq!(failing.len(), 2, "{failing:?}");
}
