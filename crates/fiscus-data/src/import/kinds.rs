//! Each kind's rows from a table: which fields it reads (by the header's name, or as the mapping says),
//! which are required, and how each cell is parsed, one function per kind over the one row loop of
//! `reader::rows`.

use super::Mapping;
use super::reader::{Reader, name, one_of, rows};
use super::table::normalise;
use fiscus_data_core::rules::records::*;
use fiscus_data_core::rules::values::{self, DateFormat};

/// The fields a kind reads: (name, required).
/// Every field of every kind, each once, in order: the names a column mapping may use.
pub fn all_fields() -> &'static [&'static str] {
    static ALL: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<&'static str> =
            fiscus_data_core::rules::Kind::ALL.iter().flat_map(|k| fields(*k).iter().map(|(f, _)| *f)).collect();
        all.sort_unstable();
        all.dedup();
        all
    })
}

pub fn fields(kind: fiscus_data_core::rules::Kind) -> &'static [(&'static str, bool)] {
    use fiscus_data_core::rules::Kind::*;
    match kind {
        Instruments => &[
            ("symbol", true),
            ("name", true),
            ("asset_class", true),
            ("currency", true),
            ("exchange", false),
            ("country", false),
            ("sector", false),
            ("isin", false),
        ],
        Prices => &[
            ("symbol", true),
            ("date", true),
            ("open", false),
            ("high", false),
            ("low", false),
            ("close", false),
            ("adj_close", false),
            ("volume", false),
        ],
        CorporateActions => &[
            ("symbol", true),
            ("type", true),
            ("ex_date", true),
            ("pay_date", false),
            ("ratio", false),
            ("amount", false),
            ("currency", false),
        ],
        Fundamentals => &[
            ("symbol", true),
            ("period_end", true),
            ("fiscal_period", true),
            ("metric", true),
            ("value", true),
            ("currency", false),
        ],
        Economics => &[("date", true)],
        Ledgers => &[("code", true), ("name", true), ("currency", true)],
        Entities => &[
            ("code", true),
            ("name", true),
            ("status", false),
            ("ledger", true),
            ("currency", true),
            ("country", false),
        ],
        Journals => &[
            ("entry", true),
            ("date", true),
            ("ledger", true),
            ("entity", true),
            ("account", true),
            ("description", false),
            ("debit", false),
            ("credit", false),
            ("currency", true),
        ],
        Transactions => &[
            ("account", true),
            ("id", true),
            ("booking_date", true),
            ("value_date", false),
            ("amount", true),
            ("currency", true),
            ("counterparty", false),
            ("description", false),
            ("reference", false),
        ],
        Balances => &[("account", true), ("date", true), ("type", true), ("amount", true), ("currency", true)],
        Portfolios => &[("code", true), ("name", true), ("base_currency", true), ("benchmark", false)],
        Lots => &[
            ("portfolio", true),
            ("lot", true),
            ("symbol", true),
            ("acquired", true),
            ("quantity", true),
            ("cost", true),
            ("currency", true),
        ],
        Positions => &[
            ("portfolio", true),
            ("symbol", true),
            ("as_of", true),
            ("quantity", true),
            ("cost", true),
            ("currency", true),
        ],
        Cash => &[
            ("portfolio", true),
            ("entry", true),
            ("date", true),
            ("amount", true),
            ("currency", true),
            ("description", false),
        ],
    }
}

pub fn instruments(r: &mut Reader<'_>) -> Vec<(u64, InstrumentRecord)> {
    rows(r, |r, row, _| {
        let symbol = r.required_parsed(row, "symbol", name);
        let name_ = r.required(row, "name");
        let asset_class = r.required_parsed(row, "asset_class", one_of(&ASSET_CLASSES));
        let currency = r.required_parsed(row, "currency", values::currency);
        let exchange = r.text(row, "exchange").unwrap_or_default();
        let country = r.text(row, "country").unwrap_or_default();
        let sector = r.text(row, "sector").unwrap_or_default();
        let isin = r.text(row, "isin").unwrap_or_default();
        let (Some(symbol), Some(name), Some(asset_class), Some(currency)) = (symbol, name_, asset_class, currency)
        else {
            return None;
        };
        Some(InstrumentRecord { symbol, name, asset_class, currency, exchange, country, sector, isin })
    })
}

/// Prices in long form (a row per symbol and date), or wide (`mapping.wide`: a date column, then one
/// column per symbol holding that field; an empty cell is a missing observation, never filled).
pub fn prices(r: &mut Reader<'_>, wide: Option<&str>) -> Vec<(u64, PriceRecord)> {
    let date_col = r.column("date");
    rows(r, |r, row, line| {
        let mut bars = Vec::new();
        let Some(date) = r.date(row, "date", true) else { return bars };
        match wide {
            Some(field) => {
                for (i, header) in r.table.headers.clone().iter().enumerate() {
                    if Some(i) == date_col {
                        continue;
                    }
                    let raw = match r.table.cell(row, i) {
                        Ok(s) => s.to_string(),
                        Err(e) => {
                            r.fail(e.line, header, e.message);
                            continue;
                        }
                    };
                    if raw.is_empty() {
                        continue;
                    }
                    match values::non_negative(&raw) {
                        Ok(v) => {
                            let mut bar = PriceRecord {
                                symbol: header.clone(),
                                date: date.clone(),
                                open: None,
                                high: None,
                                low: None,
                                close: None,
                                adj_close: None,
                                volume: None,
                            };
                            if field == "close" {
                                bar.close = Some(v);
                            } else {
                                bar.adj_close = Some(v);
                            }
                            bars.push(bar);
                        }
                        Err(m) => r.fail(line, header, m),
                    }
                }
            }
            None => {
                let symbol = r.required_parsed(row, "symbol", name);
                let mut bar = PriceRecord {
                    symbol: String::new(),
                    date,
                    open: r.parsed(row, "open", values::non_negative),
                    high: r.parsed(row, "high", values::non_negative),
                    low: r.parsed(row, "low", values::non_negative),
                    close: r.parsed(row, "close", values::non_negative),
                    adj_close: r.parsed(row, "adj_close", values::non_negative),
                    volume: r.parsed(row, "volume", values::non_negative),
                };
                if symbol.is_none() {
                    return bars;
                }
                if let Err((field, message)) = bar.check() {
                    let header = r.column(field).map_or(field.to_string(), |i| r.table.headers[i].clone());
                    r.fail(line, &header, message);
                    return bars;
                }
                bar.symbol = symbol.unwrap_or_default();
                // One bar: not the four a first push reserves.
                bars.reserve_exact(1);
                bars.push(bar);
            }
        }
        bars
    })
}

pub fn corporate_actions(r: &mut Reader<'_>) -> Vec<(u64, CorporateActionRecord)> {
    rows(r, |r, row, line| {
        let symbol = r.required_parsed(row, "symbol", name);
        let action = r.required_parsed(row, "type", |s| {
            CorporateActionType::parse(&s.to_ascii_lowercase())
                .ok_or_else(|| format!("`{s}` is not split or cash_dividend"))
        });
        let ex_date = r.date(row, "ex_date", true);
        let pay_date = r.date(row, "pay_date", false);
        let ratio = r.parsed(row, "ratio", values::non_negative);
        let amount = r.parsed(row, "amount", values::non_negative);
        let currency = r.parsed(row, "currency", values::currency);
        let (Some(symbol), Some(action), Some(ex_date)) = (symbol, action, ex_date) else { return None };
        match action {
            CorporateActionType::Split if ratio.as_deref().is_none_or(|v| v == "0") => {
                r.fail(line, "ratio", "a split needs a ratio above 0 (new shares per old share)");
                None
            }
            CorporateActionType::CashDividend if amount.is_none() || currency.is_none() => {
                r.fail(line, "amount", "a cash dividend needs an amount per share and a currency");
                None
            }
            _ => Some(CorporateActionRecord { symbol, action, ex_date, pay_date, ratio, amount, currency }),
        }
    })
}

pub fn fundamentals(r: &mut Reader<'_>) -> Vec<(u64, FundamentalRecord)> {
    rows(r, |r, row, _| {
        let symbol = r.required_parsed(row, "symbol", name);
        let period_end = r.date(row, "period_end", true);
        let fiscal_period = r.required_parsed(row, "fiscal_period", |s| {
            let up = s.to_ascii_uppercase();
            FISCAL_PERIODS
                .contains(&up.as_str())
                .then_some(up)
                .ok_or_else(|| format!("`{s}` is not one of {}", FISCAL_PERIODS.join(", ")))
        });
        let metric = r.required_parsed(row, "metric", |s| {
            let n = normalise(s);
            (!n.is_empty() && n.len() <= 64).then_some(n).ok_or_else(|| format!("`{s}` is not a metric name"))
        });
        let value = r.required_parsed(row, "value", values::decimal);
        let currency = r.parsed(row, "currency", values::currency);
        let (Some(symbol), Some(period_end), Some(fiscal_period), Some(metric), Some(value)) =
            (symbol, period_end, fiscal_period, metric, value)
        else {
            return None;
        };
        Some(FundamentalRecord { symbol, period_end, fiscal_period, metric, value, currency })
    })
}

/// Economic series in wide form: a date (or year and quarter) column, then one column per series. The
/// key of a series is `key_prefix` + its normalised header.
pub fn economics(r: &mut Reader<'_>, mapping: &Mapping) -> Vec<(u64, ObservationRecord)> {
    let quarter =
        mapping.columns.get("date").and_then(|d| d.split_once('+')).map(|(y, q)| (normalise(y), normalise(q)));
    let normalised: Vec<String> = r.table.headers.iter().map(|h| normalise(h)).collect();
    let (date_cols, quarter_cols): (Vec<usize>, Option<(usize, usize)>) = match &quarter {
        Some((y, q)) => match (normalised.iter().position(|h| h == y), normalised.iter().position(|h| h == q)) {
            (Some(yi), Some(qi)) => (vec![yi, qi], Some((yi, qi))),
            _ => {
                r.fail(1, "date", "the mapped year and quarter columns are not in the header");
                return Vec::new();
            }
        },
        None => (r.column("date").into_iter().collect(), None),
    };
    rows(r, |r, row, line| {
        let mut observations = Vec::new();
        let date = match quarter_cols {
            Some((yi, qi)) => {
                let y = r.table.cell(row, yi).unwrap_or_default().to_string();
                let q = r.table.cell(row, qi).unwrap_or_default().to_string();
                match DateFormat::quarter(&y, &q) {
                    Ok(d) => Some(d),
                    Err(m) => {
                        r.fail(line, &r.table.headers[yi].clone(), m);
                        None
                    }
                }
            }
            None => r.date(row, "date", true),
        };
        let Some(date) = date else { return observations };
        for (i, header) in r.table.headers.clone().iter().enumerate() {
            if date_cols.contains(&i) {
                continue;
            }
            let raw = r.table.cell(row, i).unwrap_or_default().to_string();
            if raw.is_empty() || raw == "." {
                // FRED writes a missing observation as `.`; missing stays missing.
                continue;
            }
            match values::decimal(&raw) {
                Ok(value) => observations.push(ObservationRecord {
                    key: format!("{}{}", mapping.key_prefix, normalise(header)),
                    date: date.clone(),
                    value,
                }),
                Err(m) => r.fail(line, header, m),
            }
        }
        observations
    })
}

pub fn ledgers(r: &mut Reader<'_>) -> Vec<(u64, LedgerRecord)> {
    rows(r, |r, row, _| {
        let code = r.required_parsed(row, "code", name);
        let name_ = r.required(row, "name");
        let currency = r.required_parsed(row, "currency", values::currency);
        let (Some(code), Some(name), Some(currency)) = (code, name_, currency) else { return None };
        Some(LedgerRecord { code, name, currency })
    })
}

pub fn entities(r: &mut Reader<'_>) -> Vec<(u64, EntityRecord)> {
    rows(r, |r, row, _| {
        let code = r.required_parsed(row, "code", name);
        let name_ = r.required(row, "name");
        let status = r.parsed(row, "status", one_of(&ENTITY_STATUSES)).unwrap_or_else(|| "active".into());
        let ledger = r.required_parsed(row, "ledger", name);
        let currency = r.required_parsed(row, "currency", values::currency);
        let country = r.text(row, "country").unwrap_or_default();
        let (Some(code), Some(name), Some(ledger), Some(currency)) = (code, name_, ledger, currency) else {
            return None;
        };
        Some(EntityRecord { code, name, status, ledger, currency, country })
    })
}

pub fn journal_lines(r: &mut Reader<'_>) -> Vec<(u64, JournalLineRecord)> {
    rows(r, |r, row, line| {
        let entry = r.required_parsed(row, "entry", name);
        let date = r.date(row, "date", true);
        let ledger = r.required_parsed(row, "ledger", name);
        let entity = r.required_parsed(row, "entity", name);
        let account = r.required_parsed(row, "account", name);
        let description = r.text(row, "description").unwrap_or_default();
        let currency = r.required_parsed(row, "currency", values::currency);
        let currency = currency?;
        let debit = r.parsed(row, "debit", |s| values::amount_minor(s, currency)).unwrap_or(0);
        let credit = r.parsed(row, "credit", |s| values::amount_minor(s, currency)).unwrap_or(0);
        if debit < 0 || credit < 0 || (debit == 0) == (credit == 0) {
            r.fail(line, "debit", "a line has either a debit or a credit, above zero");
            return None;
        }
        let (Some(entry), Some(date), Some(ledger), Some(entity), Some(account)) =
            (entry, date, ledger, entity, account)
        else {
            return None;
        };
        Some(JournalLineRecord {
            entry,
            date,
            ledger,
            entity,
            account,
            description,
            debit_minor: debit,
            credit_minor: credit,
            currency,
        })
    })
}

pub fn transactions(r: &mut Reader<'_>) -> Vec<(u64, TransactionRecord)> {
    rows(r, |r, row, _| {
        let account = r.required_parsed(row, "account", name);
        let external_id = r.required_parsed(row, "id", name);
        let booking_date = r.date(row, "booking_date", true);
        let value_date = r.date(row, "value_date", false);
        let currency = r.required_parsed(row, "currency", values::currency);
        let currency = currency?;
        let amount = r.required_parsed(row, "amount", |s| values::amount_minor(s, currency));
        let counterparty = r.text(row, "counterparty").unwrap_or_default();
        let description = r.text(row, "description").unwrap_or_default();
        let reference = r.text(row, "reference").unwrap_or_default();
        let (Some(account), Some(external_id), Some(booking_date), Some(amount_minor)) =
            (account, external_id, booking_date, amount)
        else {
            return None;
        };
        Some(TransactionRecord {
            account,
            external_id,
            value_date: value_date.unwrap_or_else(|| booking_date.clone()),
            booking_date,
            amount_minor,
            currency,
            counterparty,
            description,
            reference,
        })
    })
}

pub fn balances(r: &mut Reader<'_>) -> Vec<(u64, BalanceRecord)> {
    rows(r, |r, row, _| {
        let account = r.required_parsed(row, "account", name);
        let date = r.date(row, "date", true);
        let balance_type = r.required_parsed(row, "type", |s| one_of(&BALANCE_TYPES)(&normalise(s)));
        let currency = r.required_parsed(row, "currency", values::currency);
        let currency = currency?;
        let amount = r.required_parsed(row, "amount", |s| values::amount_minor(s, currency));
        let (Some(account), Some(date), Some(balance_type), Some(amount_minor)) = (account, date, balance_type, amount)
        else {
            return None;
        };
        Some(BalanceRecord { account, date, balance_type, amount_minor, currency })
    })
}
