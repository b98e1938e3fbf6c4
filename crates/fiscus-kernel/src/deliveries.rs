//! Webhook delivery: how a claimed endpoint queue is served. The delivery worker (on every node) fans the
//! outbox out into deliveries and claims endpoints' queues (exclusive across nodes, stale claims taken
//! over); this module sends each endpoint its events one at a time, in event order, signed with Standard
//! Webhooks v1.
//!
//! At least once: an attempt is recorded only after it was made, so a worker that dies between sending and
//! recording leaves the delivery pending, and the next worker sends it again with the same `webhook-id` (the
//! event id), which receivers deduplicate on. In order: an endpoint's head delivery waiting for a retry holds
//! back its later events (until it succeeds or its schedule runs out), never other endpoints'. A receiver
//! that is slow or down only ever occupies its own queue's task, and every attempt has a timeout.
//!
//! Each attempt: the URL is screened again (an IP literal; a host name is screened by the client's resolver
//! at connection time, so DNS rebinding is refused before connecting); 2xx is delivered; 410 disables the
//! endpoint and abandons what was still pending; anything else (other statuses, timeouts, refused
//! addresses, connection errors) is retried on the schedule with jitter, or after `Retry-After` when the
//! receiver sent one, until the schedule runs out and the delivery is failed.

use crate::tables::webhook_deliveries::{self as deliveries, After, Attempt, Claimed, Due};
use crate::tables::webhooks::Endpoint;
use crate::tables::webhooks::EndpointStatus;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::credentials::Environment;
use fiscus_domain::events::EventType;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::webhooks::{self, retry_delay};
use fiscus_store::StoreError;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

use crate::governed::Caller;
use crate::secret_box::SecretBox;
use crate::services::Services;
use fiscus_domain::actor::Actor;

/// Queues one worker serves at once, each in its own task.
const QUEUES_AT_ONCE: usize = 32;
/// Deliveries read (and recorded) together from one queue.
const CHUNK: i64 = 64;
/// How long a worker keeps one queue before letting it go (another pass or node picks it up again).
const HOLD: Duration = Duration::from_secs(5);
/// The longest `Retry-After` honoured; beyond it the schedule's own delay applies.
const MAX_RETRY_AFTER_SECONDS: u64 = 24 * 3600;

/// The two delivery clients: production and sandbox endpoints, and sandbox endpoints on loopback when the
/// development switch is on.
#[derive(Clone)]
pub struct Clients {
    strict: reqwest::Client,
    loopback: Option<reqwest::Client>,
    /// Queues this worker serves at once (each in its own task).
    serving: Arc<Semaphore>,
}

impl Clients {
    pub fn new(services: &Services) -> reqwest::Result<Clients> {
        let timeout = Duration::from_secs(services.settings.webhook_timeout_seconds.clamp(1, 15));
        let strict = crate::outbound::client(&services.webhook_hosts, false, timeout)?;
        let loopback = if services.settings.webhooks_allow_loopback {
            Some(crate::outbound::client(&services.webhook_hosts, true, timeout)?)
        } else {
            None
        };
        Ok(Clients { strict, loopback, serving: Arc::new(Semaphore::new(QUEUES_AT_ONCE)) })
    }

    /// How many more queues this worker can serve now.
    pub fn free(&self) -> usize {
        self.serving.available_permits()
    }

    /// A task slot to serve one more queue in, while one is free; held until the queue is let go.
    pub fn slot(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.serving.clone().try_acquire_owned().ok()
    }

    /// The client for an endpoint of this environment, and whether it may reach loopback.
    fn for_environment(&self, environment: Environment) -> (&reqwest::Client, bool) {
        match (&self.loopback, environment) {
            (Some(client), Environment::Sandbox) => (client, true),
            _ => (&self.strict, false),
        }
    }
}

/// How long this worker keeps a queue: [`HOLD`], or less when claims go stale sooner (a test setting), so a
/// queue is let go well before another worker may take it over.
pub fn hold(services: &Services) -> Duration {
    HOLD.min(Duration::from_secs(services.settings.webhook_claim_stale_seconds.max(1)) / 3)
}

/// The endpoint as it stands now, its seal checked, with what its application may do now. `None` when it
/// must not be delivered to any more (its pending deliveries are then abandoned): not active, tampered
/// with, its secret does not open, or its application is no longer active or no longer holds
/// `agent:execution:webhooks`.
async fn standing(services: &Services, queue: &Claimed) -> anyhow::Result<Option<(Endpoint, Vec<u8>, ScopeSet)>> {
    let mut conn = services.store.read().await?;
    let read =
        crate::tables::webhooks::get(&mut conn, services.store.seal_key(), &queue.tenant, &queue.endpoint_id).await;
    drop(conn);
    // The URL and secret decide where events go and who can read them: a row changed outside Fiscus is
    // never delivered to. Any other failure is retried (the claim goes stale), never taken as a refusal.
    let endpoint = match read {
        Ok(endpoint) => endpoint,
        Err(e @ (StoreError::Tampered(_) | StoreError::Corrupt(_))) => {
            tracing::error!(endpoint = %queue.endpoint_id, error = %e, "webhook endpoint failed verification");
            abandon(services, queue, "the endpoint's record failed verification").await?;
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    if endpoint.status != EndpointStatus::Active {
        abandon(services, queue, &format!("the endpoint is {}", endpoint.status.as_str())).await?;
        return Ok(None);
    }
    let secret = SecretBox::new(&services.server_key)
        .open(&endpoint.secret_sealed, &endpoint.id)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|s| webhooks::secret_key(&s));
    let Some(key) = secret else {
        abandon(services, queue, "the endpoint's secret cannot be opened").await?;
        return Ok(None);
    };
    let authority = {
        let mut conn = services.store.read().await?;
        fiscus_store::applications::authority(&mut conn, &queue.tenant.workspace_id, &endpoint.application_id).await?
    };
    match authority {
        Some(scopes) if scopes.contains(webhooks::WEBHOOKS_SCOPE) => Ok(Some((endpoint, key, scopes))),
        _ => {
            abandon(services, queue, "the endpoint's application may no longer receive webhooks").await?;
            Ok(None)
        }
    }
}

/// Serves one claimed queue for up to [`hold`] (plus one attempt's timeout at most); returns how many
/// attempts it made.
pub async fn serve_queue(
    services: &Services,
    clients: &Clients,
    worker: &str,
    queue: &Claimed,
) -> anyhow::Result<usize> {
    let started = Instant::now();
    let hold = hold(services);
    let (client, allow_loopback) = clients.for_environment(queue.tenant.environment);
    let mut made = 0;
    loop {
        // Read again for every chunk: a revoked or disabled endpoint stops receiving within one chunk.
        let Some((endpoint, key, authority)) = standing(services, queue).await? else { return Ok(made) };
        let due = {
            let mut conn = services.store.read().await?;
            deliveries::pending(&mut conn, &queue.endpoint_id, CHUNK).await?
        };
        let mut attempts = Vec::with_capacity(due.len());
        // The queue is let go when its head waits (a retry, or not due yet), when it is drained, or when the
        // hold is over (still due: any worker takes it up again).
        let mut release = due.len() < CHUNK as usize;
        let mut gone = false;
        for d in &due {
            if d.next_attempt_at > now_micros() || started.elapsed() >= hold {
                release = true;
                break;
            }
            // What the application may hear is read again now: an event fanned out while it could read it
            // is not sent once it no longer may (it is failed, unsent, with the reason).
            let attempt = if may_still_hear(d, &endpoint, &authority) {
                attempt(client, allow_loopback, &endpoint.url, &key, d).await
            } else {
                unsent(d, "not sent: the endpoint's application may no longer read this event")
            };
            let after = attempt.after;
            gone = attempt.status == Some(410);
            attempts.push(attempt);
            if gone || matches!(after, After::Retry(_)) {
                release = true;
                break;
            }
        }
        let release = release || started.elapsed() >= hold;

        made += attempts.len();
        let now = now_micros();
        let mut tx = services.store.begin().await?;
        if !deliveries::record(&mut tx, queue, worker, &attempts, release, now).await? {
            // Another worker took the queue over; what was sent here is sent again there.
            tracing::info!(endpoint = %queue.endpoint_id, "webhook queue claim lost; leaving it to its new worker");
            return Ok(made);
        }
        if gone {
            let caller = Caller::bare(Actor::worker(worker));
            crate::governed::webhooks::disable_gone(&mut tx, &queue.tenant, &caller, &queue.endpoint_id)
                .await
                .map_err(|e| anyhow::anyhow!("disabling a gone endpoint: {e:?}"))?;
            deliveries::abandon(&mut tx, &queue.endpoint_id, "the endpoint was disabled (410 Gone)", now).await?;
        }
        tx.commit().await?;
        if release {
            return Ok(made);
        }
    }
}

fn may_still_hear(d: &Due, endpoint: &Endpoint, authority: &ScopeSet) -> bool {
    EventType::parse(&d.event_type).is_some_and(|t| {
        webhooks::may_hear(t, d.owner_application_id.as_deref(), &endpoint.application_id, Some(authority))
    })
}

/// A delivery failed without a request.
fn unsent(d: &Due, why: &str) -> Attempt {
    Attempt {
        delivery_id: d.id.clone(),
        event_id: d.event_id.clone(),
        attempt: d.attempts + 1,
        status: None,
        error: Some(why.to_string()),
        latency_micros: 0,
        after: After::Failed,
        at: now_micros(),
    }
}

/// Abandons a queue that will not be delivered to; returns 0 attempts.
async fn abandon(services: &Services, queue: &Claimed, reason: &str) -> anyhow::Result<usize> {
    let mut tx = services.store.begin().await?;
    let n = deliveries::abandon(&mut tx, &queue.endpoint_id, reason, now_micros()).await?;
    tx.commit().await?;
    if n > 0 {
        tracing::warn!(endpoint = %queue.endpoint_id, abandoned = n, reason, "webhook deliveries abandoned");
    }
    Ok(0)
}

/// Sends one delivery and says what follows.
async fn attempt(client: &reqwest::Client, allow_loopback: bool, url: &str, key: &[u8], d: &Due) -> Attempt {
    let number = d.attempts + 1;
    let started = Instant::now();
    let (status, error, retry_after) = send(client, allow_loopback, url, key, d).await;
    let at = now_micros();
    let latency_micros = i64::try_from(started.elapsed().as_micros()).unwrap_or(i64::MAX);
    let after = match status {
        Some(s) if (200..300).contains(&s) => After::Succeeded,
        Some(410) => After::Failed,
        _ => match retry_delay(u32::try_from(number).unwrap_or(u32::MAX)) {
            None => After::Failed,
            Some(delay) => {
                let seconds = match retry_after {
                    Some(asked) if asked <= MAX_RETRY_AFTER_SECONDS => asked.max(1),
                    _ => webhooks::jittered(delay, rand::random::<f64>()),
                };
                After::Retry(at + i64::try_from(seconds).unwrap_or(i64::MAX / 2) * MICROS_PER_SECOND)
            }
        },
    };
    let error = match (status, error) {
        (_, Some(e)) => Some(e),
        (Some(s), None) if !(200..300).contains(&s) => Some(format!("the receiver answered {s}")),
        _ => None,
    };
    Attempt {
        delivery_id: d.id.clone(),
        event_id: d.event_id.clone(),
        attempt: number,
        status: status.map(i64::from),
        error,
        latency_micros,
        after,
        at,
    }
}

/// The request: the stored event as the body, Standard Webhooks headers. Returns the status (if answered),
/// the error (if any) and the receiver's `Retry-After` in seconds.
async fn send(
    client: &reqwest::Client,
    allow_loopback: bool,
    url: &str,
    key: &[u8],
    d: &Due,
) -> (Option<u16>, Option<String>, Option<u64>) {
    // An IP literal is screened here; a host name by the client's resolver.
    if let Err(e) = webhooks::endpoint(url, allow_loopback) {
        return (None, Some(format!("refused before connecting: {e}")), None);
    }
    let timestamp = now_micros() / MICROS_PER_SECOND;
    let signature = webhooks::signature(key, &d.event_id, timestamp, d.payload.as_bytes());
    let sent = client
        .post(url)
        .header("content-type", "application/json")
        .header("webhook-id", &d.event_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(d.payload.clone())
        .send()
        .await;
    match sent {
        Ok(mut response) => {
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| webhooks::retry_after(v, now_micros() / MICROS_PER_SECOND));
            // Read (a bounded part of) the body so the connection can be reused.
            let mut read = 0usize;
            while read < 64 * 1024 {
                match response.chunk().await {
                    Ok(Some(chunk)) => read += chunk.len(),
                    _ => break,
                }
            }
            (Some(status), None, retry_after)
        }
        Err(e) => (None, Some(describe(&e)), None),
    }
}

/// An error's chain in one line (the resolver's refusal sits a few sources down).
fn describe(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    let mut text = kind.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let line = s.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = s.source();
    }
    text.chars().take(500).collect()
}
