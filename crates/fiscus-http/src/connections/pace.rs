//! A request body that must keep arriving: the read fails once the body falls behind its pace.
//!
//! The pace is Apache's `mod_reqtimeout` rule with a cap: a body starts with `grace` of time, each chunk
//! received earns `len / min_bytes_per_second` more, and the time in hand never exceeds `grace`. So a body
//! may pause at most `grace` at once and must average `min_bytes_per_second` beyond it; a client that
//! declares 100 kB and sends a byte every five seconds is cut off after `grace`. The clock starts at the
//! handler's first read: a handler that never reads the body is never timed out by it.

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

#[derive(Clone, Copy, Debug)]
pub struct Pace {
    pub grace: Duration,
    pub min_bytes_per_second: u64,
}

pub struct Paced<B> {
    inner: B,
    pace: Pace,
    /// Set at the first read: time spent before the handler reads (authentication, a database wait, the
    /// `100 Continue` a client waits for) is not the body's.
    deadline: Option<Instant>,
    /// Created at the first read, so that a body nobody reads costs no timer.
    timer: Option<Pin<Box<Sleep>>>,
    tripped: Arc<AtomicBool>,
}

impl<B> Paced<B> {
    pub fn new(inner: B, pace: Pace, tripped: Arc<AtomicBool>) -> Paced<B> {
        Paced { inner, pace, deadline: None, timer: None, tripped }
    }
}

/// The error a body that fell behind its pace reads as.
#[derive(Debug)]
pub struct TooSlow;

impl std::fmt::Display for TooSlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body arrived too slowly")
    }
}

impl std::error::Error for TooSlow {}

impl<B> Body for Paced<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        let this = &mut *self;
        if this.tripped.load(Ordering::SeqCst) {
            return Poll::Ready(Some(Err(Box::new(TooSlow))));
        }
        let grace = this.pace.grace;
        let deadline = *this.deadline.get_or_insert_with(|| Instant::now() + grace);
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let now = Instant::now();
                    let earned =
                        Duration::from_secs_f64(data.len() as f64 / this.pace.min_bytes_per_second.max(1) as f64);
                    let next = (deadline + earned).min(now + grace);
                    this.deadline = Some(next);
                    if let Some(timer) = this.timer.as_mut() {
                        timer.as_mut().reset(next);
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                let timer = this.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.as_mut().poll(cx).is_ready() {
                    this.tripped.store(true, Ordering::SeqCst);
                    return Poll::Ready(Some(Err(Box::new(TooSlow))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
