//! Webhook delivery state: the fan-out of the outbox into deliveries (one per event and subscribed
//! endpoint), the per-endpoint queues that workers claim exclusively (so an endpoint hears its events one at
//! a time and in event order), and the log of every attempt.
//!
//! It is long because fan-out, queues and the attempt log are one delivery protocol whose statements must agree
//! (order per endpoint, claims, retries).

use fiscus_domain::credentials::{AppStatus, Environment};
use fiscus_domain::events::EventType;
use fiscus_domain::ids::new_id;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use fiscus_domain::webhooks::may_hear;
use fiscus_store::dialect::{backend_of, for_update};
use fiscus_store::{Result, WriteTx};
use sqlx::AnyConnection;
use std::collections::BTreeMap;

/// Rows per multi-row INSERT (well below both backends' bound-parameter limits).
const ROWS_PER_INSERT: usize = 100;

fiscus_store::row! {
    struct OutboxRow {
        id: String,
        workspace_id: String,
        environment: String,
        event_type: String,
        owner_application_id: Option<String>,
        created_at: i64,
    }
}

fiscus_store::row! {
    struct SubscriberRow {
        id: String,
        event_types: String,
        created_at: i64,
        application_id: String,
        application_status: String,
        application_scopes: String,
        entitlement: String,
    }
}

/// An active endpoint, with what its application may do now.
struct Subscriber {
    id: String,
    event_types: String,
    created_at: i64,
    application_id: String,
    /// The application's scopes within the workspace's entitlement; `None` when it is not active (or its
    /// stored status is unknown: fail closed).
    authority: Option<ScopeSet>,
}

impl From<SubscriberRow> for Subscriber {
    fn from(r: SubscriberRow) -> Subscriber {
        let active = AppStatus::parse(&r.application_status) == Some(AppStatus::Active);
        let authority = active
            .then(|| ScopeSet::from_stored(&r.application_scopes).intersection(&ScopeSet::from_stored(&r.entitlement)));
        Subscriber {
            id: r.id,
            event_types: r.event_types,
            created_at: r.created_at,
            application_id: r.application_id,
            authority,
        }
    }
}

impl Subscriber {
    /// An endpoint hears the types it chose, only events that happened after it was registered, and only
    /// those its application may hear (`fiscus_domain::webhooks::may_hear`).
    fn hears(&self, event: &OutboxRow) -> bool {
        let Some(event_type) = EventType::parse(&event.event_type) else { return false };
        self.created_at <= event.created_at
            && self.event_types.split_whitespace().any(|t| t == "*" || t == event.event_type)
            && may_hear(
                event_type,
                event.owner_application_id.as_deref(),
                &self.application_id,
                self.authority.as_ref(),
            )
    }
}

/// What one fan-out pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FannedOut {
    pub events: usize,
    pub deliveries: usize,
}

/// Fans out up to `limit` outbox events not yet fanned out, oldest first: a pending delivery for each active
/// endpoint of the event's workspace and environment that subscribes to its type and whose application may
/// hear it (its own object, or one it may read; `fiscus_domain::webhooks::may_hear`), the endpoints' queues due
/// now, and the events marked as fanned out (`outbox.delivered_at`). Events no endpoint hears are only marked.
pub async fn fan_out(tx: &mut WriteTx, now: i64, limit: i64) -> Result<FannedOut> {
    // Locked without skipping: nodes fan out one after another, never two disjoint batches at once, which
    // could commit out of order and let a later event reach an endpoint before an earlier one.
    let lock = for_update(backend_of(tx.conn()));
    let events = sqlx::query_as::<_, OutboxRow>(&format!(
        "SELECT id, workspace_id, environment, event_type, owner_application_id, created_at FROM outbox \
         WHERE delivered_at IS NULL ORDER BY id LIMIT $1{lock}"
    ))
    .bind(limit)
    .fetch_all(tx.conn())
    .await?;
    if events.is_empty() {
        return Ok(FannedOut::default());
    }
    let mut subscribers: BTreeMap<(String, String), Vec<Subscriber>> = BTreeMap::new();
    let mut deliveries: Vec<[String; 5]> = Vec::new();
    let mut queues: BTreeMap<String, (String, String)> = BTreeMap::new();
    for e in &events {
        let key = (e.workspace_id.clone(), e.environment.clone());
        if !subscribers.contains_key(&key) {
            let found = sqlx::query_as::<_, SubscriberRow>(
                "SELECT e.id, e.event_types, e.created_at, e.application_id, a.status AS application_status, \
                 a.scopes AS application_scopes, w.entitlement FROM webhook_endpoints e \
                 JOIN applications a ON a.id = e.application_id AND a.workspace_id = e.workspace_id \
                 JOIN workspaces w ON w.id = e.workspace_id \
                 WHERE e.workspace_id = $1 AND e.environment = $2 AND e.status = 'active'",
            )
            .bind(&e.workspace_id)
            .bind(&e.environment)
            .fetch_all(tx.conn())
            .await?;
            subscribers.insert(key.clone(), found.into_iter().map(Subscriber::from).collect());
        }
        for s in subscribers.get(&key).into_iter().flatten().filter(|s| s.hears(e)) {
            deliveries.push([new_id("whd"), e.workspace_id.clone(), e.environment.clone(), s.id.clone(), e.id.clone()]);
            queues.insert(s.id.clone(), (e.workspace_id.clone(), e.environment.clone()));
        }
    }
    let types: BTreeMap<&str, &str> = events.iter().map(|e| (e.id.as_str(), e.event_type.as_str())).collect();
    for chunk in deliveries.chunks(ROWS_PER_INSERT) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| {
                let b = i * 6;
                format!(
                    "(${}, ${}, ${}, ${}, ${}, ${}, 'pending', 0, $1, $1)",
                    b + 2,
                    b + 3,
                    b + 4,
                    b + 5,
                    b + 6,
                    b + 7
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO webhook_deliveries (id, workspace_id, environment, endpoint_id, event_id, event_type, state, \
             attempts, next_attempt_at, created_at) VALUES {} ON CONFLICT (endpoint_id, event_id) DO NOTHING",
            values.join(", ")
        );
        let mut q = sqlx::query(&sql).bind(now);
        for [id, ws, env, endpoint, event] in chunk {
            let event_type = types.get(event.as_str()).copied().unwrap_or_default().to_string();
            q = q.bind(id.clone()).bind(ws.clone()).bind(env.clone()).bind(endpoint.clone()).bind(event.clone());
            q = q.bind(event_type);
        }
        q.execute(tx.conn()).await?;
    }
    for (endpoint, (ws, env)) in &queues {
        sqlx::query(
            "INSERT INTO webhook_queues (endpoint_id, workspace_id, environment, next_due_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (endpoint_id) DO UPDATE SET next_due_at = CASE \
               WHEN webhook_queues.next_due_at IS NULL OR webhook_queues.next_due_at > excluded.next_due_at \
               THEN excluded.next_due_at ELSE webhook_queues.next_due_at END",
        )
        .bind(endpoint)
        .bind(ws)
        .bind(env)
        .bind(now)
        .execute(tx.conn())
        .await?;
    }
    for chunk in events.chunks(ROWS_PER_INSERT) {
        let list: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!("UPDATE outbox SET delivered_at = $1 WHERE id IN ({})", list.join(", "));
        let mut q = sqlx::query(&sql).bind(now);
        for e in chunk {
            q = q.bind(e.id.clone());
        }
        q.execute(tx.conn()).await?;
    }
    Ok(FannedOut { events: events.len(), deliveries: deliveries.len() })
}

/// An endpoint's queue, claimed by one worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claimed {
    pub endpoint_id: String,
    pub tenant: Tenant,
}

fiscus_store::row! {
    struct QueueRow {
        endpoint_id: String,
        workspace_id: String,
        environment: String,
    }
}

/// Claims up to `limit` queues whose head is due, free or held by a claim older than `stale_before` (its
/// worker died or hangs): fairly across workspaces, at most `per_workspace` held by any one workspace at
/// once (`fair`), so one tenant's slow or silent endpoints never hold every delivery task.
pub async fn claim(
    tx: &mut WriteTx,
    worker: &str,
    now: i64,
    stale_before: i64,
    limit: i64,
    per_workspace: i64,
) -> Result<Vec<Claimed>> {
    let queue = fiscus_store::fair::FairQueue {
        table: "webhook_queues",
        key: "endpoint_id",
        claimable: "c.next_due_at IS NOT NULL AND c.next_due_at <= $2 AND (c.claimed_by IS NULL OR c.claimed_at < $3)",
        live: "l.claimed_by IS NOT NULL AND l.claimed_at >= $3",
        order: "c.next_due_at, c.endpoint_id",
    };
    let sql = format!(
        "UPDATE webhook_queues SET claimed_by = $1, claimed_at = $2 WHERE endpoint_id IN ({}) \
         RETURNING endpoint_id, workspace_id, environment",
        fiscus_store::fair::pick(&queue, "$4", backend_of(tx.conn()))
    );
    let claim = fiscus_store::fair::Claim { worker, now, stale_before, per_workspace };
    let rows: Vec<QueueRow> = fiscus_store::fair::claim_each(tx, &sql, &claim, limit).await?;
    rows.into_iter()
        .map(|r| {
            let environment = Environment::parse(&r.environment).ok_or_else(|| {
                fiscus_store::corrupt("webhook_queues", &r.endpoint_id, "environment", &r.environment)
            })?;
            Ok(Claimed { endpoint_id: r.endpoint_id, tenant: Tenant { workspace_id: r.workspace_id, environment } })
        })
        .collect()
}

fiscus_store::row! {
    /// A pending delivery at the head of an endpoint's queue, with the event as it is sent.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Due {
        pub id: String,
        pub event_id: String,
        pub attempts: i64,
        pub next_attempt_at: i64,
        /// The event envelope exactly as stored in the outbox: the request body.
        pub payload: String,
        pub event_type: String,
        /// The application the event's subject belongs to (`outbox.owner_application_id`).
        pub owner_application_id: Option<String>,
    }
}

/// The first `limit` pending deliveries of an endpoint, in event order.
pub async fn pending(conn: &mut AnyConnection, endpoint_id: &str, limit: i64) -> Result<Vec<Due>> {
    Ok(sqlx::query_as::<_, Due>(
        "SELECT d.id, d.event_id, d.attempts, d.next_attempt_at, o.payload, o.event_type, o.owner_application_id \
         FROM webhook_deliveries d JOIN outbox o ON o.id = d.event_id \
         WHERE d.endpoint_id = $1 AND d.state = 'pending' ORDER BY d.event_id LIMIT $2",
    )
    .bind(endpoint_id)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?)
}

/// Where a delivery stands after an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    Succeeded,
    /// Attempt again at this time.
    Retry(i64),
    /// No more attempts: the schedule ran out, or the receiver answered 410.
    Failed,
}

/// One attempt, as logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub delivery_id: String,
    pub event_id: String,
    /// 1 for the first attempt.
    pub attempt: i64,
    /// The receiver's HTTP status, if it answered.
    pub status: Option<i64>,
    /// Why there is no (successful) answer: refused address, timeout, connection error, the status.
    pub error: Option<String>,
    pub latency_micros: i64,
    pub after: After,
    pub at: i64,
}

/// Records attempts of a claimed queue and sets when its head (its first pending delivery in event order)
/// is next due, read in the same transaction, so an event fanned out meanwhile is never left behind;
/// `release` lets the queue go, otherwise the claim is renewed. False, with nothing written, when the worker
/// no longer holds the claim (it went stale and another worker took the queue over).
pub async fn record(
    tx: &mut WriteTx,
    queue: &Claimed,
    worker: &str,
    attempts: &[Attempt],
    release: bool,
    now: i64,
) -> Result<bool> {
    let held = sqlx::query("UPDATE webhook_queues SET claimed_at = $1 WHERE endpoint_id = $2 AND claimed_by = $3")
        .bind(now)
        .bind(&queue.endpoint_id)
        .bind(worker)
        .execute(tx.conn())
        .await?;
    if held.rows_affected() != 1 {
        return Ok(false);
    }
    for a in attempts {
        let (state, next, finished) = match a.after {
            After::Succeeded => (DeliveryState::Succeeded, a.at, Some(a.at)),
            After::Retry(at) => (DeliveryState::Pending, at, None),
            After::Failed => (DeliveryState::Failed, a.at, Some(a.at)),
        };
        sqlx::query(
            "UPDATE webhook_deliveries SET state = $1, attempts = $2, next_attempt_at = $3, last_status = $4, \
             last_error = $5, finished_at = $6 WHERE id = $7 AND state = 'pending'",
        )
        .bind(state.as_str())
        .bind(a.attempt)
        .bind(next)
        .bind(a.status)
        .bind(&a.error)
        .bind(finished)
        .bind(&a.delivery_id)
        .execute(tx.conn())
        .await?;
    }
    for chunk in attempts.chunks(ROWS_PER_INSERT) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| {
                let b = i * 9;
                format!(
                    "(${}, $1, $2, ${}, $3, ${}, ${}, ${}, ${}, ${}, ${}, $4, ${})",
                    b + 5,
                    b + 6,
                    b + 7,
                    b + 8,
                    b + 9,
                    b + 10,
                    b + 11,
                    b + 12,
                    b + 13
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO webhook_attempts (id, workspace_id, environment, delivery_id, endpoint_id, event_id, attempt, \
             status, error, latency_micros, next_attempt_at, worker, created_at) VALUES {}",
            values.join(", ")
        );
        let mut q = sqlx::query(&sql)
            .bind(&queue.tenant.workspace_id)
            .bind(queue.tenant.environment.as_str())
            .bind(&queue.endpoint_id)
            .bind(worker);
        for a in chunk {
            let next = match a.after {
                After::Retry(at) => Some(at),
                _ => None,
            };
            q = q
                .bind(new_id("wha"))
                .bind(&a.delivery_id)
                .bind(&a.event_id)
                .bind(a.attempt)
                .bind(a.status)
                .bind(&a.error)
                .bind(a.latency_micros)
                .bind(next)
                .bind(a.at);
        }
        q.execute(tx.conn()).await?;
    }
    let release_claim = if release { ", claimed_by = NULL, claimed_at = NULL" } else { "" };
    sqlx::query(&format!(
        "UPDATE webhook_queues SET next_due_at = (SELECT next_attempt_at FROM webhook_deliveries \
           WHERE endpoint_id = $1 AND state = 'pending' ORDER BY event_id LIMIT 1){release_claim} \
         WHERE endpoint_id = $1"
    ))
    .bind(&queue.endpoint_id)
    .execute(tx.conn())
    .await?;
    Ok(true)
}

/// Ends every pending delivery of an endpoint that will not be delivered to any more (disabled, revoked, or
/// failing verification), and empties its queue.
pub async fn abandon(tx: &mut WriteTx, endpoint_id: &str, reason: &str, now: i64) -> Result<u64> {
    let n = sqlx::query(
        "UPDATE webhook_deliveries SET state = 'abandoned', last_error = $1, finished_at = $2 \
         WHERE endpoint_id = $3 AND state = 'pending'",
    )
    .bind(reason)
    .bind(now)
    .bind(endpoint_id)
    .execute(tx.conn())
    .await?
    .rows_affected();
    sqlx::query(
        "UPDATE webhook_queues SET next_due_at = NULL, claimed_by = NULL, claimed_at = NULL WHERE endpoint_id = $1",
    )
    .bind(endpoint_id)
    .execute(tx.conn())
    .await?;
    Ok(n)
}

fiscus_store::row! {
    /// One line of the delivery log.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct LoggedAttempt {
        pub id: String,
        pub event_id: String,
        pub event_type: String,
        pub attempt: i64,
        pub status: Option<i64>,
        pub error: Option<String>,
        pub latency_micros: i64,
        pub next_attempt_at: Option<i64>,
        pub created_at: i64,
    }
}

/// The newest `limit` attempts to one endpoint of a workspace, newest first.
pub async fn log(
    conn: &mut AnyConnection,
    workspace_id: &str,
    endpoint_id: &str,
    limit: i64,
) -> Result<Vec<LoggedAttempt>> {
    Ok(sqlx::query_as::<_, LoggedAttempt>(
        "SELECT a.id, a.event_id, d.event_type, a.attempt, a.status, a.error, a.latency_micros, a.next_attempt_at, \
         a.created_at FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id \
         WHERE a.workspace_id = $1 AND a.endpoint_id = $2 ORDER BY a.id DESC LIMIT $3",
    )
    .bind(workspace_id)
    .bind(endpoint_id)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?)
}

/// Where a delivery stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeliveryState {
    /// To be sent (again) when due.
    Pending,
    /// A 2xx was received.
    Succeeded,
    /// The retry schedule ran out, or the receiver answered 410.
    Failed,
    /// The endpoint was disabled, revoked or failed verification first.
    Abandoned,
}

impl DeliveryState {
    pub const ALL: [DeliveryState; 4] =
        [DeliveryState::Pending, DeliveryState::Succeeded, DeliveryState::Failed, DeliveryState::Abandoned];

    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Succeeded => "succeeded",
            DeliveryState::Failed => "failed",
            DeliveryState::Abandoned => "abandoned",
        }
    }

    pub fn parse(s: &str) -> Option<DeliveryState> {
        DeliveryState::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// How many of an endpoint's deliveries are in each state (states with none are absent).
pub async fn counts(
    conn: &mut AnyConnection,
    workspace_id: &str,
    endpoint_id: &str,
) -> Result<BTreeMap<DeliveryState, i64>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT state, COUNT(*) FROM webhook_deliveries WHERE workspace_id = $1 AND endpoint_id = $2 GROUP BY state",
    )
    .bind(workspace_id)
    .bind(endpoint_id)
    .fetch_all(&mut *conn)
    .await?;
    rows.into_iter()
        .map(|(state, n)| {
            let known = DeliveryState::parse(&state)
                .ok_or_else(|| fiscus_store::corrupt("webhook_deliveries", endpoint_id, "state", &state))?;
            Ok((known, n))
        })
        .collect()
}

/// Forgets finished deliveries and attempts older than `before` (the delivery log's retention); pending
/// deliveries are kept whatever their age. Returns how many rows went.
pub async fn purge(conn: &mut AnyConnection, before: i64) -> Result<u64> {
    let attempts = sqlx::query("DELETE FROM webhook_attempts WHERE created_at < $1")
        .bind(before)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    let finished = sqlx::query("DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_at < $1")
        .bind(before)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    Ok(attempts + finished)
}
