//! Webhook delivery in the simulation: the worker's pass (`fiscus_server::workers::webhooks::run_once`: fan
//! out, then claim queues) and each claimed queue served as `fiscus_kernel::deliveries::serve_queue` serves
//! it: its pending deliveries read, sent one at a time in event order until one must wait or the hold is
//! over, then the attempts recorded under the claim (`record`), the retry delay from the domain's schedule
//! (`webhooks::retry_delay`, `jittered`). The endpoint's standing is not read again (it stays active here).
//!
//! The receiver is the outside world: it logs every request it got, in order, and whether it accepted it
//! (a 2xx, even when the worker timed out before hearing it). It fails a given event at most
//! [`MAX_FAILURES`] times, fewer than the retry schedule allows, so every event must reach it.

use crate::world::{Broken, Cap, SEC, Sim, Work};
use fiscus_domain::actions::ControlState;
use fiscus_domain::actor::Actor;
use fiscus_domain::events::{ActionEventData, Event, EventData, EventType};
use fiscus_domain::ids::new_id;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use fiscus_domain::webhooks::{jittered, retry_delay};
use fiscus_kernel::tables::webhook_deliveries::{self as deliveries, After, Attempt, Claimed, Due};
use fiscus_kernel::tables::webhooks::{self, Endpoint, EndpointStatus};
use fiscus_store::{WriteTx, outbox};
use std::collections::BTreeMap;

/// The default `webhook_claim_stale_seconds`.
pub const STALE: i64 = 60 * SEC;
/// `deliveries::hold`: the least of 5 s and a third of the stale time.
pub const HOLD: i64 = 5 * SEC;
/// `deliveries::CHUNK`.
const CHUNK: i64 = 64;
/// Queues held at once per workspace (`webhook_queues_per_workspace`; 1 here so that it binds).
pub const CAP: i64 = 1;
pub const MAX_FAILURES: u32 = 3;

/// One request as the receiver saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    pub event_id: String,
    pub accepted: bool,
}

#[derive(Default)]
pub struct World {
    /// Every endpoint of this seed with the events it must hear.
    pub endpoints: BTreeMap<String, Vec<String>>,
    /// The workspace and application of each endpoint.
    pub owners: BTreeMap<String, (Tenant, String)>,
    pub received: BTreeMap<String, Vec<Received>>,
    failures: BTreeMap<(String, String), u32>,
    /// Requests of a stopped node's aborted tasks still on the wire: (when it lands, endpoint, request).
    on_the_wire: Vec<(i64, String, Received)>,
}

/// A claimed queue in a node's memory, where `serve_queue` is in it.
pub struct Serving {
    queue: Claimed,
    started: i64,
    due: Option<Vec<Due>>,
    next: usize,
    attempts: Vec<Attempt>,
    release: bool,
    /// Done sending this chunk: the next step records.
    sent: bool,
}

/// An application of the workspace and an active endpoint of it hearing every event; answers their ids.
pub async fn endpoint(tx: &mut WriteTx, tenant: &Tenant, now: i64) -> (String, String) {
    let application = new_id("app");
    sqlx::query(
        "INSERT INTO applications (id, workspace_id, environment, name, status, scopes, service_class, created_at, \
         updated_at) VALUES ($1, $2, $3, 'App', 'active', $4, 'standard', $5, $5)",
    )
    .bind(&application)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(ScopeSet::all().iter().collect::<Vec<_>>().join(" "))
    .bind(now)
    .execute(tx.conn())
    .await
    .expect("application");
    let e = Endpoint {
        id: new_id("whe"),
        environment: tenant.environment,
        application_id: application.clone(),
        url: "https://hooks.example.com/fiscus".into(),
        description: String::new(),
        event_types: vec!["*".into()],
        secret_sealed: "sealed".into(),
        status: EndpointStatus::Active,
        status_reason: None,
        created_by: application.clone(),
        created_at: now,
        updated_at: now,
    };
    webhooks::insert(tx, tenant, &e).await.expect("endpoint");
    (e.id, application)
}

/// An event of the workspace of `endpoint` (its ids grow with time, as the outbox's do).
pub async fn event(sim: &mut Sim<'_>, tx: &mut WriteTx, endpoint: &str, now: i64) {
    let (tenant, application) = sim.hooks.owners[endpoint].clone();
    let e = Event {
        id: new_id("evt"),
        event_type: EventType::ActionProposed,
        created_at: "2026-09-21T14:13:20Z".into(),
        workspace_id: tenant.workspace_id.clone(),
        environment: tenant.environment,
        actor: Actor::application(application.clone()),
        data: EventData::Action(ActionEventData {
            action_id: "act_sim".into(),
            from_state: None,
            to_state: ControlState::Draft,
            envelope_hash: "sha256:00".into(),
            detail: serde_json::json!({}),
        }),
    };
    outbox::enqueue(tx, &e, "act_sim", Some(&application), now).await.expect("event");
    sim.hooks.endpoints.get_mut(endpoint).expect("endpoint").push(e.id);
}

/// A request of the application layer writes a new event meanwhile.
pub async fn new_event(sim: &mut Sim<'_>) {
    let endpoints: Vec<String> = sim.hooks.endpoints.keys().cloned().collect();
    if endpoints.is_empty() {
        return;
    }
    let endpoint = endpoints[sim.rng.below(endpoints.len() as u64) as usize].clone();
    let mut tx = sim.begin().await;
    let now = sim.t;
    event(sim, &mut tx, &endpoint, now).await;
    tx.commit().await.expect("commit");
}

pub async fn fan_out(sim: &mut Sim<'_>, node: usize) {
    let (now, fate) = (sim.now(node), sim.fate(1));
    let mut tx = sim.begin().await;
    if fate.crashes_at(0) {
        drop(tx);
        return sim.crash(node, "fanning out");
    }
    let fanned = match deliveries::fan_out(&mut tx, now, 1000).await {
        Ok(f) => f,
        Err(e) => return sim.violation(format!("fan-out failed: {e}")),
    };
    let ended = sim.end(node, tx, fate, 1).await;
    if fanned.events > 0 {
        sim.took += 1;
        sim.note(node, || {
            format!("fans out {} events into {} deliveries ({ended:?})", fanned.events, fanned.deliveries)
        });
    }
}

pub async fn claim(sim: &mut Sim<'_>, node: usize) {
    let cap = Cap { table: "webhook_queues", live: "claimed_by IS NOT NULL", stale: STALE, cap: CAP };
    let claim = async |tx: &mut WriteTx, name: &str, now: i64, free: i64| {
        deliveries::claim(tx, name, now, now - STALE, free, CAP).await
    };
    let now = sim.now(node);
    for queue in sim.claim(node, "queues", (1, 3), Some(&cap), claim).await {
        let serving =
            Serving { queue, started: now, due: None, next: 0, attempts: Vec::new(), release: false, sent: false };
        sim.nodes[node].work.push(Work::Serve(serving));
    }
}

/// One step of serving a queue: read its head, send one delivery, or record what was sent.
pub async fn step(sim: &mut Sim<'_>, node: usize, mut s: Serving) -> Option<Serving> {
    let (name, now) = (sim.name(node), sim.now(node));
    let Some(due) = &s.due else {
        let due = deliveries::pending(&mut sim.reads, &s.queue.endpoint_id, CHUNK).await.expect("pending");
        s.release = due.len() < CHUNK as usize;
        if sim.cfg.broken == Broken::RecordBeforeSend && !due.is_empty() {
            // The wrong variant: the attempts are written as made before any is sent.
            let presumed: Vec<Attempt> =
                due.iter().map(|d| attempt(d, Some(200), None, After::Succeeded, now)).collect();
            let mut tx = sim.begin().await;
            deliveries::record(&mut tx, &s.queue, &name, &presumed, false, now).await.expect("record");
            tx.commit().await.expect("commit");
        }
        s.due = Some(due);
        return Some(s);
    };
    if !s.sent {
        match due.get(s.next) {
            Some(d) if d.next_attempt_at <= now && now - s.started < HOLD => {
                let d = d.clone();
                let made = send(sim, node, &s.queue.endpoint_id, &d, now);
                s.next += 1;
                let wait = matches!(made.after, After::Retry(_));
                s.attempts.push(made);
                if wait {
                    s.release = true;
                    s.sent = true;
                }
            }
            Some(_) => {
                s.release = true;
                s.sent = true;
            }
            None => s.sent = true,
        }
        if s.next >= due.len() {
            s.sent = true;
        }
        return Some(s);
    }
    let release = s.release || now - s.started >= HOLD;
    let attempts =
        if sim.cfg.broken == Broken::RecordBeforeSend { Vec::new() } else { std::mem::take(&mut s.attempts) };
    let fate = sim.fate(2);
    let mut tx = sim.begin().await;
    if fate.crashes_at(0) {
        drop(tx);
        sim.crash(node, "recording attempts");
        return None;
    }
    match deliveries::record(&mut tx, &s.queue, &name, &attempts, release, now).await {
        Ok(true) => {}
        Ok(false) => {
            sim.note(node, || format!("record {}: claim lost", s.queue.endpoint_id));
            return None;
        }
        Err(e) => {
            sim.violation(format!("record failed: {e}"));
            return None;
        }
    }
    if fate.crashes_at(1) {
        drop(tx);
        sim.crash(node, "recording attempts, before commit");
        return None;
    }
    let ended = sim.end(node, tx, fate, 2).await;
    sim.note(node, || format!("records {} attempts, release {release} ({ended:?})", attempts.len()));
    if !ended.known || release {
        return None;
    }
    Some(Serving {
        queue: s.queue,
        started: s.started,
        due: None,
        next: 0,
        attempts: Vec::new(),
        release: false,
        sent: false,
    })
}

/// A node's worker tasks aborted as it stops: a queue it was sending from may have a request on the wire,
/// which reaches the receiver later (after another node may have taken the queue) though its sender is
/// gone and never records it.
pub fn abort(sim: &mut Sim<'_>, node: usize) {
    let now = sim.now(node);
    let mut sending = Vec::new();
    for w in &sim.nodes[node].work {
        if let Work::Serve(s) = w
            && !s.sent
            && let Some(d) = s.due.as_ref().and_then(|due| due.get(s.next))
            && d.next_attempt_at <= now
            && now - s.started < HOLD
        {
            sending.push((s.queue.endpoint_id.clone(), d.event_id.clone()));
        }
    }
    for (endpoint, event_id) in sending {
        if sim.rng.chance(500) {
            let lands = sim.t + sim.rng.between(0, 30 * SEC);
            let accepted = sim.rng.chance(800);
            sim.note(node, || format!("  a request for {event_id} to {endpoint} is on the wire"));
            sim.hooks.on_the_wire.push((lands, endpoint, Received { event_id, accepted }));
        }
    }
}

/// Requests on the wire reach the receiver once their time comes (all of them with `all`).
pub fn land(sim: &mut Sim<'_>, all: bool) {
    let t = sim.t;
    let wire = std::mem::take(&mut sim.hooks.on_the_wire);
    let (landing, flying): (Vec<_>, Vec<_>) = wire.into_iter().partition(|(at, ..)| all || *at <= t);
    sim.hooks.on_the_wire = flying;
    for (_, endpoint, request) in landing {
        sim.log_world(|| format!("a late request for {} reaches {endpoint}", request.event_id));
        sim.hooks.received.entry(endpoint).or_default().push(request);
    }
}

/// One request to the receiver and what the worker makes of it (`deliveries::attempt`).
fn send(sim: &mut Sim<'_>, node: usize, endpoint: &str, d: &Due, now: i64) -> Attempt {
    let key = (endpoint.to_string(), d.event_id.clone());
    let failed_before = sim.hooks.failures.get(&key).copied().unwrap_or(0);
    // 0: 2xx; 1: the receiver answers 500; 2: the request times out before it arrives; 3: after.
    let outcome =
        if sim.faults && failed_before < MAX_FAILURES && sim.rng.chance(250) { 1 + sim.rng.below(3) } else { 0 };
    if outcome != 0 {
        sim.hooks.failures.insert(key, failed_before + 1);
    }
    if outcome != 2 {
        let accepted = outcome == 0 || outcome == 3;
        sim.hooks
            .received
            .entry(endpoint.to_string())
            .or_default()
            .push(Received { event_id: d.event_id.clone(), accepted });
    }
    let at = now + sim.rng.between(1_000, 200_000);
    let (status, error) = match outcome {
        0 => (Some(200), None),
        1 => (Some(500), Some("the receiver answered 500".to_string())),
        _ => (None, Some("timed out".to_string())),
    };
    let after = if status == Some(200) {
        After::Succeeded
    } else {
        match retry_delay(u32::try_from(d.attempts + 1).unwrap_or(u32::MAX)) {
            None => After::Failed,
            Some(delay) => After::Retry(at + jittered(delay, sim.rng.unit()) as i64 * SEC),
        }
    };
    sim.note(node, || format!("sends {} to {endpoint}: {status:?} {error:?} -> {after:?}", d.event_id));
    attempt(d, status, error, after, at)
}

fn attempt(d: &Due, status: Option<i64>, error: Option<String>, after: After, at: i64) -> Attempt {
    Attempt {
        delivery_id: d.id.clone(),
        event_id: d.event_id.clone(),
        attempt: d.attempts + 1,
        status,
        error,
        latency_micros: 1000,
        after,
        at,
    }
}
