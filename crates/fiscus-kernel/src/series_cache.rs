//! Price series kept in memory by (workspace, instrument, dataset), decoded and rendered. A dataset's rows
//! are never changed (a revised file is a new dataset with a new number), so an entry is never stale and
//! needs no invalidation; the workspace is part of the key, so one tenant's entry is never another's.
//!
//! Each series also keeps its bars rendered as JSON (once per shape: as observed, and adjusted), one
//! buffer with every bar's offset, so a daily page is a slice of bytes between a small head and tail: a
//! 20-year read then costs no decoding and no serialisation (the database read was nine tenths of it at
//! first, the JSON most of the rest). The same holds for CSV rows, and an area may keep other forms beside
//! them (an Arrow batch of the whole series) by a name of its own (`Series::derived`). Bounded by a number
//! of bars; the least recently used series go, with every form of theirs.
//!
//! What is read from the database is checked before it is kept or served: the first time a series of a
//! dataset is read (and again once [`VERIFIED_FOR`] has passed), the dataset's seal is checked and its rows
//! are hashed again against its sealed content hash; rows edited behind the service's back are refused with
//! `integrity_failure`, never served or computed on under the hash they no longer match.

use bytes::Bytes;
use fiscus_data_core::tables::datasets;
use fiscus_data_core::tables::market::{self, Bar, Window};
use fiscus_store::{Store, StoreError};
use std::any::Any;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

type Key = (String, String, i64);
/// A dataset of a workspace.
type DatasetKey = (String, i64);
/// A series and the tick of its last use.
type Entry = (Arc<Series>, u64);

/// A form of a whole series an area keeps with it, by name.
type Derived = (&'static str, Arc<dyn Any + Send + Sync>);

/// One instrument's bars in one dataset, in date order, with their renderings.
pub struct Series {
    pub bars: Vec<Bar>,
    /// JSON as observed (`[0]`) and adjusted (`[1]`), then CSV rows likewise (`[2]`, `[3]`), rendered on
    /// first use.
    rendered: [OnceLock<Rendered>; 4],
    derived: Mutex<Vec<Derived>>,
}

/// Every bar of a series rendered (a JSON object followed by a comma, or a CSV row with its line end), and
/// where each one starts.
pub struct Rendered {
    text: Bytes,
    /// `starts[i]` is where bar `i` begins; `starts[len]` is one past the end.
    starts: Vec<usize>,
    /// Bytes after each bar that are not part of the slice ending there (the comma between JSON objects).
    separator: usize,
}

impl Rendered {
    /// The bars of `range` (for JSON, the inside of an array: no trailing comma; empty for an empty range),
    /// without copying.
    pub fn slice(&self, range: Range<usize>) -> Bytes {
        if range.is_empty() {
            return Bytes::new();
        }
        self.text.slice(self.starts[range.start]..self.starts[range.end] - self.separator)
    }

    fn of(bars: &[Bar], separator: &[u8], render: impl Fn(&Bar, &mut Vec<u8>)) -> Rendered {
        let mut text = Vec::with_capacity(bars.len() * 128);
        let mut starts = Vec::with_capacity(bars.len() + 1);
        for b in bars {
            starts.push(text.len());
            render(b, &mut text);
            text.extend_from_slice(separator);
        }
        starts.push(text.len());
        Rendered { text: Bytes::from(text), starts, separator: separator.len() }
    }
}

impl Series {
    pub fn new(bars: Vec<Bar>) -> Series {
        Series { bars, rendered: Default::default(), derived: Mutex::new(Vec::new()) }
    }

    /// The bars rendered by `render` (which must write one JSON object): the same `render` must be given
    /// for the same `adjusted`, as the result is kept.
    pub fn rendered(&self, adjusted: bool, render: impl Fn(&Bar, &mut Vec<u8>)) -> &Rendered {
        self.rendered[usize::from(adjusted)].get_or_init(|| Rendered::of(&self.bars, b",", render))
    }

    /// The bars rendered as rows by `render` (which must write one whole row, its line end included), kept
    /// as `rendered` keeps JSON.
    pub fn rendered_rows(&self, adjusted: bool, render: impl Fn(&Bar, &mut Vec<u8>)) -> &Rendered {
        self.rendered[2 + usize::from(adjusted)].get_or_init(|| Rendered::of(&self.bars, b"", render))
    }

    /// Another form of the whole series, built by `build` on first use and kept under `name` (which must
    /// always be built as the same type: a name built as another type is built again and not kept).
    pub fn derived<T: Any + Send + Sync>(&self, name: &'static str, build: impl FnOnce(&[Bar]) -> T) -> Arc<T> {
        let found = self
            .derived
            .lock()
            .ok()
            .and_then(|d| d.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone()))
            .and_then(|v| v.downcast::<T>().ok());
        if let Some(v) = found {
            return v;
        }
        // Two first uses together both build; the second keeps the first's.
        let built = Arc::new(build(&self.bars));
        if let Ok(mut d) = self.derived.lock()
            && !d.iter().any(|(n, _)| *n == name)
        {
            d.push((name, built.clone()));
        }
        built
    }
}

/// How long a dataset's verification stands before a cache miss checks it again.
pub const VERIFIED_FOR: Duration = Duration::from_secs(60);

pub struct SeriesCache {
    entries: Mutex<HashMap<Key, Entry>>,
    /// Datasets whose rows were last found to match their content hash, and when.
    verified: Mutex<HashMap<DatasetKey, Instant>>,
    /// One verification of a dataset at a time: concurrent misses on it wait for the first instead of
    /// each reading and hashing every row.
    verifying: Mutex<HashMap<DatasetKey, Arc<tokio::sync::Mutex<()>>>>,
    /// Where the rows are hashed (off the async runtime).
    cpu: crate::cpu::Cpu,
    tick: AtomicU64,
    max_bars: usize,
}

/// A million bars (a few hundred MB at most with both renderings): 125 instruments of 33 years of daily
/// data.
pub const DEFAULT_MAX_BARS: usize = 1_000_000;

impl SeriesCache {
    pub fn new(max_bars: usize, cpu: crate::cpu::Cpu) -> SeriesCache {
        SeriesCache {
            entries: Mutex::new(HashMap::new()),
            verified: Mutex::new(HashMap::new()),
            verifying: Mutex::new(HashMap::new()),
            cpu,
            tick: AtomicU64::new(0),
            max_bars,
        }
    }

    /// Every bar of the instrument in the dataset, in date order.
    pub async fn series(
        &self,
        store: &Store,
        workspace_id: &str,
        instrument_id: &str,
        dataset: i64,
    ) -> Result<Arc<Series>, StoreError> {
        let key = (workspace_id.to_string(), instrument_id.to_string(), dataset);
        let now = self.tick.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut entries) = self.entries.lock()
            && let Some((series, used)) = entries.get_mut(&key)
        {
            *used = now;
            return Ok(series.clone());
        }
        // Two requests missing together both read; the second insert replaces an identical entry.
        let mut conn = store.read().await?;
        self.verify(&mut conn, store, workspace_id, dataset).await?;
        let bars =
            market::bars(&mut conn, workspace_id, instrument_id, dataset, Window::default(), u32::MAX - 1).await?;
        drop(conn);
        let series = Arc::new(Series::new(bars));
        if series.bars.len() <= self.max_bars
            && let Ok(mut entries) = self.entries.lock()
        {
            entries.insert(key, (series.clone(), now));
            let mut total: usize = entries.values().map(|(s, _)| s.bars.len()).sum();
            while total > self.max_bars {
                let Some(oldest) = entries.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone()) else {
                    break;
                };
                if let Some((s, _)) = entries.remove(&oldest) {
                    total -= s.bars.len();
                }
            }
        }
        Ok(series)
    }
}

impl SeriesCache {
    /// Checks the dataset's seal and its rows against its content hash, unless that was done within
    /// [`VERIFIED_FOR`]; `Tampered` when they no longer match.
    async fn verify(
        &self,
        conn: &mut fiscus_store::Connection,
        store: &Store,
        workspace_id: &str,
        dataset: i64,
    ) -> Result<(), StoreError> {
        let key = (workspace_id.to_string(), dataset);
        if self.fresh(&key) {
            return Ok(());
        }
        let line = {
            let mut verifying = self.verifying.lock().unwrap_or_else(|p| p.into_inner());
            verifying.entry(key.clone()).or_default().clone()
        };
        let _turn = line.lock().await;
        // Another request may have verified it while this one waited.
        if !self.fresh(&key) {
            let d = datasets::get(conn, store.seal_key(), workspace_id, dataset).await?;
            let lines = fiscus_data_core::tables::content_lines(conn, workspace_id, d.kind, d.number).await?;
            let sealing = fiscus_data_core::tables::Sealing::of(&d.importer_version);
            let hash = self
                .cpu
                .run(move || fiscus_data_core::tables::content_hash_of(sealing, lines))
                .await
                .map_err(|_| StoreError::Corrupt(format!("dataset {dataset}: hashing its rows failed")))?;
            if hash != d.content_hash {
                return Err(StoreError::Tampered(format!("dataset {dataset} rows no longer match its content hash")));
            }
            if let Ok(mut v) = self.verified.lock() {
                if v.len() > 10_000 {
                    v.retain(|_, at| at.elapsed() < VERIFIED_FOR);
                }
                v.insert(key.clone(), Instant::now());
            }
        }
        drop(_turn);
        let mut verifying = self.verifying.lock().unwrap_or_else(|p| p.into_inner());
        // The map holds one reference and `line` another: nobody else waits on this dataset.
        if Arc::strong_count(&line) == 2 {
            verifying.remove(&key);
        }
        Ok(())
    }

    fn fresh(&self, key: &DatasetKey) -> bool {
        self.verified.lock().ok().and_then(|v| v.get(key).copied()).is_some_and(|at| at.elapsed() < VERIFIED_FOR)
    }
}

/// Where the bars of a sorted series inside `[from, to]` and after the cursor `after` (exclusive) are, at
/// most `take` of them.
pub fn window(bars: &[Bar], w: Window<'_>, take: usize) -> Range<usize> {
    let from = std::cmp::max(w.from.unwrap_or(""), w.after.unwrap_or(""));
    let exclusive = w.after.is_some_and(|a| a >= w.from.unwrap_or(""));
    let start = bars.partition_point(|b| if exclusive { b.date.as_str() <= from } else { b.date.as_str() < from });
    let end = match w.to {
        Some(to) => bars.partition_point(|b| b.date.as_str() <= to),
        None => bars.len(),
    };
    if start >= end {
        return 0..0;
    }
    start..std::cmp::min(end, start.saturating_add(take))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(date: &str) -> Bar {
        Bar {
            date: date.to_string(),
            open: None,
            high: None,
            low: None,
            close: Some("1".into()),
            adj_close: None,
            volume: None,
        }
    }

    #[test]
    fn a_slice_is_the_bars_of_its_range() {
        let s = Series::new(vec![bar("2020-01-01"), bar("2020-01-02"), bar("2020-01-03")]);
        let r = s.rendered(false, |b, out| out.extend_from_slice(format!("{{\"d\":\"{}\"}}", b.date).as_bytes()));
        assert_eq!(&r.slice(0..3)[..], br#"{"d":"2020-01-01"},{"d":"2020-01-02"},{"d":"2020-01-03"}"#);
        assert_eq!(&r.slice(1..2)[..], br#"{"d":"2020-01-02"}"#);
        assert_eq!(&r.slice(2..3)[..], br#"{"d":"2020-01-03"}"#);
        assert!(r.slice(1..1).is_empty());
        let rows = s.rendered_rows(false, |b, out| out.extend_from_slice(format!("{}\r\n", b.date).as_bytes()));
        assert_eq!(&rows.slice(1..3)[..], b"2020-01-02\r\n2020-01-03\r\n");
        let firsts = s.derived("first", |bars| bars[0].date.clone());
        assert_eq!(*firsts, "2020-01-01");
        assert!(Arc::ptr_eq(&firsts, &s.derived("first", |_| String::new())));
        let w = |from, to, after| window(&s.bars, Window { from, to, after }, usize::MAX);
        assert_eq!(w(Some("2020-01-02"), None, None), 1..3);
        assert_eq!(w(None, Some("2020-01-02"), Some("2020-01-01")), 1..2);
        assert_eq!(w(Some("2021-01-01"), None, None), 0..0);
    }
}
