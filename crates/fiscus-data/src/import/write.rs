//! The rules across rows and against what is stored (a key once per file, references that exist, journals
//! that balance, ledger rows already imported), then the one transaction that writes a dataset.
//!
//! It is long because every import kind's write has the same shape (check across rows, check against the store,
//! one transaction), one function per kind in the order of `kinds.rs`; the shape is clearer side by side than
//! spread over files.

use super::kinds;
use super::reader::Reader;
use super::{Failure, ImportRequest, Progress};
use fiscus_data_core::rules::Kind;
use fiscus_data_core::rules::records::*;
use fiscus_data_core::tables::banking::{Balance, Transaction};
use fiscus_data_core::tables::datasets::Dataset;
use fiscus_data_core::tables::economics::Series;
use fiscus_data_core::tables::finance_core::{NewEntity, NewJournal, NewJournalLine, NewLedger};
use fiscus_domain::audit_action::Change;
use fiscus_kernel::governed::Caller;
use fiscus_kernel::governed::record::AuditEntry;
use fiscus_store::Store;
use std::collections::{BTreeMap, HashMap};

pub struct JournalPlan {
    pub general_ledger_id: i64,
    pub entity_id: i64,
    pub entry: String,
    pub date: String,
    pub fingerprint: String,
    pub lines: Vec<JournalLineRecord>,
}

pub enum Body {
    Instruments(Vec<InstrumentRecord>),
    Prices(Vec<(String, PriceRecord)>),
    CorporateActions(Vec<(String, CorporateActionRecord)>),
    Fundamentals(Vec<(String, FundamentalRecord)>),
    Economics(Vec<Series>, Vec<ObservationRecord>),
    Ledgers(Vec<(LedgerRecord, String)>),
    Entities(Vec<(EntityRecord, i64, String)>),
    Journals(Vec<JournalPlan>),
    Transactions(Vec<(Transaction, String)>),
    Balances(Vec<(Balance, String)>),
    Portfolios(Vec<(fiscus_data_core::book::PortfolioRecord, String)>),
    /// Lots, or positions read as lots.
    Lots(Vec<fiscus_data_core::tables::book::NewLot>),
    Cash(Vec<fiscus_data_core::tables::book::NewCash>),
}

pub struct Plan {
    pub body: Body,
    /// Ledger rows already imported unchanged.
    pub skipped: usize,
    /// First and last date the rows observe.
    pub period: Option<(String, String)>,
    /// Prices with `create_instruments`: the symbols the workspace lacks, sorted (their bars have no id yet).
    pub unknown_symbols: Vec<String>,
}

impl Plan {
    pub fn rows(&self) -> usize {
        match &self.body {
            Body::Instruments(v) => v.len(),
            Body::Prices(v) => v.len(),
            Body::CorporateActions(v) => v.len(),
            Body::Fundamentals(v) => v.len(),
            Body::Economics(_, v) => v.len(),
            Body::Ledgers(v) => v.len(),
            Body::Entities(v) => v.len(),
            Body::Journals(v) => v.iter().map(|j| j.lines.len()).sum(),
            Body::Transactions(v) => v.len(),
            Body::Balances(v) => v.len(),
            Body::Portfolios(v) => v.len(),
            Body::Lots(v) => v.len(),
            Body::Cash(v) => v.len(),
        }
    }
}

fn period<'a>(dates: impl Iterator<Item = &'a str>) -> Option<(String, String)> {
    let mut lo: Option<&str> = None;
    let mut hi: Option<&str> = None;
    for d in dates {
        lo = Some(lo.map_or(d, |l| l.min(d)));
        hi = Some(hi.map_or(d, |h| h.max(d)));
    }
    Some((lo?.to_string(), hi?.to_string()))
}

/// Refuses a second row with the same key, naming both lines.
pub(super) fn once<K: std::hash::Hash + Eq>(
    r: &mut Reader<'_>,
    seen: &mut HashMap<K, u64>,
    key: K,
    line: u64,
    column: &str,
    what: impl FnOnce() -> String,
) -> bool {
    match seen.get(&key) {
        Some(first) => {
            r.fail(line, column, format!("{} appears twice (first on line {first})", what()));
            false
        }
        None => {
            seen.insert(key, line);
            true
        }
    }
}

/// The rows whose key an earlier row has: (index, the earlier row's line). The keys borrow from the rows,
/// so a large file's keys are not copied.
fn repeated<'a, T, K: std::hash::Hash + Eq>(rows: &'a [(u64, T)], key: impl Fn(&'a T) -> K) -> Vec<(usize, u64)> {
    let mut seen = HashMap::with_capacity(rows.len());
    let mut twice = Vec::new();
    for (i, (line, row)) in rows.iter().enumerate() {
        match seen.entry(key(row)) {
            std::collections::hash_map::Entry::Occupied(first) => twice.push((i, *first.get())),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(*line);
            }
        }
    }
    twice
}

/// Refuses each repeated row, naming both lines, and returns the others in order.
fn without<T>(
    r: &mut Reader<'_>,
    mut rows: Vec<(u64, T)>,
    twice: Vec<(usize, u64)>,
    column: &str,
    what: impl Fn(&T) -> String,
) -> Vec<(u64, T)> {
    if twice.is_empty() {
        return rows;
    }
    for (i, first) in &twice {
        let (line, row) = &rows[*i];
        r.fail(*line, column, format!("{} appears twice (first on line {first})", what(row)));
    }
    let mut dropped = twice.iter().map(|(i, _)| *i).peekable();
    let mut at = 0;
    rows.retain(|_| {
        let keep = dropped.peek() != Some(&at);
        if !keep {
            dropped.next();
        }
        at += 1;
        keep
    });
    rows
}

/// The instrument ids of the symbols. Unknown ones are refused, each line and then all of them in one
/// error first (import their reference data first, or create them), unless `create` is set: then their rows
/// keep an empty id and the symbols are returned, sorted, to be created.
fn resolve<T>(
    r: &mut Reader<'_>,
    ids: &HashMap<String, String>,
    rows: Vec<(u64, T)>,
    symbol: impl Fn(&T) -> &str,
    column: &str,
    create: bool,
) -> (Vec<(String, T)>, Vec<String>) {
    let mut out = Vec::with_capacity(rows.len());
    let mut unknown: BTreeMap<String, u64> = BTreeMap::new();
    for (line, row) in rows {
        match ids.get(symbol(&row)) {
            Some(id) => out.push((id.clone(), row)),
            None => {
                *unknown.entry(symbol(&row).to_string()).or_default() += 1;
                if create {
                    out.push((String::new(), row));
                } else {
                    r.fail(line, column, no_instrument(symbol(&row)));
                }
            }
        }
    }
    if !unknown.is_empty() && !create {
        r.errors.insert(0, unknown_instruments(&unknown));
    }
    (out, if create { unknown.into_keys().collect() } else { Vec::new() })
}

/// A row's refusal for a symbol the workspace has no instrument of.
pub(super) fn no_instrument(symbol: &str) -> String {
    format!("no instrument `{symbol}` in this workspace (import its reference data first: fiscus import instruments)")
}

/// The first error of a file naming instruments the workspace lacks: all of them (the first 50), their rows,
/// and the two ways on.
pub(super) fn unknown_instruments(unknown: &BTreeMap<String, u64>) -> fiscus_data_core::rules::ImportError {
    let rows: u64 = unknown.values().sum();
    let names: Vec<&str> = unknown.keys().take(50).map(String::as_str).collect();
    let more =
        if unknown.len() > names.len() { format!(" and {} more", unknown.len() - names.len()) } else { String::new() };
    fiscus_data_core::rules::ImportError::line(
        0,
        format!(
            "{rows} row(s) name {} instrument(s) this workspace does not have: {}{more}; import their reference \
             data first (fiscus import instruments), or create them from this file's symbols (fiscus import \
             prices --create-instruments, create_instruments over HTTP)",
            unknown.len(),
            names.join(", ")
        ),
    )
}

pub async fn plan(
    store: &Store,
    workspace_id: &str,
    req: &ImportRequest,
    name: &str,
    r: &mut Reader<'_>,
) -> Result<Plan, Failure> {
    let mut conn = store.read().await?;
    let mut skipped = 0;
    let mut unknown_symbols = Vec::new();
    let body = match req.kind {
        Kind::Instruments => {
            let records = kinds::instruments(r);
            let mut seen = HashMap::new();
            let mut out = Vec::with_capacity(records.len());
            for (line, rec) in records {
                if once(r, &mut seen, rec.symbol.clone(), line, "symbol", || format!("symbol `{}`", rec.symbol)) {
                    out.push(rec);
                }
            }
            Body::Instruments(out)
        }
        Kind::Prices => {
            let rows = kinds::prices(r, req.mapping.wide.as_deref());
            let twice = repeated(&rows, |b| (b.symbol.as_str(), b.date.as_str()));
            let unique = without(r, rows, twice, "date", |b| format!("{} on {}", b.symbol, b.date));
            let ids = fiscus_data_core::tables::market::ids_by_symbol(&mut conn, workspace_id).await?;
            let create = req.mapping.create_instruments.is_some();
            let (bars, unknown) = resolve(r, &ids, unique, |b| b.symbol.as_str(), "symbol", create);
            unknown_symbols = unknown;
            Body::Prices(bars)
        }
        Kind::CorporateActions => {
            let rows = kinds::corporate_actions(r);
            let twice = repeated(&rows, |a| (a.symbol.as_str(), a.ex_date.as_str(), a.action));
            let unique =
                without(r, rows, twice, "ex_date", |a| format!("{} {} on {}", a.symbol, a.action.as_str(), a.ex_date));
            let ids = fiscus_data_core::tables::market::ids_by_symbol(&mut conn, workspace_id).await?;
            Body::CorporateActions(resolve(r, &ids, unique, |a| a.symbol.as_str(), "symbol", false).0)
        }
        Kind::Fundamentals => {
            let rows = kinds::fundamentals(r);
            let twice = repeated(&rows, |f| {
                (f.symbol.as_str(), f.period_end.as_str(), f.fiscal_period.as_str(), f.metric.as_str())
            });
            let unique = without(r, rows, twice, "metric", |f| {
                format!("{} {} {} {}", f.symbol, f.metric, f.fiscal_period, f.period_end)
            });
            let ids = fiscus_data_core::tables::market::ids_by_symbol(&mut conn, workspace_id).await?;
            Body::Fundamentals(resolve(r, &ids, unique, |f| f.symbol.as_str(), "symbol", false).0)
        }
        Kind::Economics => {
            let rows = kinds::economics(r, &req.mapping);
            let mut seen = HashMap::new();
            let mut by_key: BTreeMap<String, Vec<String>> = BTreeMap::new();
            let mut observations = Vec::with_capacity(rows.len());
            for (line, o) in rows {
                if once(r, &mut seen, (o.key.clone(), o.date.clone()), line, "date", || {
                    format!("{} on {}", o.key, o.date)
                }) {
                    by_key.entry(o.key.clone()).or_default().push(o.date.clone());
                    observations.push(o);
                }
            }
            let owners = fiscus_data_core::tables::economics::owners(&mut conn, workspace_id).await?;
            let headers: HashMap<String, String> = r
                .table
                .headers
                .iter()
                .map(|h| (format!("{}{}", req.mapping.key_prefix, super::normalise(h)), h.clone()))
                .collect();
            let mut series = Vec::new();
            for (key, mut dates) in by_key {
                let header = headers.get(&key).cloned().unwrap_or_else(|| key.clone());
                if !fiscus_data_core::rules::is_name(&key) {
                    r.fail(1, &header, format!("`{key}` is not a series key (1 to 64 of a-z 0-9 . _ -)"));
                    continue;
                }
                if let Some((_, other)) = owners.iter().find(|(k, n)| *k == key && n != name) {
                    r.fail(
                        1,
                        &header,
                        format!("series `{key}` already comes from dataset `{other}` (choose another --key-prefix)"),
                    );
                    continue;
                }
                dates.sort();
                series.push(Series {
                    title: req.mapping.titles.get(&header).cloned().unwrap_or_else(|| header.clone()),
                    units: req.mapping.units.clone(),
                    frequency: fiscus_data_core::rules::frequency::Frequency::of_dates(
                        dates.iter().map(String::as_str),
                    )
                    .as_str()
                    .to_string(),
                    observations: dates.len() as i64,
                    first_date: dates.first().cloned(),
                    last_date: dates.last().cloned(),
                    series_key: key,
                    dataset_number: 0,
                });
            }
            Body::Economics(series, observations)
        }
        Kind::Ledgers => {
            let records = kinds::ledgers(r);
            let existing = fiscus_data_core::tables::finance_core::ledgers(&mut conn, workspace_id).await?;
            let mut seen = HashMap::new();
            let mut out = Vec::new();
            for (line, l) in records {
                if !once(r, &mut seen, l.code.clone(), line, "code", || format!("ledger `{}`", l.code)) {
                    continue;
                }
                let fp = fingerprint(&[&l.code, &l.name, l.currency.code()]);
                match existing.get(&l.code) {
                    Some(e) if e.fingerprint == fp => skipped += 1,
                    Some(_) => r.fail(
                        line,
                        "code",
                        format!(
                            "ledger `{}` was imported before with other values; imported rows are never changed",
                            l.code
                        ),
                    ),
                    None => out.push((l, fp)),
                }
            }
            Body::Ledgers(out)
        }
        Kind::Entities => {
            let records = kinds::entities(r);
            let ledgers = fiscus_data_core::tables::finance_core::ledgers(&mut conn, workspace_id).await?;
            let existing = fiscus_data_core::tables::finance_core::entities(&mut conn, workspace_id).await?;
            let mut seen = HashMap::new();
            let mut out = Vec::new();
            for (line, e) in records {
                if !once(r, &mut seen, e.code.clone(), line, "code", || format!("entity `{}`", e.code)) {
                    continue;
                }
                let Some(ledger) = ledgers.get(&e.ledger) else {
                    r.fail(
                        line,
                        "ledger",
                        format!("no general ledger `{}` in this workspace (import ledgers first)", e.ledger),
                    );
                    continue;
                };
                let fp = fingerprint(&[&e.code, &e.name, &e.status, &e.ledger, e.currency.code(), &e.country]);
                match existing.get(&e.code) {
                    Some(x) if x.fingerprint == fp => skipped += 1,
                    Some(_) => r.fail(
                        line,
                        "code",
                        format!(
                            "entity `{}` was imported before with other values; imported rows are never changed",
                            e.code
                        ),
                    ),
                    None => out.push((e, ledger.id, fp)),
                }
            }
            Body::Entities(out)
        }
        Kind::Journals => {
            let lines = kinds::journal_lines(r);
            let ledgers = fiscus_data_core::tables::finance_core::ledgers(&mut conn, workspace_id).await?;
            let entities = fiscus_data_core::tables::finance_core::entities(&mut conn, workspace_id).await?;
            let existing = fiscus_data_core::tables::finance_core::journals(&mut conn, workspace_id).await?;
            let records: Vec<JournalLineRecord> = lines.iter().map(|(_, l)| l.clone()).collect();
            for u in unbalanced(&records) {
                let line = lines.iter().find(|(_, l)| l.entry == u.entry).map_or(0, |(n, _)| *n);
                r.fail(
                    line,
                    "entry",
                    format!(
                        "entry `{}` does not balance in {}: debits {} and credits {} minor units",
                        u.entry, u.currency, u.debits_minor, u.credits_minor
                    ),
                );
            }
            // Entries in the order the file first lists them, so journal ids follow the file.
            let mut order: Vec<(String, String)> = Vec::new();
            let mut entries: HashMap<(String, String), (u64, Vec<JournalLineRecord>)> = HashMap::new();
            for (line, l) in lines {
                let key = (l.ledger.clone(), l.entry.clone());
                if !entries.contains_key(&key) {
                    order.push(key.clone());
                }
                entries.entry(key).or_insert_with(|| (line, Vec::new())).1.push(l);
            }
            let mut out = Vec::new();
            for key in order {
                let Some((line, lines)) = entries.remove(&key) else { continue };
                let (ledger, entry) = key;
                let first = &lines[0];
                if lines.iter().any(|l| l.date != first.date || l.entity != first.entity) {
                    r.fail(line, "entry", format!("the lines of entry `{entry}` must share one date and one entity"));
                    continue;
                }
                let Some(gl) = ledgers.get(&ledger) else {
                    r.fail(
                        line,
                        "ledger",
                        format!("no general ledger `{ledger}` in this workspace (import ledgers first)"),
                    );
                    continue;
                };
                let Some(entity) = entities.get(&first.entity) else {
                    r.fail(
                        line,
                        "entity",
                        format!("no entity `{}` in this workspace (import entities first)", first.entity),
                    );
                    continue;
                };
                let mut values: Vec<String> =
                    vec![ledger.clone(), entry.clone(), first.date.clone(), first.entity.clone()];
                for l in &lines {
                    values.extend([
                        l.account.clone(),
                        l.description.clone(),
                        l.debit_minor.to_string(),
                        l.credit_minor.to_string(),
                        l.currency.code().to_string(),
                    ]);
                }
                let fp = fingerprint(&values.iter().map(String::as_str).collect::<Vec<_>>());
                match existing.get(&format!("{}/{entry}", gl.id)) {
                    Some(x) if x.fingerprint == fp => skipped += lines.len(),
                    Some(_) => r.fail(
                        line,
                        "entry",
                        format!("entry `{entry}` was posted before with other lines; post a correcting entry instead"),
                    ),
                    None => out.push(JournalPlan {
                        general_ledger_id: gl.id,
                        entity_id: entity.id,
                        entry,
                        date: first.date.clone(),
                        fingerprint: fp,
                        lines,
                    }),
                }
            }
            Body::Journals(out)
        }
        Kind::Transactions => {
            let records = kinds::transactions(r);
            let existing = fiscus_data_core::tables::banking::transaction_fingerprints(&mut conn, workspace_id).await?;
            let mut seen = HashMap::new();
            let mut out = Vec::new();
            for (line, t) in records {
                let key = format!("{}/{}", t.account, t.external_id);
                if !once(r, &mut seen, key.clone(), line, "id", || {
                    format!("transaction `{}` of account `{}`", t.external_id, t.account)
                }) {
                    continue;
                }
                let amount = t.amount_minor.to_string();
                let fp = fingerprint(&[
                    &t.account,
                    &t.external_id,
                    &t.booking_date,
                    &t.value_date,
                    &amount,
                    t.currency.code(),
                    &t.counterparty,
                    &t.description,
                    &t.reference,
                ]);
                match existing.get(&key) {
                    Some(x) if *x == fp => skipped += 1,
                    Some(_) => r.fail(
                        line,
                        "id",
                        format!("transaction `{}` was imported before with other values", t.external_id),
                    ),
                    None => out.push((
                        Transaction {
                            id: fiscus_domain::ids::new_id("ftx"),
                            account: t.account,
                            external_id: t.external_id,
                            booking_date: t.booking_date,
                            value_date: t.value_date,
                            amount_minor: t.amount_minor,
                            currency: t.currency.code().to_string(),
                            counterparty: t.counterparty,
                            description: t.description,
                            reference: t.reference,
                            dataset_number: 0,
                        },
                        fp,
                    )),
                }
            }
            Body::Transactions(out)
        }
        Kind::Balances => {
            let records = kinds::balances(r);
            let existing = fiscus_data_core::tables::banking::balance_fingerprints(&mut conn, workspace_id).await?;
            let mut seen = HashMap::new();
            let mut out = Vec::new();
            for (line, b) in records {
                let key = format!("{}/{}/{}", b.account, b.date, b.balance_type);
                if !once(r, &mut seen, key.clone(), line, "date", || {
                    format!("{} balance of `{}` on {}", b.balance_type, b.account, b.date)
                }) {
                    continue;
                }
                let amount = b.amount_minor.to_string();
                let fp = fingerprint(&[&b.account, &b.date, &b.balance_type, &amount, b.currency.code()]);
                match existing.get(&key) {
                    Some(x) if *x == fp => skipped += 1,
                    Some(_) => r.fail(
                        line,
                        "amount",
                        format!(
                            "the {} balance of `{}` on {} was imported before with another amount",
                            b.balance_type, b.account, b.date
                        ),
                    ),
                    None => out.push((
                        Balance {
                            id: fiscus_domain::ids::new_id("fsn"),
                            account: b.account,
                            date: b.date,
                            balance_type: b.balance_type,
                            amount_minor: b.amount_minor,
                            currency: b.currency.code().to_string(),
                            dataset_number: 0,
                        },
                        fp,
                    )),
                }
            }
            Body::Balances(out)
        }
        Kind::Portfolios | Kind::Lots | Kind::Positions | Kind::Cash => {
            super::book::plan(&mut conn, workspace_id, req.kind, r, &mut skipped).await?
        }
    };
    let period = match &body {
        Body::Instruments(_) | Body::Ledgers(_) | Body::Entities(_) | Body::Portfolios(_) => None,
        Body::Lots(v) => period(v.iter().map(|l| l.acquired.as_str())),
        Body::Cash(v) => period(v.iter().map(|c| c.date.as_str())),
        Body::Prices(v) => period(v.iter().map(|(_, b)| b.date.as_str())),
        Body::CorporateActions(v) => period(v.iter().map(|(_, a)| a.ex_date.as_str())),
        Body::Fundamentals(v) => period(v.iter().map(|(_, f)| f.period_end.as_str())),
        Body::Economics(_, v) => period(v.iter().map(|o| o.date.as_str())),
        Body::Journals(v) => period(v.iter().map(|j| j.date.as_str())),
        Body::Transactions(v) => period(v.iter().map(|(t, _)| t.booking_date.as_str())),
        Body::Balances(v) => period(v.iter().map(|(b, _)| b.date.as_str())),
    };
    let nothing =
        matches!(&body, Body::Ledgers(v) if v.is_empty()) || matches!(&body, Body::Portfolios(v) if v.is_empty());
    if r.errors.is_empty() && nothing && skipped == 0 {
        r.fail(2, "code", "the file holds no rows to import");
    }
    Ok(Plan { body, skipped, period, unknown_symbols })
}

/// The quality report of a dataset's series (prices by symbol, economic observations by key), from the rows
/// it is about to write; none for kinds without series.
pub fn quality(body: &Body) -> Option<fiscus_data_core::rules::quality::QualityReport> {
    let mut series: BTreeMap<&str, Vec<(&str, Option<f64>)>> = BTreeMap::new();
    let number = |v: Option<&str>| v.and_then(|v| v.parse::<f64>().ok()).filter(|v| v.is_finite());
    match body {
        Body::Prices(v) => {
            for (_, b) in v {
                let value = number(b.adj_close.as_deref().or(b.close.as_deref()));
                series.entry(b.symbol.as_str()).or_default().push((b.date.as_str(), value));
            }
        }
        Body::Economics(_, v) => {
            for o in v {
                series.entry(o.key.as_str()).or_default().push((o.date.as_str(), number(Some(&o.value))));
            }
        }
        _ => return None,
    }
    Some(fiscus_data_core::rules::quality::report(series.into_iter().map(|(name, mut points)| {
        points.sort_by(|a, b| a.0.cmp(b.0));
        (name.to_string(), points)
    })))
}

/// Writes the dataset: its rows, its sealed row, its quality report and the audit event, in one transaction.
pub async fn commit(
    store: &Store,
    caller: &Caller,
    workspace_id: &str,
    mut dataset: Dataset,
    plan: Plan,
    report: Option<&fiscus_data_core::rules::quality::QualityReport>,
    progress: &dyn Progress,
) -> Result<Dataset, Failure> {
    use fiscus_data_core::tables::{banking, book, economics, finance_core, market};
    let total = plan.rows() as u64;
    progress.update("writing", 0, total);
    let mut tx = store.begin().await?;
    let number = fiscus_data_core::tables::datasets::next_number(&mut tx).await?;
    let version =
        fiscus_data_core::tables::datasets::next_version(tx.conn(), workspace_id, dataset.kind, &dataset.name).await?;
    let mut lines = fiscus_data_core::tables::RowDigests::with_capacity(total as usize);
    match &plan.body {
        Body::Instruments(v) => {
            market::insert_instruments(&mut tx, workspace_id, number, v, dataset.created_at, &mut lines).await?
        }
        Body::Prices(v) => market::insert_prices(&mut tx, workspace_id, number, v, &mut lines).await?,
        Body::CorporateActions(v) => {
            market::insert_corporate_actions(&mut tx, workspace_id, number, v, &mut lines).await?
        }
        Body::Fundamentals(v) => market::insert_fundamentals(&mut tx, workspace_id, number, v, &mut lines).await?,
        Body::Economics(series, observations) => {
            economics::insert(&mut tx, workspace_id, number, series, observations, &mut lines).await?
        }
        Body::Ledgers(v) => {
            let ledgers: Vec<NewLedger<'_>> = v
                .iter()
                .map(|(l, fp)| NewLedger {
                    code: &l.code,
                    name: &l.name,
                    currency: l.currency.code(),
                    fingerprint: fp.clone(),
                })
                .collect();
            finance_core::insert_ledgers(&mut tx, workspace_id, number, &ledgers, &mut lines).await?;
        }
        Body::Entities(v) => {
            let entities: Vec<NewEntity<'_>> = v
                .iter()
                .map(|(e, gl, fp)| NewEntity {
                    code: &e.code,
                    name: &e.name,
                    status: &e.status,
                    general_ledger_id: *gl,
                    currency: e.currency.code(),
                    country: &e.country,
                    fingerprint: fp.clone(),
                })
                .collect();
            finance_core::insert_entities(&mut tx, workspace_id, number, &entities, &mut lines).await?;
        }
        Body::Journals(v) => {
            let journals: Vec<NewJournal<'_>> = v
                .iter()
                .map(|j| NewJournal {
                    general_ledger_id: j.general_ledger_id,
                    entity_id: j.entity_id,
                    entry: &j.entry,
                    posting_date: &j.date,
                    fingerprint: j.fingerprint.clone(),
                    lines: j
                        .lines
                        .iter()
                        .map(|l| NewJournalLine {
                            account: &l.account,
                            description: &l.description,
                            debit_minor: l.debit_minor,
                            credit_minor: l.credit_minor,
                            currency: l.currency.code(),
                        })
                        .collect(),
                })
                .collect();
            finance_core::insert_journals(&mut tx, workspace_id, number, &journals, &mut lines).await?;
        }
        Body::Transactions(v) => banking::insert_transactions(&mut tx, workspace_id, number, v, &mut lines).await?,
        Body::Balances(v) => banking::insert_balances(&mut tx, workspace_id, number, v, &mut lines).await?,
        Body::Portfolios(v) => {
            let portfolios: Vec<book::NewPortfolio<'_>> = v
                .iter()
                .map(|(p, fp)| book::NewPortfolio {
                    code: &p.code,
                    name: &p.name,
                    base_currency: p.base_currency,
                    benchmark_symbol: p.benchmark_symbol.as_deref(),
                    fingerprint: fp.clone(),
                })
                .collect();
            book::insert_portfolios(&mut tx, workspace_id, number, &portfolios, &mut lines).await?
        }
        Body::Lots(v) => book::insert_lots(&mut tx, workspace_id, number, v, &mut lines).await?,
        Body::Cash(v) => book::insert_cash(&mut tx, workspace_id, number, v, &mut lines).await?,
    }
    dataset.number = number;
    dataset.version = version;
    dataset.content_hash = lines.finish();
    seal(tx, caller, workspace_id, &dataset, report).await?;
    progress.update("writing", total, total);
    Ok(dataset)
}

/// Ends an import's transaction: the dataset's sealed row (its number, version and content hash set), its
/// quality report and the audit event, then the commit.
pub async fn seal(
    mut tx: fiscus_store::WriteTx,
    caller: &Caller,
    workspace_id: &str,
    dataset: &Dataset,
    report: Option<&fiscus_data_core::rules::quality::QualityReport>,
) -> Result<(), Failure> {
    let (number, version) = (dataset.number, dataset.version);
    fiscus_data_core::tables::datasets::insert(&mut tx, workspace_id, dataset).await?;
    if let Some(report) = &report {
        fiscus_data_core::tables::datasets::insert_quality(&mut tx, workspace_id, dataset, report).await?;
    }
    fiscus_kernel::governed::record::audit(
        &mut tx,
        caller,
        &AuditEntry {
            workspace_id,
            environment: None,
            action: Change::DataImport.into(),
            subject: Some(&dataset.id),
            details: serde_json::json!({
                "dataset": number, "kind": dataset.kind.as_str(), "name": dataset.name, "version": version,
                "file_sha256": dataset.file_sha256, "rows": dataset.row_count, "skipped": dataset.skipped_count,
                "content_hash": dataset.content_hash, "provenance": dataset.provenance.as_str(),
            }),
            occurred_at: dataset.created_at,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
