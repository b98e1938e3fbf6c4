//! Decoded price series kept in memory by (workspace, instrument, dataset). A dataset's rows are never
//! changed (a revised file is a new dataset with a new number), so an entry is never stale and needs no
//! invalidation; the workspace is part of the key, so one tenant's entry is never another's. Reads of a
//! 20-year series then cost a slice and the JSON, not thousands of rows decoded again per request (the
//! database read was nine tenths of it). Bounded by a number of bars; the least recently used series go.

use fiscus_store::data::market::{self, Bar, Window};
use fiscus_store::{Store, StoreError};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

type Key = (String, String, i64);
/// A series and the tick of its last use.
type Entry = (Arc<Vec<Bar>>, u64);

pub struct SeriesCache {
    entries: Mutex<HashMap<Key, Entry>>,
    tick: AtomicU64,
    max_bars: usize,
}

impl Default for SeriesCache {
    /// About two million bars (a few hundred MB at most): 250 instruments of 33 years of daily data.
    fn default() -> Self {
        SeriesCache::new(2_000_000)
    }
}

impl SeriesCache {
    pub fn new(max_bars: usize) -> SeriesCache {
        SeriesCache { entries: Mutex::new(HashMap::new()), tick: AtomicU64::new(0), max_bars }
    }

    /// Every bar of the instrument in the dataset, in date order.
    pub async fn bars(
        &self,
        store: &Store,
        workspace_id: &str,
        instrument_id: &str,
        dataset: i64,
    ) -> Result<Arc<Vec<Bar>>, StoreError> {
        let key = (workspace_id.to_string(), instrument_id.to_string(), dataset);
        let now = self.tick.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut entries) = self.entries.lock()
            && let Some((bars, used)) = entries.get_mut(&key)
        {
            *used = now;
            return Ok(bars.clone());
        }
        // Two requests missing together both read; the second insert replaces an identical entry.
        let mut conn = store.read().await?;
        let bars = Arc::new(
            market::bars(&mut conn, workspace_id, instrument_id, dataset, Window::default(), u32::MAX - 1).await?,
        );
        drop(conn);
        if bars.len() <= self.max_bars
            && let Ok(mut entries) = self.entries.lock()
        {
            entries.insert(key, (bars.clone(), now));
            let mut total: usize = entries.values().map(|(b, _)| b.len()).sum();
            while total > self.max_bars {
                let Some(oldest) = entries.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone()) else {
                    break;
                };
                if let Some((b, _)) = entries.remove(&oldest) {
                    total -= b.len();
                }
            }
        }
        Ok(bars)
    }
}

/// The bars of a sorted series inside `[from, to]` and after the cursor `after` (exclusive), at most `take`.
pub fn window<'a>(bars: &'a [Bar], w: Window<'_>, take: usize) -> &'a [Bar] {
    let from = std::cmp::max(w.from.unwrap_or(""), w.after.unwrap_or(""));
    let exclusive = w.after.is_some_and(|a| a >= w.from.unwrap_or(""));
    let start = bars.partition_point(|b| if exclusive { b.date.as_str() <= from } else { b.date.as_str() < from });
    let end = match w.to {
        Some(to) => bars.partition_point(|b| b.date.as_str() <= to),
        None => bars.len(),
    };
    if start >= end {
        return &[];
    }
    &bars[start..std::cmp::min(end, start.saturating_add(take))]
}
