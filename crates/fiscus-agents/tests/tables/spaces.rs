//! Agent Spaces: spaces, versions, decisions, runs and calls read sealed in their tenant only, each key,
//! number and execution written once, histories in their order; a run moves only from the state it is in
//! and lets go of its claim when it ends; the workers' claim takes a queued run once, round the workspaces
//! up to each one's cap, and takes over a stale claim; edited rows are refused by their seals.

use crate::helpers::*;
use fiscus_agents::rules::spaces::records::{CallBody, DecisionBody, RunBody, SpaceBody, VersionBody};
use fiscus_agents::rules::spaces::{AgentRunState, ModelSelection, PlannedCall, RunMode, SpaceDecision, library};
use fiscus_agents::tables::spaces::{self, Call, Claimed, Decision, Run, Space, Version};
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::{CredentialKind, Tenant};
use fiscus_store::sealed_records::Record;
use fiscus_store::{Store, seals};

fn space(key: &str) -> Space {
    sealed("asp", SpaceBody { key: key.into(), name: "Market watch".into(), description: "Prices".into() }, NOW)
}

fn version(space_id: &str, version: i64) -> Version {
    let body = VersionBody {
        space_id: space_id.into(),
        version,
        definition: library::find("market_watch").expect("shipped").definition(),
        definition_hash: format!("sha256:def{version}"),
    };
    sealed("asv", body, NOW + version)
}

fn decision(space_id: &str, seq: i64, decision: SpaceDecision, version_id: Option<&str>) -> Decision {
    let body = DecisionBody {
        space_id: space_id.into(),
        seq,
        decision,
        version_id: version_id.map(str::to_string),
        note: Some(format!("decision {seq}")),
    };
    sealed("asd", body, NOW + seq)
}

fn new_run(space_id: &str, version_id: &str, created_at: i64) -> Record<RunBody> {
    let mut arguments = serde_json::Map::new();
    arguments.insert("uid".into(), serde_json::Value::String("AAPL".into()));
    let body = RunBody {
        space_id: space_id.into(),
        version_id: version_id.into(),
        definition_hash: "sha256:def1".into(),
        execution_id: new_id("aex"),
        prompt: "How did AAPL move?".into(),
        prompt_hash: "sha256:prompt".into(),
        execution_mode: RunMode::Async,
        model_selection: ModelSelection::AutoNative,
        queued: true,
        plan: vec![PlannedCall { rule: "prices".into(), tool: "get_data_instruments_uid_prices".into(), arguments }],
        application_id: "app_test".into(),
        credential_id: "key_test".into(),
        credential_kind: CredentialKind::ApiKey,
        service_class: "default".into(),
        scopes: vec!["data:read".into()],
        credits: 1,
    };
    sealed("arn", body, created_at)
}

fn call(run_id: &str, seq: i64) -> Call {
    let body = CallBody {
        run_id: run_id.into(),
        seq,
        rule: "prices".into(),
        tool: "get_data_instruments_uid_prices".into(),
        arguments: serde_json::Map::new(),
        request_hash: "sha256:req".into(),
        status: 200,
        response: serde_json::json!({"object": "list", "data": [seq]}),
        response_hash: format!("sha256:resp{seq}"),
    };
    sealed("arc", body, NOW + seq)
}

/// A space of `t` with its first version.
async fn promoted(db: &Store, t: &Tenant, key: &str) -> (Space, Version) {
    let s = space(key);
    let v = version(&s.id, 1);
    let mut tx = db.begin().await.expect("begin");
    spaces::insert_space(&mut tx, t, &s).await.expect("insert space");
    spaces::insert_version(&mut tx, t, &v).await.expect("insert version");
    tx.commit().await.expect("commit");
    (s, v)
}

async fn add_run(db: &Store, t: &Tenant, r: &Record<RunBody>, state: AgentRunState) {
    let mut tx = db.begin().await.expect("begin");
    spaces::insert_run(&mut tx, t, r, state).await.expect("insert run");
    tx.commit().await.expect("commit");
}

/// A queued run of a new space of `t`, due at `created_at`.
async fn queued_run(db: &Store, t: &Tenant, created_at: i64) -> Record<RunBody> {
    let (s, v) = promoted(db, t, &new_id("key").to_lowercase()).await;
    let r = new_run(&s.id, &v.id, created_at);
    add_run(db, t, &r, AgentRunState::Queued).await;
    r
}

async fn claim(db: &Store, worker: &str, now: i64, stale_after: i64, limit: i64, cap: i64) -> Vec<Claimed> {
    let mut tx = db.begin().await.expect("begin");
    let claimed = spaces::claim(&mut tx, worker, now, stale_after, limit, cap).await.expect("claim");
    tx.commit().await.expect("commit");
    claimed
}

async fn move_run(
    db: &Store,
    t: &Tenant,
    id: &str,
    (from, to): (AgentRunState, AgentRunState),
    started_at: Option<i64>,
    ending: Option<(&str, &str, i64)>,
) -> bool {
    let mut tx = db.begin().await.expect("begin");
    let moved = spaces::move_run(&mut tx, t, id, from, to, started_at, ending).await.expect("move");
    tx.commit().await.expect("commit");
    moved
}

fn claimed(run_id: &str, t: &Tenant) -> Claimed {
    Claimed { run_id: run_id.to_string(), tenant: t.clone() }
}

#[tokio::test]
async fn a_space_is_read_sealed_in_its_tenant_only_and_its_key_is_used_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (first, _) = promoted(&db, &t, "market_watch").await;
    let (second, _) = promoted(&db, &t, "treasury_briefing").await;
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(spaces::get_space(&mut conn, key, &t, &first.id).await.expect("get"), first);
    assert_eq!(spaces::space_by_key(&mut conn, key, &t, "market_watch").await.expect("by key"), Some(first.clone()));
    assert_eq!(spaces::space_by_key(&mut conn, key, &t, "unknown").await.expect("by key"), None);
    assert_eq!(spaces::spaces(&mut conn, key, &t).await.expect("spaces"), vec![first.clone(), second.clone()]);
    let strangers = strangers(&db, &t).await;
    for other in &strangers {
        assert_not_found(spaces::get_space(&mut conn, key, other, &first.id).await);
        assert_eq!(spaces::space_by_key(&mut conn, key, other, "market_watch").await.expect("by key"), None);
        assert!(spaces::spaces(&mut conn, key, other).await.expect("spaces").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(spaces::insert_space(&mut tx, &t, &space("market_watch")).await);
    drop(tx);
    // The key is the tenant's: the other environment may hold it too.
    let mut tx = db.begin().await.expect("begin");
    spaces::insert_space(&mut tx, &strangers[1], &space("market_watch")).await.expect("the other environment's");
    tx.commit().await.expect("commit");
}

#[tokio::test]
async fn versions_and_decisions_read_in_their_order_and_each_number_is_written_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (s, v1) = promoted(&db, &t, "market_watch").await;
    // Rows written out of their order: histories are by number, not by id.
    let v3 = version(&s.id, 3);
    let v2 = version(&s.id, 2);
    let suspend = decision(&s.id, 2, SpaceDecision::Suspend, None);
    let promote = decision(&s.id, 1, SpaceDecision::Promote, Some(&v1.id));
    let mut tx = db.begin().await.expect("begin");
    for v in [&v3, &v2] {
        spaces::insert_version(&mut tx, &t, v).await.expect("version");
    }
    for d in [&suspend, &promote] {
        spaces::insert_decision(&mut tx, &t, d).await.expect("decision");
    }
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(spaces::get_version(&mut conn, key, &t, &v2.id).await.expect("get"), v2);
    assert_eq!(spaces::versions_of(&mut conn, key, &t, &s.id).await.expect("versions"), vec![v1.clone(), v2, v3]);
    assert_eq!(spaces::decisions_of(&mut conn, key, &t, &s.id).await.expect("decisions"), vec![promote, suspend]);
    for other in strangers(&db, &t).await {
        assert_not_found(spaces::get_version(&mut conn, key, &other, &v1.id).await);
        assert!(spaces::versions_of(&mut conn, key, &other, &s.id).await.expect("versions").is_empty());
        assert!(spaces::decisions_of(&mut conn, key, &other, &s.id).await.expect("decisions").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(spaces::insert_version(&mut tx, &t, &version(&s.id, 2)).await);
    drop(tx);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(spaces::insert_decision(&mut tx, &t, &decision(&s.id, 1, SpaceDecision::Suspend, None)).await);
}

#[tokio::test]
async fn a_run_is_found_by_its_execution_and_moves_only_from_the_state_it_is_in() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (s, v) = promoted(&db, &t, "market_watch").await;
    let queued = new_run(&s.id, &v.id, NOW);
    let in_request = new_run(&s.id, &v.id, NOW + 1);
    add_run(&db, &t, &queued, AgentRunState::Queued).await;
    add_run(&db, &t, &in_request, AgentRunState::Running).await;
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    let expected = Run {
        record: queued.clone(),
        state: AgentRunState::Queued,
        answer: None,
        output_hash: None,
        started_at: None,
        ended_at: None,
    };
    assert_eq!(spaces::get_run(&mut conn, key, &t, &queued.id).await.expect("get"), expected);
    let by_execution = spaces::run_of_execution(&mut conn, key, &t, &in_request.body.execution_id).await;
    assert_eq!(by_execution.expect("by execution").record, in_request);
    assert_not_found(spaces::run_of_execution(&mut conn, key, &t, "aex_unknown").await);
    assert_eq!(spaces::in_flight(&mut conn, &t).await.expect("in flight"), 2);
    let strangers = strangers(&db, &t).await;
    for other in &strangers {
        assert_not_found(spaces::get_run(&mut conn, key, other, &queued.id).await);
        assert_not_found(spaces::run_of_execution(&mut conn, key, other, &queued.body.execution_id).await);
        assert_eq!(spaces::in_flight(&mut conn, other).await.expect("in flight"), 0);
    }
    drop(conn);
    for other in &strangers {
        let to = (AgentRunState::Queued, AgentRunState::Running);
        assert!(!move_run(&db, other, &queued.id, to, Some(NOW + 2), None).await);
    }
    let start = (AgentRunState::Queued, AgentRunState::Running);
    assert!(move_run(&db, &t, &queued.id, start, Some(NOW + 2), None).await);
    assert!(!move_run(&db, &t, &queued.id, start, Some(NOW + 3), None).await, "started already");
    let end = (AgentRunState::Running, AgentRunState::Completed);
    assert!(move_run(&db, &t, &queued.id, end, None, Some(("AAPL rose 3%", "sha256:out", NOW + 4))).await);
    let fail = (AgentRunState::Running, AgentRunState::Failed);
    assert!(!move_run(&db, &t, &queued.id, fail, None, Some(("late", "sha256:x", NOW + 5))).await, "ended already");
    let mut conn = db.read().await.expect("conn");
    let ended = Run {
        state: AgentRunState::Completed,
        answer: Some("AAPL rose 3%".into()),
        output_hash: Some("sha256:out".into()),
        started_at: Some(NOW + 2),
        ended_at: Some(NOW + 4),
        ..expected
    };
    assert_eq!(spaces::get_run(&mut conn, key, &t, &queued.id).await.expect("resealed"), ended);
    assert_eq!(spaces::in_flight(&mut conn, &t).await.expect("in flight"), 1);
    drop(conn);
    // An execution id is used once, whoever's.
    let mut twin = new_run(&s.id, &v.id, NOW + 6);
    twin.body.execution_id = queued.body.execution_id.clone();
    let twin = sealed("arn", twin.body, NOW + 6);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(spaces::insert_run(&mut tx, &t, &twin, AgentRunState::Queued).await);
}

#[tokio::test]
async fn calls_are_recorded_once_per_sequence_number_and_read_in_order() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = queued_run(&db, &t, NOW).await;
    let (second, first) = (call(&r.id, 2), call(&r.id, 1));
    let mut tx = db.begin().await.expect("begin");
    spaces::insert_call(&mut tx, &t, &second).await.expect("second");
    spaces::insert_call(&mut tx, &t, &first).await.expect("first");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(spaces::calls_of(&mut conn, key, &t, &r.id).await.expect("calls"), vec![first, second]);
    for other in strangers(&db, &t).await {
        assert!(spaces::calls_of(&mut conn, key, &other, &r.id).await.expect("calls").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(spaces::insert_call(&mut tx, &t, &call(&r.id, 2)).await);
}

#[tokio::test]
async fn a_queued_run_is_claimed_once_and_a_stale_claim_is_taken_over() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = queued_run(&db, &t, NOW).await;
    // A run carried out in its request is never on the queue.
    let (s, v) = promoted(&db, &t, "in_request").await;
    add_run(&db, &t, &new_run(&s.id, &v.id, NOW), AgentRunState::Running).await;
    assert!(claim(&db, "wrk_a", NOW - 1, 100, 10, 10).await.is_empty(), "not due yet");
    assert_eq!(claim(&db, "wrk_a", NOW, 100, 10, 10).await, vec![claimed(&r.id, &t)]);
    assert!(claim(&db, "wrk_b", NOW + 100, 100, 10, 10).await.is_empty(), "held by a live claim");
    // A claim still held while the run runs is taken over once stale.
    assert!(move_run(&db, &t, &r.id, (AgentRunState::Queued, AgentRunState::Running), Some(NOW), None).await);
    assert_eq!(claim(&db, "wrk_b", NOW + 101, 100, 10, 10).await, vec![claimed(&r.id, &t)]);
    assert!(claim(&db, "wrk_c", NOW + 150, 100, 10, 10).await.is_empty());
    // An ended run is off the queue.
    let end = (AgentRunState::Running, AgentRunState::Failed);
    assert!(move_run(&db, &t, &r.id, end, None, Some(("tool failed", "sha256:out", NOW + 160))).await);
    assert!(claim(&db, "wrk_c", NOW + 1_000_000, 100, 10, 10).await.is_empty());
}

#[tokio::test]
async fn claims_go_round_the_workspaces_stop_at_each_cap_and_an_ended_run_frees_its_place() {
    let db = fresh_store().await;
    let a = tenant(&db).await;
    let b = production(&workspace(&db).await);
    let mut flood = Vec::new();
    for i in 0..3 {
        flood.push(queued_run(&db, &a, NOW + i).await);
    }
    let small = queued_run(&db, &b, NOW + 10).await;
    assert_eq!(
        claim(&db, "wrk_a", NOW + 20, 1_000, 2, 1).await,
        vec![claimed(&flood[0].id, &a), claimed(&small.id, &b)]
    );
    assert!(claim(&db, "wrk_b", NOW + 20, 1_000, 5, 1).await.is_empty(), "A is at its cap of one");
    // The run ends: its claim is let go with it, so A may take its next.
    let start = (AgentRunState::Queued, AgentRunState::Running);
    assert!(move_run(&db, &a, &flood[0].id, start, Some(NOW + 21), None).await);
    assert!(claim(&db, "wrk_b", NOW + 22, 1_000, 5, 1).await.is_empty(), "a running run still holds its place");
    let end = (AgentRunState::Running, AgentRunState::Completed);
    assert!(move_run(&db, &a, &flood[0].id, end, None, Some(("done", "sha256:out", NOW + 23))).await);
    assert_eq!(claim(&db, "wrk_b", NOW + 24, 1_000, 5, 1).await, vec![claimed(&flood[1].id, &a)]);
}

#[tokio::test]
async fn an_edited_space_record_is_refused_by_its_seal_and_an_unknown_state_as_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = queued_run(&db, &t, NOW).await;
    exec(&db, "UPDATE agent_runs SET answer = 'made up' WHERE id = $1", &r.id).await;
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_tampered(spaces::get_run(&mut conn, key, &t, &r.id).await);
    assert_tampered(spaces::run_of_execution(&mut conn, key, &t, &r.body.execution_id).await);
    drop(conn);
    let (s, _) = promoted(&db, &t, "market_watch").await;
    exec(&db, "UPDATE agent_spaces SET body = replace(body, 'Prices', 'Payments') WHERE id = $1", &s.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(spaces::get_space(&mut conn, key, &t, &s.id).await);
    assert_tampered(spaces::spaces(&mut conn, key, &t).await);
    drop(conn);
    // Resealed after the edit, so that what is refused is the value, not the seal.
    let other = queued_run(&db, &t, NOW).await;
    force(&db, "agent_runs", "state", &other.id, "paused").await;
    let mut tx = db.begin().await.expect("begin");
    seals::seal(&mut tx, &spaces::RUNS_SEALED, &t.workspace_id, &other.id).await.expect("reseal");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(spaces::get_run(&mut conn, key, &t, &other.id).await, "state");
}
