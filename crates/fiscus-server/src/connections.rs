//! Accepting and serving connections, with the limits that keep idle clients from starving the service.
//!
//! `axum::serve` has no header-read timeout and no connection cap: thousands of silent connections each
//! hold a descriptor until the process runs out (`accept: Too many open files`) and even `/healthz` stops
//! answering. Here every connection is HTTP/1.1 with hyper's header-read timeout, which runs both while a
//! new connection has sent nothing and while a kept-alive one sits idle between requests, and at most
//! `max_connections` are served at once (never more than the descriptor limit allows); the rest wait in
//! the kernel's listen backlog until a slot frees.
//!
//! Each request carries `ConnectInfo<SocketAddr>` (the peer address), used to throttle the token endpoint.

use axum::Router;
use axum::extract::{ConnectInfo, Request};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower::ServiceExt;

/// Descriptors kept for everything that is not a client connection (database, files, the listener).
const DESCRIPTOR_RESERVE: u64 = 256;

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
}

/// The connection cap in force: the configured one, lowered to what the descriptor limit allows. The soft
/// limit is first raised to the hard one, as servers commonly do.
pub fn effective_max_connections(configured: usize) -> usize {
    let allowed = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(soft) => soft.saturating_sub(DESCRIPTOR_RESERVE).max(16),
        Err(e) => {
            tracing::warn!(error = %e, "could not read the descriptor limit; using the configured connection cap");
            u64::MAX
        }
    };
    configured.min(usize::try_from(allowed).unwrap_or(usize::MAX))
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets open connections finish their current
/// request and close (the caller bounds how long that may take).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = watch::channel(false);
    let (done_tx, done_rx) = watch::channel(());
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            biased;
            () = &mut shutdown => break,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors or a transient network error: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let mut stop = stop_rx.clone();
        let done = done_rx.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                app.clone().oneshot(req.map(axum::body::Body::new))
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service).with_upgrades();
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => log_end(result),
                _ = async { stop.wait_for(|stopping| *stopping).await.map(|_| ()) } => {
                    connection.as_mut().graceful_shutdown();
                    log_end(connection.await);
                }
            }
            drop(slot);
            drop(done);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(done_rx);
    done_tx.closed().await;
}

fn log_end(result: Result<(), hyper::Error>) {
    if let Err(e) = result {
        // Timeouts and clients that hang up are routine; they are not the service's errors.
        tracing::debug!(error = %e, "connection ended with an error");
    }
}
