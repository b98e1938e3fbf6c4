//! Importing files into datasets: the one pipeline behind `fiscus import`, the demo and the finance-core
//! intake over HTTP.
//!
//! A file is hashed, parsed and checked (every cell, then the rules across rows and against what is
//! stored); its rows, its sealed dataset row and an audit event are written in one transaction, which a
//! refusal rolls back. So an error names the file, line and column and nothing of the file is kept; the
//! same file imported twice finds its dataset by hash and creates nothing. Most kinds are read whole and
//! checked before the transaction begins; prices, the kind that comes in millions of rows, stream through
//! `stream.rs` (read, checked and written a chunk at a time, the writing overlapped with the reading).

mod book;
mod kinds;
mod reader;
mod stream;
mod table;
mod write;

pub use kinds::{all_fields, fields};
pub use table::normalise;

use fiscus_data_core::rules::quality::QualityReport;
use fiscus_data_core::rules::values::DateFormat;
use fiscus_data_core::rules::{IMPORTER_VERSION, ImportError, Kind, Provenance};
use fiscus_data_core::tables::datasets::Dataset;
use fiscus_store::{Store, StoreError};
use serde::Serialize;
use std::collections::BTreeMap;

use fiscus_kernel::governed::Caller;

/// One import takes at most this many rows (a larger file is refused before parsing: split it).
pub const MAX_ROWS: usize = 2_000_000;

/// How a file's columns map to a kind's fields, and the options that shape its reading. Recorded on the
/// dataset.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Mapping {
    /// field → header, for headers not named as the field (`close=Close Price`); `date=year+quarter`
    /// builds quarterly dates from two columns.
    pub columns: BTreeMap<String, String>,
    /// A symbol for files of one instrument without a symbol column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Wide prices: every column but the date is a symbol holding this field (`adj_close` or `close`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wide: Option<String>,
    /// The dates' format; detected from the first date cell when not given.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "date_format")]
    pub date_format: Option<DateFormat>,
    #[serde(serialize_with = "delimiter")]
    pub delimiter: u8,
    /// Economics: prefix of each series key (the normalised header follows it).
    pub key_prefix: String,
    /// Economics: the units of every series (`percent`, `index 1982-84=100`, …).
    pub units: String,
    /// Economics: a title per column header (the header itself otherwise).
    pub titles: BTreeMap<String, String>,
    /// Prices: the instruments the file names and the workspace does not have are created (an instruments
    /// dataset of their own, its source saying it was made from this file's symbols) instead of refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create_instruments: Option<NewInstruments>,
}

/// What instruments created from a prices file's symbols are: each named by its symbol, of this asset class
/// and quoted in this currency (a later instruments import with their reference data is their next version).
#[derive(Clone, Debug, Serialize)]
pub struct NewInstruments {
    pub asset_class: String,
    pub currency: fiscus_domain::money::Currency,
}

fn date_format<S: serde::Serializer>(f: &Option<DateFormat>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(f.as_ref().map_or("", |f| f.as_str()))
}

fn delimiter<S: serde::Serializer>(d: &u8, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&(*d as char).to_string())
}

/// Where a file's bytes are: in memory (an HTTP body, a file the demo built) or on disk (the CLI's, which
/// a streamed import reads as it goes, so a large file is never whole in memory).
pub enum Input {
    Bytes(Vec<u8>),
    File(std::path::PathBuf),
}

impl From<Vec<u8>> for Input {
    fn from(bytes: Vec<u8>) -> Input {
        Input::Bytes(bytes)
    }
}

impl Input {
    /// The file's seal (`sha256:` and hex) and its number of lines, read through once for a file on disk.
    fn survey(&self) -> std::io::Result<(String, u64)> {
        let lines = |b: &[u8]| table::line_count(b) as u64;
        match self {
            Input::Bytes(b) => Ok((fiscus_domain::evidence::seal_bytes(b), lines(b))),
            Input::File(path) => {
                let mut hashing = Hashing::new(std::fs::File::open(path)?);
                let mut buffer = vec![0u8; 1 << 16];
                let mut n = 1;
                loop {
                    let read = std::io::Read::read(&mut hashing, &mut buffer)?;
                    if read == 0 {
                        break;
                    }
                    n += lines(&buffer[..read]) - 1;
                }
                Ok((hashing.seal(), n))
            }
        }
    }

    /// The file's size in bytes.
    fn len(&self) -> std::io::Result<u64> {
        match self {
            Input::Bytes(b) => Ok(b.len() as u64),
            Input::File(path) => Ok(std::fs::metadata(path)?.len()),
        }
    }

    /// The file's bytes; a file on disk that no longer has the seal it was found by is refused (it changed
    /// since: its dataset would carry another file's seal).
    fn into_bytes(self, file: &str, sha256: &str) -> Result<Vec<u8>, Failure> {
        match self {
            Input::Bytes(b) => Ok(b),
            Input::File(path) => {
                let bytes = std::fs::read(path).map_err(|e| Failure::unreadable(file, &e))?;
                if fiscus_domain::evidence::seal_bytes(&bytes) != sha256 {
                    return Err(Failure::one(file, ImportError::line(0, CHANGED)));
                }
                Ok(bytes)
            }
        }
    }
}

/// The refusal of a file that changed between its hashing and its reading.
const CHANGED: &str = "the file changed while it was imported; nothing was kept, import it again";

/// A reader that hashes what it reads (a streamed file is hashed again as it is imported, so a file
/// changed after its first reading is refused rather than imported under the other bytes' seal).
pub(crate) struct Hashing<R> {
    inner: R,
    hash: sha2::Sha256,
}

impl<R: std::io::Read> Hashing<R> {
    fn new(inner: R) -> Hashing<R> {
        use sha2::Digest;
        Hashing { inner, hash: sha2::Sha256::new() }
    }

    fn seal(self) -> String {
        use sha2::Digest;
        format!("sha256:{}", fiscus_domain::evidence::hex(&self.hash.finalize()))
    }
}

impl<R: std::io::Read> std::io::Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use sha2::Digest;
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// A file to import.
pub struct ImportRequest {
    pub kind: Kind,
    pub file_name: String,
    pub input: Input,
    /// The dataset's name; the file's stem, normalised, when not given.
    pub dataset: Option<String>,
    pub source: String,
    pub licence: String,
    pub provenance: Provenance,
    pub mapping: Mapping,
    /// Check everything, write nothing.
    pub dry_run: bool,
}

/// What an import did.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub dataset: Dataset,
    /// False when the same file had already been imported (its dataset is returned, nothing is written),
    /// and for a dry run.
    pub created: bool,
    pub dry_run: bool,
    /// The dataset's quality report (none for kinds without series, and for a dataset imported before
    /// reports were written).
    pub quality: Option<QualityReport>,
}

#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The file is refused; nothing of it was written.
    #[error("{file}: {}", .errors.first().map(|e| e.to_string()).unwrap_or_default())]
    Invalid { file: String, errors: Vec<ImportError> },
    #[error("{0}")]
    Store(#[from] StoreError),
}

impl Failure {
    fn one(file: &str, e: ImportError) -> Failure {
        Failure::Invalid { file: file.to_string(), errors: vec![e] }
    }

    fn unreadable(file: &str, e: &std::io::Error) -> Failure {
        Failure::one(file, ImportError::line(0, format!("the file cannot be read: {e}")))
    }
}

/// Reports progress: `stage` is `reading`, `checking` or `writing`; `done` of `total` rows.
pub trait Progress: Send + Sync {
    fn update(&self, stage: &'static str, done: u64, total: u64);
}

/// No progress reporting.
pub struct Silent;

impl Progress for Silent {
    fn update(&self, _: &'static str, _: u64, _: u64) {}
}

/// The dataset name a file gets by default: its stem, normalised.
pub fn default_name(file_name: &str) -> String {
    let stem = std::path::Path::new(file_name).file_stem().and_then(|s| s.to_str()).unwrap_or(file_name);
    normalise(stem).chars().take(64).collect()
}

/// Imports one file into the workspace (see the module documentation).
pub fn import<'a>(
    store: &'a Store,
    caller: &'a Caller,
    workspace_id: &'a str,
    req: ImportRequest,
    progress: &'a dyn Progress,
) -> fiscus_store::Boxed<'a, Result<Outcome, Failure>> {
    Box::pin(async move {
        let file = req.file_name.clone();
        // A file name that normalises to nothing usable (`✓.csv`) names the dataset after its kind.
        let name = req.dataset.clone().unwrap_or_else(|| {
            Some(default_name(&file))
                .filter(|n| fiscus_data_core::rules::is_name(n))
                .unwrap_or_else(|| req.kind.as_str().to_string())
        });
        if !fiscus_data_core::rules::is_name(&name) {
            return Err(Failure::one(
                &file,
                ImportError::line(0, format!("`{name}` is not a dataset name (1 to 64 of A-Z a-z 0-9 . _ -)")),
            ));
        }
        for (what, value) in [("source", &req.source), ("licence", &req.licence)] {
            if value.trim().is_empty() || value.chars().count() > 200 || value.chars().any(char::is_control) {
                return Err(Failure::one(
                    &file,
                    ImportError::line(0, format!("the {what} must be 1 to 200 characters, no control characters")),
                ));
            }
        }
        let (file_sha256, lines) = req.input.survey().map_err(|e| Failure::unreadable(&file, &e))?;
        {
            let mut conn = store.read().await?;
            if let Some(existing) = fiscus_data_core::tables::datasets::find_by_file(
                &mut conn,
                store.seal_key(),
                workspace_id,
                req.kind,
                &file_sha256,
            )
            .await?
            {
                let quality = fiscus_data_core::tables::datasets::quality(
                    &mut conn,
                    store.seal_key(),
                    workspace_id,
                    existing.number,
                )
                .await?;
                return Ok(Outcome { dataset: existing, created: false, dry_run: req.dry_run, quality });
            }
        }
        let kind = req.kind;
        let written = if stream::streams(&req) {
            // A file over the row limit is refused before it is parsed (the whole-file path counts too).
            table::within_limit(lines, MAX_ROWS).map_err(|e| Failure::one(&file, e))?;
            stream::prices(store, caller, workspace_id, req, name, file_sha256.clone(), progress).await
        } else {
            whole(store, caller, workspace_id, req, name, file_sha256.clone(), progress).await
        };
        match written {
            // Imported concurrently by someone else: that import stands, this one is a no-op.
            Err(Failure::Store(StoreError::Conflict(_))) => {
                let mut conn = store.read().await?;
                match fiscus_data_core::tables::datasets::find_by_file(
                    &mut conn,
                    store.seal_key(),
                    workspace_id,
                    kind,
                    &file_sha256,
                )
                .await?
                {
                    Some(existing) => {
                        let quality = fiscus_data_core::tables::datasets::quality(
                            &mut conn,
                            store.seal_key(),
                            workspace_id,
                            existing.number,
                        )
                        .await?;
                        Ok(Outcome { dataset: existing, created: false, dry_run: false, quality })
                    }
                    None => Err(Failure::Store(StoreError::Conflict(String::from("datasets")))),
                }
            }
            other => other,
        }
    })
}

/// The dataset row an import writes (its number, version and content hash are set in its transaction).
fn new_dataset(
    req: &ImportRequest,
    caller: &Caller,
    name: String,
    file_sha256: String,
    mapping: &Mapping,
    (rows, skipped): (usize, usize),
    period: Option<(String, String)>,
) -> Dataset {
    Dataset {
        id: fiscus_domain::ids::new_id("dst"),
        number: 0,
        kind: req.kind,
        name,
        version: 0,
        source: req.source.trim().to_string(),
        licence: req.licence.trim().to_string(),
        provenance: req.provenance,
        file_name: req.file_name.clone(),
        file_sha256,
        row_count: rows as i64,
        skipped_count: skipped as i64,
        period_start: period.as_ref().map(|p| p.0.clone()),
        period_end: period.as_ref().map(|p| p.1.clone()),
        importer_version: IMPORTER_VERSION.to_string(),
        mapping: serde_json::to_string(mapping).unwrap_or_default(),
        content_hash: String::new(),
        imported_by: caller.actor.clone(),
        created_at: fiscus_domain::clock::now_micros(),
    }
}

/// Imports a file read whole: parsed and checked before the transaction begins.
async fn whole(
    store: &Store,
    caller: &Caller,
    workspace_id: &str,
    mut req: ImportRequest,
    name: String,
    file_sha256: String,
    progress: &dyn Progress,
) -> Result<Outcome, Failure> {
    let file = req.file_name.clone();
    progress.update("reading", 0, 0);
    // The file's bytes and their table go as soon as the plan holds the rows (a large import would
    // otherwise keep three copies of its file while writing).
    let bytes = std::mem::replace(&mut req.input, Input::Bytes(Vec::new())).into_bytes(&file, &file_sha256)?;
    let (plan, total, date_format) = {
        let parsed = table::read(&bytes, req.mapping.delimiter, MAX_ROWS).map_err(|e| Failure::one(&file, e))?;
        drop(bytes);
        let total = parsed.len() as u64;
        progress.update("checking", 0, total);
        let mut reader = reader::Reader::new(&parsed, req.kind, &req.mapping).map_err(|e| Failure::one(&file, e))?;
        let plan = write::plan(store, workspace_id, &req, &name, &mut reader).await?;
        if !reader.errors.is_empty() {
            return Err(Failure::Invalid { file, errors: reader.errors });
        }
        (plan, total, reader.date_format())
    };
    let mut plan = plan;
    if !plan.unknown_symbols.is_empty() && !req.dry_run {
        create_instruments(store, caller, workspace_id, &req, &name, &mut plan).await?;
    }
    let mut mapping = req.mapping.clone();
    mapping.date_format = mapping.date_format.or(date_format);
    progress.update("checking", total, total);
    let dataset =
        new_dataset(&req, caller, name, file_sha256, &mapping, (plan.rows(), plan.skipped), plan.period.clone());
    let quality = write::quality(&plan.body);
    if req.dry_run {
        return Ok(Outcome { dataset, created: false, dry_run: true, quality });
    }
    let dataset = write::commit(store, caller, workspace_id, dataset, plan, quality.as_ref(), progress).await?;
    Ok(Outcome { dataset, created: true, dry_run: false, quality })
}

/// The instruments `create_instruments` makes, checked: an asset class of the list and a currency code.
pub fn new_instruments(asset_class: &str, currency: &str) -> Result<NewInstruments, (&'static str, String)> {
    if !fiscus_data_core::rules::records::ASSET_CLASSES.contains(&asset_class) {
        return Err((
            "asset_class",
            format!("`{asset_class}` is not one of {}", fiscus_data_core::rules::records::ASSET_CLASSES.join(", ")),
        ));
    }
    let currency = fiscus_domain::money::Currency::parse(currency)
        .ok_or_else(|| ("currency", format!("`{currency}` is not an ISO 4217 code Fiscus accepts")))?;
    Ok(NewInstruments { asset_class: asset_class.to_string(), currency })
}

/// Creates the instruments a prices file names and the workspace lacks, as an instruments dataset of their
/// own (named after the prices dataset, its source naming the file), then gives the file's bars their ids.
/// It is written before the prices and only once every row of the file has been checked, so a refused
/// file creates nothing; the same file again finds them and creates no second dataset.
async fn create_instruments(
    store: &Store,
    caller: &Caller,
    workspace_id: &str,
    req: &ImportRequest,
    name: &str,
    plan: &mut write::Plan,
) -> Result<(), Failure> {
    let Some(new) = &req.mapping.create_instruments else {
        return Err(Failure::Store(StoreError::Corrupt("unknown symbols without --create-instruments".into())));
    };
    let mut csv = String::from("symbol,name,asset_class,currency\n");
    for s in &plan.unknown_symbols {
        csv.push_str(&format!("{s},{s},{},{}\n", new.asset_class, new.currency.code()));
    }
    let instruments = ImportRequest {
        kind: Kind::Instruments,
        file_name: format!("{}.instruments.csv", req.file_name),
        input: Input::Bytes(csv.into_bytes()),
        dataset: Some(format!("{}_instruments", name.chars().take(52).collect::<String>())),
        source: format!(
            "created from the symbols of the prices file {}",
            req.file_name.chars().take(140).collect::<String>()
        ),
        licence: req.licence.clone(),
        provenance: req.provenance,
        mapping: Mapping { delimiter: b',', ..Mapping::default() },
        dry_run: false,
    };
    import(store, caller, workspace_id, instruments, &Silent).await?;
    let mut conn = store.read().await?;
    let ids = fiscus_data_core::tables::market::ids_by_symbol(&mut conn, workspace_id).await?;
    if let write::Body::Prices(bars) = &mut plan.body {
        for (id, bar) in bars.iter_mut().filter(|(id, _)| id.is_empty()) {
            match ids.get(&bar.symbol) {
                Some(found) => id.clone_from(found),
                None => {
                    return Err(Failure::Store(StoreError::Corrupt(format!(
                        "instrument `{}` was created and is not found",
                        bar.symbol
                    ))));
                }
            }
        }
    }
    plan.unknown_symbols.clear();
    Ok(())
}
