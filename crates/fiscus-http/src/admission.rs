//! Admission of request bodies (issue 54): one budget of bytes for every body in flight on this node and a
//! share of it per workspace, so that one tenant's large uploads can neither push the process past a
//! stated memory bound nor starve other tenants and `/healthz`. A body is admitted after authentication
//! (which names its workspace) and before anything reads it, by its declared length (or its route's limit
//! when it declares none, as a chunked body); it holds its bytes until its answer is made, since parsing
//! and computing on it hold several times its size meanwhile. A body that finds no room waits up to
//! `body_admission_wait_ms`, then is refused with 503 and `Retry-After`, unread.
//!
//! Bytes are counted in KiB permits of two semaphores (the workspace's, then the node's), always taken in
//! that order so two waiting bodies never hold one each of what the other needs.

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Principal;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::problem::ApiError;
use crate::state::AppState;

/// Bodies of at most this many bytes are not counted: they hold next to nothing, and every request has one.
const UNCOUNTED_UP_TO: u64 = 64 * 1024;

/// The node's budget of body bytes and each workspace's share of it.
pub struct Admission {
    node: Arc<Semaphore>,
    share_kib: u32,
    workspaces: Mutex<HashMap<String, Arc<Semaphore>>>,
    wait: Duration,
}

impl Default for Admission {
    fn default() -> Self {
        Admission::new(64 << 20, 32 << 20, 0, Duration::from_secs(2))
    }
}

impl Admission {
    /// A budget of `total` bytes with `share` bytes per workspace; both are raised to `largest_body`, the
    /// largest any route accepts, so that a body its route accepts can always be admitted eventually.
    pub fn new(total: usize, share: usize, largest_body: usize, wait: Duration) -> Admission {
        let share = kib(share.max(largest_body) as u64);
        let total = kib(total as u64).max(share);
        Admission {
            node: Arc::new(Semaphore::new(total as usize)),
            share_kib: share,
            workspaces: Mutex::default(),
            wait,
        }
    }

    /// Takes room for `bytes` of `workspace`'s body, waiting at most the configured time; `None` when there
    /// was none. The room is given back when the returned guard is dropped.
    pub async fn admit(&self, workspace: &str, bytes: u64) -> Option<Admitted> {
        if bytes <= UNCOUNTED_UP_TO {
            return Some(Admitted { _held: Vec::new() });
        }
        let need = kib(bytes).min(self.share_kib);
        let share = {
            let mut map = self.workspaces.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            // Workspaces with nothing in flight are forgotten, so the map holds only the busy ones.
            if map.len() > 1024 {
                let full = self.share_kib as usize;
                map.retain(|_, s| Arc::strong_count(s) > 1 || s.available_permits() < full);
            }
            map.entry(workspace.to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(self.share_kib as usize)))
                .clone()
        };
        let both = async {
            let mine = share.acquire_many_owned(need).await.ok()?;
            let node = self.node.clone().acquire_many_owned(need).await.ok()?;
            Some(Admitted { _held: vec![mine, node] })
        };
        tokio::time::timeout(self.wait, both).await.ok().flatten()
    }

    /// Bytes of the node's budget not held by any body now (for `/metrics` and tests).
    pub fn available_bytes(&self) -> u64 {
        self.node.available_permits() as u64 * 1024
    }
}

/// Room held by one admitted body until it is dropped.
pub struct Admitted {
    _held: Vec<OwnedSemaphorePermit>,
}

fn kib(bytes: u64) -> u32 {
    u32::try_from(bytes.div_ceil(1024)).unwrap_or(u32::MAX)
}

/// The layer: after authentication, before anything reads the body.
pub async fn layer(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(principal) = req.extensions().get::<Arc<Principal>>().cloned() else {
        return next.run(req).await;
    };
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    let chunked = req.headers().contains_key(header::TRANSFER_ENCODING);
    let bytes = match declared {
        Some(n) => n,
        None if chunked => crate::body_limit::limit_for(&state, req.uri().path()) as u64,
        None => 0,
    };
    let Some(admitted) = state.http.admission.admit(principal.workspace_id(), bytes).await else {
        state.http.metrics.body_refused();
        return ApiError::new(ErrorCode::Unavailable)
            .detail("too many request bodies are being read for this workspace or this node; retry shortly")
            .header(header::RETRY_AFTER, "1")
            .into_response();
    };
    let response = next.run(req).await;
    drop(admitted);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_workspace_gets_its_share_and_the_node_its_budget() {
        let mib = 1 << 20;
        let a = Admission::new(3 * mib, 2 * mib, 0, Duration::from_millis(50));
        let one = a.admit("ws_a", mib as u64).await.expect("room");
        let two = a.admit("ws_a", mib as u64).await.expect("room");
        assert!(a.admit("ws_a", mib as u64).await.is_none(), "past its share");
        let other = a.admit("ws_b", mib as u64).await.expect("another workspace still gets in");
        assert!(a.admit("ws_c", mib as u64).await.is_none(), "the node's budget is spent");
        drop(one);
        assert!(a.admit("ws_c", mib as u64).await.is_some(), "room given back");
        drop((two, other));
        assert!(a.admit("ws_a", 10).await.is_some(), "a small body is not counted");
    }

    #[tokio::test]
    async fn a_body_its_route_accepts_is_admitted_whatever_the_share() {
        let a = Admission::new(1 << 20, 1 << 20, 16 << 20, Duration::from_millis(50));
        assert!(a.admit("ws_a", 16 << 20).await.is_some());
    }
}
