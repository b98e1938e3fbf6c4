//! Deterministic work sharing over `std::thread::scope`: work is cut into numbered chunks whose results
//! depend on the chunk number only, threads take chunks in turn, and the results come back in chunk order,
//! so the answer is the same to the bit whatever the number of threads.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The threads to use for a request of `threads` (0 = what the machine offers), never more than `chunks`.
pub(crate) fn resolve_threads(threads: usize, chunks: usize) -> usize {
    let wanted = if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
    wanted.clamp(1, chunks.max(1))
}

/// `f(0), f(1), …, f(chunks − 1)` computed on up to `threads` threads (the caller's included), in order.
pub(crate) fn map_chunks<T: Send>(chunks: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = resolve_threads(threads, chunks);
    if threads == 1 {
        return (0..chunks).map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= chunks {
                return done;
            }
            done.push((k, f(k)));
        }
    };
    let mut slots: Vec<Option<T>> = (0..chunks).map(|_| None).collect();
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut results = work();
        for h in helpers {
            match h.join() {
                Ok(r) => results.extend(r),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        for (k, v) in results {
            slots[k] = Some(v);
        }
    });
    // Every chunk number below `chunks` was taken exactly once.
    slots.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_chunk_order_whatever_the_thread_count() {
        for threads in [0, 1, 2, 3, 8, 64] {
            let v = map_chunks(37, threads, |k| k * k);
            assert_eq!(v, (0..37).map(|k| k * k).collect::<Vec<_>>());
        }
        assert!(map_chunks(0, 4, |k| k).is_empty());
        assert_eq!(resolve_threads(5, 2), 2);
        assert_eq!(resolve_threads(1, 0), 1);
    }
}
