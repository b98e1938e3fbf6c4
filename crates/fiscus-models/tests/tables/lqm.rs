//! LQM records: every read inside its tenant, one name per tenant, a review recorded once, an unknown stored
//! state or a body that is not its record refused, and a row edited outside Fiscus refused by its seal.

use crate::helpers::*;
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_models::rules::lqm::family::{Algorithm, TaskFamily};
use fiscus_models::rules::lqm::licence::Terms;
use fiscus_models::rules::lqm::records::{
    Column, ContractBody, ContractTarget, DatasetRef, FeatureSchema, ModelBody, RequestBody, TargetTransform,
};
use fiscus_models::rules::lqm::retraining::RequestState;
use fiscus_models::tables::lqm::models;
use fiscus_models::tables::lqm::training::{self, Review};
use fiscus_store::sealed_records::Record;
use fiscus_store::{Store, StoreError};

fn record<B: serde::Serialize>(prefix: &str, body: B) -> Record<B> {
    let body_json = serde_json::to_string(&body).expect("json");
    let content_hash = fiscus_domain::evidence::seal_bytes(body_json.as_bytes());
    Record {
        id: new_id(prefix),
        body,
        body_json,
        content_hash,
        created_by: fiscus_domain::actor::Actor::application("app_x"),
        created_at: 1,
    }
}

fn model(name: &str) -> Record<ModelBody> {
    record(
        "lqm",
        ModelBody {
            name: name.into(),
            task_family: TaskFamily::Forecasting,
            intended_use: "tests".into(),
            license: "MIT".into(),
            commercial_use: true,
        },
    )
}

/// A model, a contract and a pending request of `t`: the request's id.
async fn pending_request(db: &Store, t: &Tenant) -> String {
    let m = model(&new_id("name"));
    let c = record(
        "lqc",
        ContractBody {
            model_id: m.id.clone(),
            dataset: DatasetRef {
                id: 4,
                kind: "prices".into(),
                name: "n".into(),
                version: 1,
                source: "s".into(),
                licence: "MIT".into(),
                file_sha256: "sha256:f".into(),
                content_hash: "sha256:c".into(),
                importer_version: "1".into(),
                imported_by: fiscus_domain::actor::Actor::cli(),
            },
            licence_terms: Terms::Permissive,
            feature_schema: FeatureSchema {
                target: ContractTarget::Instrument { symbol: "SPX".into(), transform: TargetTransform::Price },
                columns: vec![Column { name: "value".into(), type_: "number".into() }],
            },
            observations: 100,
            holdout: 20,
            first_date: "2020-01-01".into(),
            last_date: "2020-06-01".into(),
            source_hash: "sha256:s".into(),
            feature_schema_hash: "sha256:f".into(),
            lineage_hash: "sha256:l".into(),
            data_hash: "sha256:d".into(),
        },
    );
    let r = record(
        "lrr",
        RequestBody {
            model_id: m.id.clone(),
            contract_id: c.id.clone(),
            contract_hash: c.content_hash.clone(),
            algorithm: Algorithm::HoltWinters,
            hyperparameters: serde_json::json!({}),
            reason: "test".into(),
        },
    );
    let mut tx = db.begin().await.expect("begin");
    models::insert_model(&mut tx, t, &m).await.expect("model");
    models::insert_contract(&mut tx, t, &c).await.expect("contract");
    training::insert_request(&mut tx, t, &r).await.expect("request");
    tx.commit().await.expect("commit");
    r.id
}

#[tokio::test]
async fn models_are_the_tenants_and_a_name_is_used_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let m = model("Forecaster");
    let mut tx = db.begin().await.expect("begin");
    models::insert_model(&mut tx, &t, &m).await.expect("insert");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let read = models::get_model(&mut conn, db.seal_key(), &t, &m.id).await.expect("read");
    assert_eq!(read, m);
    for stranger in strangers(&db, &t).await {
        assert_not_found(models::get_model(&mut conn, db.seal_key(), &stranger, &m.id).await);
        assert!(models::list_models(&mut conn, db.seal_key(), &stranger, None, 10).await.expect("list").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(models::insert_model(&mut tx, &t, &model("Forecaster")).await);
    drop(tx);
    exec(&db, "UPDATE lqm_models SET body = replace(body, 'tests', 'trading') WHERE id = $1", &m.id).await;
    let mut conn = db.read().await.expect("conn");
    let tampered = models::get_model(&mut conn, db.seal_key(), &t, &m.id).await;
    assert!(matches!(tampered, Err(StoreError::Tampered(_))), "{tampered:?}");
}

#[tokio::test]
async fn a_review_is_recorded_once_and_an_unknown_state_is_refused() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let id = pending_request(&db, &t).await;
    let review = Review { by: fiscus_domain::actor::Actor::application("app_y"), at: 2, note: Some("ok".into()) };
    let mut tx = db.begin().await.expect("begin");
    assert!(training::review_request(&mut tx, &t, &id, RequestState::Approved, &review).await.expect("review"));
    assert!(!training::review_request(&mut tx, &t, &id, RequestState::Rejected, &review).await.expect("again"));
    tx.commit().await.expect("commit");
    for stranger in strangers(&db, &t).await {
        let mut tx = db.begin().await.expect("begin");
        assert!(!training::mark_trained(&mut tx, &stranger, &id, "ckp_x").await.expect("stranger"));
    }
    let mut conn = db.read().await.expect("conn");
    let read = training::get_request(&mut conn, db.seal_key(), &t, &id).await.expect("read");
    assert_eq!((read.state, read.review), (RequestState::Approved, Some(review)));
    drop(conn);
    force(&db, "lqm_retraining_requests", "state", &id, "escalated").await;
    let mut tx = db.begin().await.expect("begin");
    fiscus_store::seals::seal(&mut tx, &training::REQUESTS_SEALED, &t.workspace_id, &id).await.expect("reseal");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(training::get_request(&mut conn, db.seal_key(), &t, &id).await, "state");
}
