//! Accepting and serving connections, with the limits that keep slow or idle clients from starving the
//! service.
//!
//! `axum::serve` has no header-read timeout, no body-read timeout and no connection cap: thousands of silent
//! connections each hold a descriptor until the process runs out (`accept: Too many open files`), and
//! clients that declare a body and then send a byte every few seconds hold their slots for as long as they
//! like. Here:
//! - every connection is HTTP/1.1 with hyper's header-read timeout, which runs both while a new connection
//!   has sent nothing and while a kept-alive one sits idle between requests;
//! - a request body must keep arriving (`pace`): after a grace period it must average a minimum rate, and it
//!   may never pause longer than the grace period; past that its read fails and the request is answered 408
//!   and the connection closed;
//! - at most `max_connections` are served at once (never more than the descriptor limit allows); the rest
//!   wait in the kernel's listen backlog until a slot frees;
//! - one network address may hold at most `unauthenticated_per_address` of those slots with connections none
//!   of whose requests has yet presented a valid credential or console session (`Standing`); a further
//!   connection from it is answered 429 at once and closed. So an anonymous flood from one address cannot
//!   take the slots everyone else needs, while an application's own connections, once authenticated, are
//!   not counted.
//!
//! Each request carries `ConnectInfo<SocketAddr>` (the peer address, used to throttle the token endpoint and
//! the console's sign-in) and its connection's `http::standing::Standing`.

mod pace;

use axum::Router;
use axum::extract::{ConnectInfo, Request};
use axum::response::IntoResponse;
use fiscus_domain::error_code::ErrorCode;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tower::ServiceExt;

use crate::standing::Addresses;

pub use pace::Pace;

/// Descriptors kept for everything that is not a client connection (database, files, the listener).
const DESCRIPTOR_RESERVE: u64 = 256;

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    /// Connections one address may hold before any of them authenticated (0: no limit).
    pub unauthenticated_per_address: usize,
    pub body: Pace,
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
    let addresses = Arc::new(Addresses::default());
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
        let Some(standing) = addresses.admit(peer.ip(), limits.unauthenticated_per_address) else {
            drop(slot);
            tokio::spawn(refuse(stream));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let mut stop = stop_rx.clone();
        let done = done_rx.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                req.extensions_mut().insert(standing.clone());
                let tripped = Arc::new(AtomicBool::new(false));
                let req = req.map(|body| axum::body::Body::new(pace::Paced::new(body, limits.body, tripped.clone())));
                let answered = app.clone().oneshot(req);
                async move {
                    let response = answered.await?;
                    Ok::<_, std::convert::Infallible>(if tripped.load(Ordering::SeqCst) {
                        too_slow(limits.body)
                    } else {
                        response
                    })
                }
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

/// The answer to a request whose body stopped arriving: 408, and the connection closes (the rest of the
/// body is never read).
fn too_slow(pace: Pace) -> axum::response::Response {
    let mut response = crate::problem::ApiError::new(ErrorCode::RequestTimeout)
        .detail(format!(
            "the request body did not arrive in time: after {} s it must average at least {} bytes per second and \
             never pause longer than that",
            pace.grace.as_secs(),
            pace.min_bytes_per_second
        ))
        .into_response();
    response.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
    response
}

/// Answers a connection over its address's limit without reading its request, then closes it.
async fn refuse(mut stream: TcpStream) {
    const BODY: &str = "{\"type\":\"about:blank\",\"title\":\"Too many connections from this address\",\"status\":429,\
                        \"code\":\"rate_limited\",\"detail\":\"this address holds as many unauthenticated connections \
                        as one address may; authenticate on an open one or retry later\"}";
    let response = format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/problem+json\r\nretry-after: 1\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

fn log_end(result: Result<(), hyper::Error>) {
    if let Err(e) = result {
        // Timeouts and clients that hang up are routine; they are not the service's errors.
        tracing::debug!(error = %e, "connection ended with an error");
    }
}
