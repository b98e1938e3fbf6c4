//! The portfolio book: imported rows read in both environments, a
//! settlement's rows only in its own, open quantities net of disposals, every read inside its workspace,
//! and unknown stored values refused.

use crate::helpers::*;
use fiscus_data_core::book::LotOrigin;
use fiscus_data_core::tables::book::{self, NewCash, NewLot, NewPortfolio};
use fiscus_domain::ids::new_id;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::Store;

fn usd() -> Currency {
    Currency::parse("USD").expect("USD")
}

/// A workspace with instrument `AAPL`, portfolio `P1` (its id returned) holding lot `L1` of 10 units, and
/// cash of 1,000.00 USD.
async fn booked(db: &Store, t: &Tenant) -> (i64, String) {
    let ws = &t.workspace_id;
    let mut conn = db.read().await.expect("conn");
    sqlx::query("INSERT INTO instruments (workspace_id, id, symbol, created_at) VALUES ($1, 'ins_aapl', 'AAPL', 1)")
        .bind(ws)
        .execute(&mut *conn)
        .await
        .expect("instrument");
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    let mut lines = Vec::new();
    let p = NewPortfolio {
        code: "P1",
        name: "Portfolio one",
        base_currency: usd(),
        benchmark_symbol: Some("SPX"),
        fingerprint: "fp".into(),
    };
    book::insert_portfolios(&mut tx, ws, 1, &[p], &mut lines).await.expect("portfolio");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let id = book::portfolio_codes(&mut conn, ws).await.expect("codes")["P1"].id;
    drop(conn);
    let lot_id = new_id("tlt");
    let lot = NewLot {
        id: lot_id.clone(),
        portfolio_id: id,
        lot: "L1".into(),
        instrument_id: "ins_aapl".into(),
        acquired: "2022-01-03".into(),
        quantity_micros: 10_000_000,
        cost_minor: 100_000,
        currency: usd(),
        origin: LotOrigin::Lot,
        fingerprint: "fp-lot".into(),
    };
    let cash = NewCash {
        id: new_id("pcm"),
        portfolio_id: id,
        entry: "C1".into(),
        date: "2022-01-03".into(),
        amount_minor: 100_000,
        currency: usd(),
        description: "opening".into(),
        fingerprint: "fp-cash".into(),
    };
    let mut tx = db.begin().await.expect("begin");
    book::insert_lots(&mut tx, ws, 2, &[lot], &mut lines).await.expect("lot");
    book::insert_cash(&mut tx, ws, 3, &[cash], &mut lines).await.expect("cash");
    tx.commit().await.expect("commit");
    assert_eq!(lines.len(), 3, "every row gives the dataset a line");
    (id, lot_id)
}

#[tokio::test]
async fn the_book_reads_open_lots_net_of_disposals_in_each_environment_and_stays_in_its_workspace() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (id, lot_id) = booked(&db, &t).await;
    let mut conn = db.read().await.expect("conn");
    let p = book::get_portfolio(&mut conn, &t.workspace_id, id).await.expect("portfolio");
    assert_eq!((p.code.as_str(), p.base_currency, p.benchmark_symbol.as_deref()), ("P1", usd(), Some("SPX")));
    assert_eq!(book::list_portfolios(&mut conn, &t.workspace_id, 0, 10).await.expect("list").len(), 1);
    assert!(book::list_portfolios(&mut conn, &t.workspace_id, id, 10).await.expect("list").is_empty());
    assert_eq!(book::lot_fingerprints(&mut conn, &t.workspace_id).await.expect("fp")[&format!("{id}/L1")], "fp-lot");
    assert_eq!(book::cash_fingerprints(&mut conn, &t.workspace_id).await.expect("fp")[&format!("{id}/C1")], "fp-cash");
    // A sandbox sale of 4 units: the sandbox sees 6 open, production still 10.
    sqlx::query(
        "INSERT INTO lot_disposals (workspace_id, id, lot_id, portfolio_id, disposed, quantity_micros, cost_minor, \
         proceeds_minor, term, environment, source, created_at) \
         VALUES ($1, 'ldp_1', $2, $3, '2022-06-01', 4000000, 40000, 50000, 'short', 'sandbox', 'act_1', 1)",
    )
    .bind(&t.workspace_id)
    .bind(&lot_id)
    .bind(id)
    .execute(&mut *conn)
    .await
    .expect("disposal");
    let open = book::open_lots(&mut conn, &t, id, None).await.expect("lots");
    assert_eq!((open[0].open_micros, open[0].open_cost_minor, open[0].symbol.as_str()), (6_000_000, 60_000, "AAPL"));
    let production = production(&t.workspace_id);
    assert_eq!(book::open_lots(&mut conn, &production, id, None).await.expect("lots")[0].open_micros, 10_000_000);
    assert_eq!(book::cash_balances(&mut conn, &t, id, None).await.expect("cash"), vec![(usd(), 100_000)]);
    // Another workspace sees nothing of it.
    let other = tenant(&db).await;
    assert_not_found(book::get_portfolio(&mut conn, &other.workspace_id, id).await);
    assert!(book::open_lots(&mut conn, &other, id, None).await.expect("lots").is_empty());
    assert!(book::cash_balances(&mut conn, &other, id, None).await.expect("cash").is_empty());
    assert!(book::portfolio_codes(&mut conn, &other.workspace_id).await.expect("codes").is_empty());
    drop(conn);
    // A lot closed for more than it held, or an unknown origin or currency, is refused, never read.
    exec(&db, "UPDATE lot_disposals SET quantity_micros = 11000000 WHERE id = $1", "ldp_1").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(book::open_lots(&mut conn, &t, id, None).await, &lot_id);
    drop(conn);
    exec(&db, "DELETE FROM lot_disposals WHERE id = $1", "ldp_1").await;
    force(&db, "tax_lots", "origin", &lot_id, "gift").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(book::open_lots(&mut conn, &t, id, None).await, "origin");
    drop(conn);
    exec(&db, "UPDATE portfolios SET base_currency = 'XXX' WHERE code = $1", "P1").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(book::get_portfolio(&mut conn, &t.workspace_id, id).await, "base_currency");
}

/// One random history's ledger, kept the plain way: every lot with its acquisition, every disposal and every
/// cash movement with its date, in the order they settled.
#[derive(Default)]
struct Ledger {
    /// (lot id, acquired day, quantity, cost)
    lots: Vec<(String, u32, i64, i64)>,
    /// (lot id, disposed day, quantity, cost)
    disposals: Vec<(String, u32, i64, i64)>,
    /// (day, amount)
    cash: Vec<(u32, i64)>,
}

impl Ledger {
    /// What each lot held at the end of `day`: acquired on or before it, less what was disposed of on or
    /// before it; lots fully closed are not open. (lot id, open quantity, open cost), by lot id.
    fn open_on(&self, day: u32) -> Vec<(String, i64, i64)> {
        let mut out: Vec<(String, i64, i64)> = self
            .lots
            .iter()
            .filter(|(_, acquired, _, _)| *acquired <= day)
            .map(|(id, _, q, c)| {
                let gone = self.disposals.iter().filter(|(l, d, _, _)| l == id && *d <= day);
                let (dq, dc) = gone.fold((0, 0), |(q, c), (_, _, dq, dc)| (q + dq, c + dc));
                (id.clone(), q - dq, c - dc)
            })
            .filter(|(_, open, _)| *open != 0)
            .collect();
        out.sort();
        out
    }

    fn cash_on(&self, day: u32) -> Option<i64> {
        let dated: Vec<i64> = self.cash.iter().filter(|(d, _)| *d <= day).map(|(_, a)| *a).collect();
        (!dated.is_empty()).then(|| dated.iter().sum())
    }
}

fn day(d: u32) -> String {
    format!("2024-01-{:02}", d + 1)
}

/// The book as of any date is the book that existed then (issue 55): over 1,000 random histories of buys and
/// FIFO sells settling on random days (several on one day, sales of lots bought the same day), the lots and
/// cash read as of every day equal a plain replay of the ledger up to that day, and nothing after it.
#[tokio::test]
async fn the_book_as_of_any_day_is_the_replay_of_every_trade_settled_by_then() {
    use rand::{Rng, SeedableRng};
    const HISTORIES: usize = 1_000;
    const DAYS: u32 = 20;
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = &t.workspace_id;
    exec(&db, "INSERT INTO instruments (workspace_id, id, symbol, created_at) VALUES ($1, 'ins_x', 'X', 1)", ws).await;
    let codes: Vec<String> = (0..HISTORIES).map(|h| format!("H{h}")).collect();
    let portfolios: Vec<NewPortfolio> = codes
        .iter()
        .map(|c| NewPortfolio {
            code: c,
            name: c,
            base_currency: usd(),
            benchmark_symbol: None,
            fingerprint: c.clone(),
        })
        .collect();
    let mut tx = db.begin().await.expect("begin");
    book::insert_portfolios(&mut tx, ws, 1, &portfolios, &mut Vec::<String>::new()).await.expect("portfolios");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let ids = book::portfolio_codes(&mut conn, ws).await.expect("codes");
    drop(conn);
    let mut rng = rand::rngs::StdRng::seed_from_u64(20_261_207);
    let (mut sells, mut same_day_sells) = (0, 0);
    for code in &codes {
        let portfolio_id = ids[code.as_str()].id;
        let mut trades: Vec<(u32, bool, i64)> = (0..rng.gen_range(1..=10))
            .map(|_| (rng.gen_range(0..DAYS), rng.gen_bool(0.6), rng.gen_range(1..=50) * 1_000_000))
            .collect();
        trades.sort_by_key(|(d, _, _)| *d);
        let mut ledger = Ledger::default();
        let mut tx = db.begin().await.expect("begin");
        for (k, (d, buy, quantity)) in trades.into_iter().enumerate() {
            let date = day(d);
            if buy {
                let id = new_id("tlt");
                let cost = quantity / 1_000_000 * rng.gen_range(900..1_100);
                let lot = book::TradeLot {
                    id: id.clone(),
                    portfolio_id,
                    lot: format!("T{k}"),
                    instrument_id: "ins_x",
                    acquired: &date,
                    quantity_micros: quantity,
                    cost_minor: cost,
                    currency: usd(),
                };
                book::insert_trade_lot(&mut tx, &t, &lot).await.expect("lot");
                book::insert_trade_cash(&mut tx, &t, portfolio_id, &format!("B{k}"), &date, -cost, usd(), "buy")
                    .await
                    .expect("cash");
                ledger.lots.push((id, d, quantity, cost));
                ledger.cash.push((d, -cost));
                continue;
            }
            // A FIFO sale of what is open now (every earlier trade has settled), lot by lot.
            let mut left = quantity;
            for (id, open, open_cost) in ledger.open_on(d) {
                if left == 0 {
                    break;
                }
                let q = left.min(open);
                let cost = open_cost * (q / 1_000_000) / (open / 1_000_000);
                let disposal = book::Disposal {
                    lot_id: &id,
                    portfolio_id,
                    disposed: &date,
                    quantity_micros: q,
                    cost_minor: cost,
                    proceeds_minor: cost,
                    term: "short",
                    source: "act_test",
                    at: 1,
                };
                book::insert_disposal(&mut tx, &t, &disposal).await.expect("disposal");
                sells += 1;
                same_day_sells += usize::from(ledger.lots.iter().any(|(l, a, _, _)| *l == id && *a == d));
                ledger.disposals.push((id, d, q, cost));
                left -= q;
            }
            let proceeds = (quantity - left) / 1_000_000 * 1_000;
            if proceeds > 0 {
                book::insert_trade_cash(&mut tx, &t, portfolio_id, &format!("S{k}"), &date, proceeds, usd(), "sale")
                    .await
                    .expect("cash");
                ledger.cash.push((d, proceeds));
            }
        }
        tx.commit().await.expect("commit");
        let mut conn = db.read().await.expect("conn");
        for d in 0..=DAYS {
            let on = day(d);
            let read = book::open_lots(&mut conn, &t, portfolio_id, Some(&on)).await.expect("lots");
            let mut read: Vec<(String, i64, i64)> =
                read.into_iter().map(|l| (l.id, l.open_micros, l.open_cost_minor)).collect();
            read.sort();
            assert_eq!(read, ledger.open_on(d), "{code} as of {on}");
            let cash = book::cash_balances(&mut conn, &t, portfolio_id, Some(&on)).await.expect("cash");
            assert_eq!(cash.first().map(|(_, a)| *a), ledger.cash_on(d), "{code} cash as of {on}");
        }
        // Without a date: everything recorded.
        let all = book::open_lots(&mut conn, &t, portfolio_id, None).await.expect("lots");
        assert_eq!(all.len(), ledger.open_on(DAYS).len(), "{code}");
    }
    assert!(
        sells > 1_000 && same_day_sells > 50,
        "the histories sell, also on the day of purchase: {sells}, {same_day_sells}"
    );
}
