//! A response body made of a few shared byte buffers, sent in order without being joined (a large cached
//! rendering stays where it is; only the small parts around it are new). Its length is known, so the
//! response carries `Content-Length`, not chunked encoding.

use axum::body::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

pub struct Chunks {
    parts: VecDeque<Bytes>,
    remaining: u64,
}

impl Chunks {
    pub fn new(parts: impl IntoIterator<Item = Bytes>) -> Chunks {
        let parts: VecDeque<Bytes> = parts.into_iter().filter(|p| !p.is_empty()).collect();
        let remaining = parts.iter().map(|p| p.len() as u64).sum();
        Chunks { parts, remaining }
    }
}

impl Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = self.parts.pop_front();
        if let Some(part) = &next {
            self.remaining -= part.len() as u64;
        }
        Poll::Ready(next.map(|p| Ok(Frame::data(p))))
    }

    fn is_end_stream(&self) -> bool {
        self.parts.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}
