//! Prices imported as a stream: the file is read, checked and written a chunk of rows at a time inside the
//! import's one transaction, so a file of millions of bars is never whole in memory (neither its bytes, for
//! a file on disk, nor its rows), and its writing (on the database's side) overlaps its reading and checking
//! (on a thread of its own).
//!
//! What each row is checked against is what the whole-file path checks: its cells, an instrument the
//! workspace has, a (symbol, date) once per file. What must be remembered across chunks is kept compact: the
//! symbols and dates interned once, each bar as three numbers and its value (16 bytes: its date, its line
//! and the value the quality report reads), each written row's digest for the content hash. A (symbol, date)
//! seen twice is found from those points once the file is read (a repeated bar the database refuses first
//! is reported as the line it is, not as the database's error). A refusal found at any row rolls the
//! transaction back, so nothing of a refused file is kept, as on the whole-file path.
//!
//! A prices file whose unknown instruments are to be created goes the whole-file way: the instruments are
//! written before the bars, so every symbol must be known before the first bar is.

use super::reader::{Carry, Reader};
use super::table::{Rows, without_bom};
use super::{Failure, Hashing, ImportRequest, Input, MAX_ROWS, Mapping, Outcome, Progress, kinds, write};
use fiscus_data_core::rules::quality::QualityReport;
use fiscus_data_core::rules::values::DateFormat;
use fiscus_data_core::rules::{ImportError, Kind};
use fiscus_data_core::tables::{Bulk, RowDigests, RowSink};
use fiscus_domain::integrity::Stored;
use fiscus_kernel::governed::Caller;
use fiscus_store::{Store, StoreError};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use tokio::sync::mpsc;

/// Rows read, checked and sent to the writer at a time.
const CHUNK: usize = 4_096;

/// Whether the import streams (see the module documentation).
pub(super) fn streams(req: &ImportRequest) -> bool {
    req.kind == Kind::Prices && req.mapping.create_instruments.is_none()
}

enum Message {
    /// Checked rows as the table stores them, and the file's estimated number of rows.
    Rows { rows: Vec<Vec<Stored>>, estimate: usize },
    /// The end of the reading: what the checks of every row found.
    End(Box<Checked>),
}

struct Checked {
    errors: Vec<ImportError>,
    date_format: Option<DateFormat>,
    rows: usize,
    period: Option<(String, String)>,
    quality: Option<QualityReport>,
    digests: RowDigests,
}

impl Checked {
    fn refused(errors: Vec<ImportError>) -> Checked {
        Checked { errors, date_format: None, rows: 0, period: None, quality: None, digests: RowDigests::default() }
    }
}

/// Imports a prices file as a stream (the caller has found no dataset of the same file).
pub(super) async fn prices(
    store: &Store,
    caller: &Caller,
    workspace_id: &str,
    mut req: ImportRequest,
    name: String,
    file_sha256: String,
    progress: &dyn Progress,
) -> Result<Outcome, Failure> {
    let file = req.file_name.clone();
    let ids = {
        let mut conn = store.read().await?;
        fiscus_data_core::tables::market::ids_by_symbol(&mut conn, workspace_id).await?
    };
    let length = req.input.len().map_err(|e| Failure::unreadable(&file, &e))?;
    // The transaction begins before the first row is read: rows are written as they are checked.
    let mut tx = if req.dry_run { None } else { Some(store.begin().await?) };
    let (number, version) = match &mut tx {
        Some(tx) => {
            let number = fiscus_data_core::tables::datasets::next_number(tx).await?;
            (
                number,
                fiscus_data_core::tables::datasets::next_version(tx.conn(), workspace_id, Kind::Prices, &name).await?,
            )
        }
        None => (0, 0),
    };
    let checker = Checker {
        mapping: req.mapping.clone(),
        ids,
        number,
        writing: tx.is_some(),
        length,
        file_sha256: file_sha256.clone(),
    };
    let input = std::mem::replace(&mut req.input, Input::Bytes(Vec::new()));
    // Two chunks in flight at most: the reader stays a chunk ahead of the writer, no further.
    let (send, mut receive) = mpsc::channel(2);
    std::thread::Builder::new()
        .name(String::from("fiscus-import"))
        .spawn(move || checker.run(input, &send))
        .map_err(|e| Failure::Store(StoreError::Config(format!("cannot start the import's reader: {e}"))))?;
    let mut bulk: Option<Bulk> = None;
    let mut written = 0u64;
    let checked = loop {
        let Some(message) = receive.recv().await else {
            return Err(Failure::Store(StoreError::Corrupt(String::from("the import's reader stopped"))));
        };
        let (rows, estimate) = match message {
            Message::End(checked) => break checked,
            Message::Rows { rows, estimate } => (rows, estimate),
        };
        let Some(tx) = tx.as_mut() else { continue };
        if bulk.is_none() {
            bulk = Some(Bulk::open(tx, fiscus_data_core::tables::market::PRICES, estimate).await?);
        }
        if let Some(b) = bulk.as_mut()
            && let Err(e) = b.send(tx, workspace_id, &rows).await
        {
            if let Some(b) = bulk.take() {
                b.abandon(tx);
            }
            // The file's own refusals come first (a bar repeated in the file is one the database refuses
            // before the reader has seen the whole file); dropping the transaction rolls it back.
            return Err(refusals(&mut receive, file).await.unwrap_or(e.into()));
        }
        written += rows.len() as u64;
        progress.update("writing", written, (estimate as u64).max(written));
    };
    let Checked { errors, date_format, rows, period, quality, digests } = *checked;
    if !errors.is_empty() {
        if let (Some(b), Some(tx)) = (bulk.take(), tx.as_mut()) {
            b.abandon(tx);
        }
        return Err(Failure::Invalid { file, errors });
    }
    let mut mapping = req.mapping.clone();
    mapping.date_format = mapping.date_format.or(date_format);
    let mut dataset = super::new_dataset(&req, caller, name, file_sha256, &mapping, (rows, 0), period);
    let Some(mut tx) = tx else {
        return Ok(Outcome { dataset, created: false, dry_run: true, quality });
    };
    if let Some(b) = bulk.take() {
        b.finish(&mut tx, workspace_id).await?;
    }
    dataset.number = number;
    dataset.version = version;
    dataset.content_hash = digests.finish();
    write::seal(tx, caller, workspace_id, &dataset, quality.as_ref()).await?;
    progress.update("writing", rows as u64, rows as u64);
    Ok(Outcome { dataset, created: true, dry_run: false, quality })
}

/// Reads the rest of the reader's messages after a failed write: the file's refusals, if it has any.
async fn refusals(receive: &mut mpsc::Receiver<Message>, file: String) -> Option<Failure> {
    while let Some(message) = receive.recv().await {
        if let Message::End(checked) = message {
            return (!checked.errors.is_empty()).then_some(Failure::Invalid { file, errors: checked.errors });
        }
    }
    None
}

/// The reading and checking side, on a thread of its own.
struct Checker {
    mapping: Mapping,
    ids: HashMap<String, String>,
    /// The dataset's number, written into every row (and so into its digest).
    number: i64,
    /// False for a dry run: rows are checked, none is built to be written.
    writing: bool,
    /// The file's size, for the estimate of its rows.
    length: u64,
    file_sha256: String,
}

impl Checker {
    fn run(self, input: Input, out: &mpsc::Sender<Message>) {
        let checked = match input {
            Input::Bytes(bytes) => self.read(std::io::Cursor::new(bytes), out).map(|(checked, _)| checked),
            Input::File(path) => match std::fs::File::open(&path) {
                Err(e) => Err(ImportError::line(0, format!("the file cannot be read: {e}"))),
                Ok(f) => self.read(Hashing::new(f), out).map(|(mut checked, hashing)| {
                    // A file changed since it was hashed is refused: its dataset would carry another file's seal.
                    if let Some(hashing) = hashing
                        && checked.errors.is_empty()
                        && hashing.seal() != self.file_sha256
                    {
                        checked.errors.push(ImportError::line(0, super::CHANGED));
                    }
                    checked
                }),
            },
        };
        let checked = checked.unwrap_or_else(|e| Checked::refused(vec![e]));
        let _ = out.blocking_send(Message::End(Box::new(checked)));
    }

    /// Reads every row; answers what the checks found and, when the file was read to its end, its reader.
    fn read<R: Read>(&self, input: R, out: &mpsc::Sender<Message>) -> Result<(Checked, Option<R>), ImportError> {
        let input = without_bom(input).map_err(|e| ImportError::line(0, format!("the file cannot be read: {e}")))?;
        let mut file = Rows::open(input, self.mapping.delimiter, MAX_ROWS)?;
        let mut state = State::default();
        let mut carry = Carry::default();
        let mut estimate = 0;
        let mut ended = true;
        loop {
            let table = match file.chunk(CHUNK) {
                Ok(Some(table)) => table,
                Ok(None) => break,
                Err(e) => {
                    carry.errors.push(e);
                    ended = false;
                    break;
                }
            };
            let mut r = Reader::resume(&table, Kind::Prices, &self.mapping, std::mem::take(&mut carry))?;
            let rows = self.check(&mut r, &mut state);
            let full = r.full();
            carry = r.carry();
            if estimate == 0 {
                let per_row = file.position().max(1) as f64 / table.len().max(1) as f64;
                estimate = (self.length as f64 / per_row).ceil() as usize;
                // One allocation for the file's digests (growing by doubling would briefly hold two).
                if self.writing {
                    state.digests.reserve(estimate.min(MAX_ROWS));
                }
            }
            if self.writing && carry.errors.is_empty() && !rows.is_empty() {
                // The writer has stopped (its error is the import's): so does the reading.
                if out.blocking_send(Message::Rows { rows, estimate }).is_err() {
                    return Ok((Checked::refused(Vec::new()), None));
                }
            }
            if full {
                ended = false;
                break;
            }
        }
        if state.rows == 0 && carry.errors.is_empty() && state.unknown.is_empty() {
            carry.errors.push(ImportError::line(2, "the file has a header and no rows"));
        }
        if !state.unknown.is_empty() {
            carry.errors.insert(0, write::unknown_instruments(&state.unknown));
        }
        let checked = state.finish(carry);
        let reader = if ended { Some(file.into_inner().into_inner().1) } else { None };
        Ok((checked, reader))
    }

    /// Checks one chunk's bars against each other's keys and the workspace's instruments, and builds the rows
    /// to write (none once a refusal is found: the file will not be kept).
    fn check(&self, r: &mut Reader<'_>, state: &mut State) -> Vec<Vec<Stored>> {
        let bars = kinds::prices(r, self.mapping.wide.as_deref());
        let mut rows = Vec::with_capacity(if self.writing { bars.len() } else { 0 });
        for (line, bar) in bars {
            let Some(id) = self.ids.get(&bar.symbol) else {
                *state.unknown.entry(bar.symbol.clone()).or_default() += 1;
                r.fail(line, "symbol", write::no_instrument(&bar.symbol));
                continue;
            };
            let symbol = intern(&mut state.symbols, &bar.symbol) as usize;
            let date = intern(&mut state.dates, &bar.date);
            let value = bar.adj_close.as_deref().or(bar.close.as_deref()).and_then(|v| v.parse::<f64>().ok());
            if state.series.len() <= symbol {
                state.series.resize_with(symbol + 1, Vec::new);
            }
            state.series[symbol].push(Point {
                date,
                line: u32::try_from(line).unwrap_or(u32::MAX),
                value: value.filter(|v| v.is_finite()).unwrap_or(f64::NAN),
            });
            state.rows += 1;
            if self.writing && r.errors.is_empty() {
                let row = fiscus_data_core::tables::market::price_row(id.clone(), self.number, bar);
                state.digests.row(&row);
                rows.push(row);
            }
        }
        rows
    }
}

/// What the checks remember across chunks.
#[derive(Default)]
struct State {
    symbols: Interned,
    dates: Interned,
    /// Each symbol's bars.
    series: Vec<Vec<Point>>,
    unknown: BTreeMap<String, u64>,
    rows: usize,
    digests: RowDigests,
}

/// A bar as the checks across rows and the quality report need it.
#[derive(Clone, Copy)]
struct Point {
    /// The interned date.
    date: u32,
    line: u32,
    /// The adjusted close, else the close; NaN when it has neither.
    value: f64,
}

/// Strings numbered in the order first seen.
#[derive(Default)]
struct Interned {
    numbers: HashMap<String, u32>,
    names: Vec<String>,
}

fn intern(table: &mut Interned, name: &str) -> u32 {
    if let Some(n) = table.numbers.get(name) {
        return *n;
    }
    let n = u32::try_from(table.names.len()).unwrap_or(u32::MAX);
    table.numbers.insert(name.to_string(), n);
    table.names.push(name.to_string());
    n
}

impl State {
    /// The checks across rows (a bar repeated, found from each series in date order) and the quality report.
    fn finish(self, mut carry: Carry) -> Checked {
        let State { symbols, dates, mut series, rows, digests, .. } = self;
        // Each date's rank in calendar order (ISO dates sort as text).
        let mut order: Vec<u32> = (0..dates.names.len() as u32).collect();
        order.sort_unstable_by(|a, b| dates.names[*a as usize].cmp(&dates.names[*b as usize]));
        let mut rank = vec![0u32; order.len()];
        for (at, d) in order.iter().enumerate() {
            rank[*d as usize] = at as u32;
        }
        for (s, points) in series.iter_mut().enumerate() {
            points.sort_unstable_by_key(|p| (rank[p.date as usize], p.line));
            let mut first = 0;
            for i in 1..points.len() {
                if points[i].date != points[first].date {
                    first = i;
                } else if carry.errors.len() < super::reader::MAX_ERRORS {
                    let (name, date) = (&symbols.names[s], &dates.names[points[i].date as usize]);
                    carry.errors.push(ImportError::at(
                        u64::from(points[i].line),
                        "date",
                        format!("{name} on {date} appears twice (first on line {})", points[first].line),
                    ));
                }
            }
        }
        let period = match (order.first(), order.last()) {
            (Some(first), Some(last)) if rows > 0 => {
                Some((dates.names[*first as usize].clone(), dates.names[*last as usize].clone()))
            }
            _ => None,
        };
        let mut named: Vec<(usize, &String)> = symbols.names.iter().enumerate().collect();
        named.sort_unstable_by(|a, b| a.1.cmp(b.1));
        let quality = (rows > 0).then(|| {
            fiscus_data_core::rules::quality::report(named.into_iter().filter_map(|(s, name)| {
                let points = series.get(s).filter(|p| !p.is_empty())?;
                let points = points
                    .iter()
                    .map(|p| (dates.names[p.date as usize].as_str(), (!p.value.is_nan()).then_some(p.value)))
                    .collect();
                Some((name.clone(), points))
            }))
        });
        Checked { errors: carry.errors, date_format: carry.date_format, rows, period, quality, digests }
    }
}
