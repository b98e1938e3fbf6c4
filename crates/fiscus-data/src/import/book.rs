//! The portfolio book's kinds: `portfolios`, then `lots`, `positions` and `cash`, which name a portfolio
//! by code (imported first, as journals name their ledger). Each row is checked alone (kinds.rs's
//! `Reader`), then against the file and what is stored: a key once per file, a portfolio and an
//! instrument that exist, a lot in the instrument's own currency, and a row imported before skipped when
//! unchanged and refused when changed.

use super::reader::{Reader, name};
use super::write::{Body, once};
use fiscus_data_core::book::{CashRecord, LotOrigin, LotRecord, PortfolioRecord, position_lot, quantity_micros};
use fiscus_data_core::rules::Kind;
use fiscus_data_core::rules::records::fingerprint;
use fiscus_data_core::rules::values;
use fiscus_data_core::tables::book::{self, NewCash, NewLot};
use fiscus_data_core::tables::market;
use fiscus_store::Connection as AnyConnection;
use std::collections::HashMap;

fn portfolios(r: &mut Reader<'_>) -> Vec<(u64, PortfolioRecord)> {
    let mut out = Vec::new();
    for row in 0..r.table.len() {
        if r.full() {
            break;
        }
        let line = r.table.line(row);
        let code = r.required_parsed(row, "code", name);
        let name_ = r.required(row, "name");
        let base_currency = r.required_parsed(row, "base_currency", values::currency);
        let benchmark_symbol = r.parsed(row, "benchmark", name);
        if let (Some(code), Some(name), Some(base_currency)) = (code, name_, base_currency) {
            out.push((line, PortfolioRecord { code, name, base_currency, benchmark_symbol }));
        }
    }
    out
}

/// Lots, or (`positions`) holdings each read as one lot acquired on its `as_of` date.
fn lots(r: &mut Reader<'_>, kind: Kind) -> Vec<(u64, LotRecord)> {
    let positions = kind == Kind::Positions;
    let mut out = Vec::new();
    for row in 0..r.table.len() {
        if r.full() {
            break;
        }
        let line = r.table.line(row);
        let portfolio = r.required_parsed(row, "portfolio", name);
        let symbol = r.required_parsed(row, "symbol", name);
        let lot = if positions { None } else { r.required_parsed(row, "lot", name) };
        let acquired = r.date(row, if positions { "as_of" } else { "acquired" }, true);
        let quantity = r.required_parsed(row, "quantity", quantity_micros);
        let currency = r.required_parsed(row, "currency", values::currency);
        let Some(currency) = currency else { continue };
        let cost = r.required_parsed(row, "cost", |s| match values::amount_minor(s, currency) {
            Ok(v) if v < 0 => Err(format!("`{s}` is negative: a cost basis is zero or more")),
            other => other,
        });
        let (Some(portfolio), Some(symbol), Some(acquired), Some(quantity_micros), Some(cost_minor)) =
            (portfolio, symbol, acquired, quantity, cost)
        else {
            continue;
        };
        let lot = match lot {
            Some(l) => l,
            None if positions => position_lot(&symbol, &acquired),
            None => continue,
        };
        out.push((line, LotRecord { portfolio, lot, symbol, acquired, quantity_micros, cost_minor, currency }));
    }
    out
}

fn cash(r: &mut Reader<'_>) -> Vec<(u64, CashRecord)> {
    let mut out = Vec::new();
    for row in 0..r.table.len() {
        if r.full() {
            break;
        }
        let line = r.table.line(row);
        let portfolio = r.required_parsed(row, "portfolio", name);
        let entry = r.required_parsed(row, "entry", name);
        let date = r.date(row, "date", true);
        let currency = r.required_parsed(row, "currency", values::currency);
        let Some(currency) = currency else { continue };
        let amount = r.required_parsed(row, "amount", |s| match values::amount_minor(s, currency) {
            Ok(0) => Err("a cash movement is not zero".to_string()),
            other => other,
        });
        let description = r.text(row, "description").unwrap_or_default();
        if let (Some(portfolio), Some(entry), Some(date), Some(amount_minor)) = (portfolio, entry, date, amount) {
            out.push((line, CashRecord { portfolio, entry, date, amount_minor, currency, description }));
        }
    }
    out
}

fn refused_change(what: String) -> String {
    format!("{what} was imported before with other values; imported rows are never changed")
}

/// The rows of a book kind to write; `skipped` counts rows already imported unchanged.
pub async fn plan(
    conn: &mut AnyConnection,
    workspace_id: &str,
    kind: Kind,
    r: &mut Reader<'_>,
    skipped: &mut usize,
) -> Result<Body, fiscus_store::StoreError> {
    if kind == Kind::Portfolios {
        let existing = book::portfolio_codes(conn, workspace_id).await?;
        let mut seen = HashMap::new();
        let mut out = Vec::new();
        for (line, p) in portfolios(r) {
            if !once(r, &mut seen, p.code.clone(), line, "code", || format!("portfolio `{}`", p.code)) {
                continue;
            }
            let fp =
                fingerprint(&[&p.code, &p.name, p.base_currency.code(), p.benchmark_symbol.as_deref().unwrap_or("")]);
            match existing.get(&p.code) {
                Some(x) if x.fingerprint == fp => *skipped += 1,
                Some(_) => r.fail(line, "code", refused_change(format!("portfolio `{}`", p.code))),
                None => out.push((p, fp)),
            }
        }
        return Ok(Body::Portfolios(out));
    }
    let codes = book::portfolio_codes(conn, workspace_id).await?;
    let portfolio_of = |r: &mut Reader<'_>, line: u64, code: &str| match codes.get(code) {
        Some(p) => Some(p.id),
        None => {
            r.fail(line, "portfolio", format!("no portfolio `{code}` in this workspace (import portfolios first)"));
            None
        }
    };
    if kind == Kind::Cash {
        let existing = book::cash_fingerprints(conn, workspace_id).await?;
        let mut seen = HashMap::new();
        let mut out = Vec::new();
        for (line, c) in cash(r) {
            let Some(portfolio_id) = portfolio_of(r, line, &c.portfolio) else { continue };
            let key = format!("{portfolio_id}/{}", c.entry);
            if !once(r, &mut seen, key.clone(), line, "entry", || {
                format!("cash entry `{}` of portfolio `{}`", c.entry, c.portfolio)
            }) {
                continue;
            }
            let amount = c.amount_minor.to_string();
            let fp = fingerprint(&[&c.portfolio, &c.entry, &c.date, &amount, c.currency.code(), &c.description]);
            match existing.get(&key) {
                Some(x) if *x == fp => *skipped += 1,
                Some(_) => r.fail(line, "entry", refused_change(format!("cash entry `{}`", c.entry))),
                None => out.push(NewCash {
                    id: fiscus_domain::ids::new_id("pcm"),
                    portfolio_id,
                    entry: c.entry,
                    date: c.date,
                    amount_minor: c.amount_minor,
                    currency: c.currency,
                    description: c.description,
                    fingerprint: fp,
                }),
            }
        }
        return Ok(Body::Cash(out));
    }
    // Lots and positions.
    let instruments = market::instruments_by_symbol(conn, workspace_id).await?;
    let existing = book::lot_fingerprints(conn, workspace_id).await?;
    let origin = if kind == Kind::Positions { LotOrigin::Position } else { LotOrigin::Lot };
    let (key_column, what) = if kind == Kind::Positions { ("symbol", "holding") } else { ("lot", "lot") };
    let mut seen = HashMap::new();
    let mut out = Vec::new();
    for (line, l) in lots(r, kind) {
        let Some(portfolio_id) = portfolio_of(r, line, &l.portfolio) else { continue };
        let Some(instrument) = instruments.get(&l.symbol) else {
            r.fail(
                line,
                "symbol",
                format!(
                    "no instrument `{}` in this workspace (import its reference data first: fiscus import instruments)",
                    l.symbol
                ),
            );
            continue;
        };
        if instrument.currency != l.currency.code() {
            r.fail(
                line,
                "currency",
                format!(
                    "`{}` is quoted in {}: a lot's cost is in its instrument's currency",
                    l.symbol, instrument.currency
                ),
            );
            continue;
        }
        let key = format!("{portfolio_id}/{}", l.lot);
        if !once(r, &mut seen, key.clone(), line, key_column, || {
            format!("{what} `{}` of portfolio `{}`", l.lot, l.portfolio)
        }) {
            continue;
        }
        let (quantity, cost) = (l.quantity_micros.to_string(), l.cost_minor.to_string());
        let fp = fingerprint(&[
            &l.portfolio,
            &l.lot,
            &l.symbol,
            &l.acquired,
            &quantity,
            &cost,
            l.currency.code(),
            origin.as_str(),
        ]);
        match existing.get(&key) {
            Some(x) if *x == fp => *skipped += 1,
            Some(_) => r.fail(line, key_column, refused_change(format!("{what} `{}`", l.lot))),
            None => out.push(NewLot {
                id: fiscus_domain::ids::new_id("tlt"),
                portfolio_id,
                lot: l.lot,
                instrument_id: instrument.id.clone(),
                acquired: l.acquired,
                quantity_micros: l.quantity_micros,
                cost_minor: l.cost_minor,
                currency: l.currency,
                origin,
                fingerprint: fp,
            }),
        }
    }
    Ok(Body::Lots(out))
}
