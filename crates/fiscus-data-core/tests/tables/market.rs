//! Market data: an instrument keeps one identity across instruments datasets and reads its newest reference
//! data; bars, corporate actions and fundamentals read from one dataset in their order, inside their window
//! and after their cursor; each import's lines are its stored rows; another workspace sees none of it.

use crate::helpers::*;
use fiscus_data_core::rules::Kind;
use fiscus_data_core::rules::records::{
    CorporateActionRecord, CorporateActionType, FundamentalRecord, InstrumentRecord, PriceRecord,
};
use fiscus_data_core::tables as data;
use fiscus_data_core::tables::market::{self, Bar, CorporateAction, Fundamental, InstrumentFilter, Rows, Window};
use fiscus_domain::money::Currency;
use fiscus_store::Connection;
use fiscus_store::Store;

fn currency(code: &str) -> Currency {
    Currency::parse(code).expect("currency")
}

fn instrument(symbol: &str, name: &str, asset_class: &str, code: &str, exchange: &str) -> InstrumentRecord {
    InstrumentRecord {
        symbol: symbol.into(),
        name: name.into(),
        asset_class: asset_class.into(),
        currency: currency(code),
        exchange: exchange.into(),
        country: "US".into(),
        sector: "Technology".into(),
        isin: format!("US{symbol}0001"),
    }
}

/// Imports instruments as dataset `number`: the lines it produced.
async fn import_instruments(db: &Store, ws: &str, number: i64, records: &[InstrumentRecord], at: i64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut tx = db.begin().await.expect("begin");
    market::insert_instruments(&mut tx, ws, number, records, at, &mut lines).await.expect("instruments");
    tx.commit().await.expect("commit");
    lines
}

/// AAPL and SAP equities as dataset 1, then AAPL as an ETF in dataset 2: AAPL's and SAP's ids.
async fn two_instruments(db: &Store, ws: &str) -> (String, String) {
    let first =
        [instrument("AAPL", "Apple", "equity", "USD", "XNAS"), instrument("SAP", "SAP SE", "equity", "EUR", "XETR")];
    import_instruments(db, ws, 1, &first, NOW).await;
    import_instruments(db, ws, 2, &[instrument("AAPL", "Apple Inc.", "etf", "USD", "XNAS")], NOW + 10).await;
    let mut conn = db.read().await.expect("conn");
    let ids = market::ids_by_symbol(&mut conn, ws).await.expect("ids");
    (ids["AAPL"].clone(), ids["SAP"].clone())
}

fn bar(date: &str, close: &str) -> PriceRecord {
    PriceRecord {
        symbol: "AAPL".into(),
        date: date.into(),
        open: Some("10".into()),
        high: Some("12".into()),
        low: Some("9".into()),
        close: Some(close.into()),
        adj_close: None,
        volume: Some("1000".into()),
    }
}

fn stored_bar(date: &str, close: &str) -> Bar {
    Bar {
        date: date.into(),
        open: Some("10".into()),
        high: Some("12".into()),
        low: Some("9".into()),
        close: Some(close.into()),
        adj_close: None,
        volume: Some("1000".into()),
    }
}

async fn instrument_ids(
    conn: &mut Connection,
    ws: &str,
    filter: InstrumentFilter<'_>,
    after: Option<&str>,
    limit: u32,
) -> Vec<String> {
    market::list_instruments(conn, ws, &filter, after, limit).await.expect("list").into_iter().map(|i| i.id).collect()
}

async fn bar_dates(conn: &mut Connection, ws: &str, id: &str, window: Window<'_>, limit: u32) -> Vec<String> {
    market::bars(conn, ws, id, 3, window, limit).await.expect("bars").into_iter().map(|b| b.date).collect()
}

async fn action_keys(
    conn: &mut Connection,
    ws: &str,
    id: &str,
    action: Option<&str>,
    window: Window<'_>,
    limit: u32,
) -> Vec<String> {
    market::corporate_actions(conn, ws, id, 5, action, window, limit)
        .await
        .expect("actions")
        .into_iter()
        .map(|a| format!("{}_{}", a.ex_date, a.action))
        .collect()
}

async fn figure_keys(
    conn: &mut Connection,
    ws: &str,
    id: &str,
    metric: Option<&str>,
    fiscal_period: Option<&str>,
    window: Window<'_>,
    limit: u32,
) -> Vec<String> {
    market::fundamentals(conn, ws, id, 6, metric, fiscal_period, window, limit)
        .await
        .expect("fundamentals")
        .into_iter()
        .map(|f| format!("{}_{}_{}", f.period_end, f.fiscal_period, f.metric))
        .collect()
}

#[tokio::test]
async fn an_instrument_keeps_its_identity_across_datasets_and_reads_its_newest_reference_data() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = &t.workspace_id;
    let first =
        [instrument("AAPL", "Apple", "equity", "USD", "XNAS"), instrument("SAP", "SAP SE", "equity", "EUR", "XETR")];
    let lines = import_instruments(&db, ws, 1, &first, NOW).await;
    assert_eq!(lines.len(), 2, "one line per reference row, none for the identities");
    let mut conn = db.read().await.expect("conn");
    assert_eq!(
        data::recompute_content_hash(&mut conn, ws, Kind::Instruments, 1, data::Sealing::Lines)
            .await
            .expect("recompute"),
        data::content_hash(lines),
        "the lines are the stored rows"
    );
    let before = market::ids_by_symbol(&mut conn, ws).await.expect("ids");
    drop(conn);
    import_instruments(&db, ws, 2, &[instrument("AAPL", "Apple Inc.", "etf", "USD", "XNAS")], NOW + 10).await;
    let mut conn = db.read().await.expect("conn");
    let after = market::ids_by_symbol(&mut conn, ws).await.expect("ids");
    assert_eq!(after, before, "a known symbol keeps its identity");
    assert_eq!(after.len(), 2);
    assert!(fiscus_domain::ids::is_id_of("ins", &after["AAPL"]));
    let aapl = market::get_instrument(&mut conn, ws, &after["AAPL"]).await.expect("by id");
    let expected = market::Instrument {
        id: after["AAPL"].clone(),
        symbol: "AAPL".into(),
        dataset_number: 2,
        name: "Apple Inc.".into(),
        asset_class: "etf".into(),
        currency: "USD".into(),
        exchange: "XNAS".into(),
        country: "US".into(),
        sector: "Technology".into(),
        isin: "USAAPL0001".into(),
        created_at: NOW,
    };
    assert_eq!(aapl, expected, "the newest reference data, the identity's first creation time");
    assert_eq!(market::get_instrument(&mut conn, ws, "AAPL").await.expect("by symbol"), expected);
    assert_not_found(market::get_instrument(&mut conn, ws, "MSFT").await);
    let by_symbol = market::instruments_by_symbol(&mut conn, ws).await.expect("by symbol");
    assert_eq!(by_symbol.len(), 2);
    assert_eq!(by_symbol["AAPL"], expected);
    assert_eq!((by_symbol["SAP"].dataset_number, by_symbol["SAP"].currency.as_str()), (1, "EUR"));
    // Another workspace sees none of it, and its own AAPL is another identity.
    let other = workspace(&db).await;
    assert!(market::ids_by_symbol(&mut conn, &other).await.expect("ids").is_empty());
    assert!(market::instruments_by_symbol(&mut conn, &other).await.expect("by symbol").is_empty());
    assert_not_found(market::get_instrument(&mut conn, &other, &after["AAPL"]).await);
    assert_not_found(market::get_instrument(&mut conn, &other, "AAPL").await);
    let all = InstrumentFilter::default();
    assert!(market::list_instruments(&mut conn, &other, &all, None, 10).await.expect("list").is_empty());
    drop(conn);
    import_instruments(&db, &other, 3, &[instrument("AAPL", "Apple", "equity", "USD", "XNAS")], NOW).await;
    let mut conn = db.read().await.expect("conn");
    assert_ne!(market::ids_by_symbol(&mut conn, &other).await.expect("ids")["AAPL"], after["AAPL"]);
    assert_eq!(market::get_instrument(&mut conn, ws, "AAPL").await.expect("own").dataset_number, 2);
}

#[tokio::test]
async fn instruments_list_by_id_with_exact_filters_and_a_cursor() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = &t.workspace_id;
    let (aapl, sap) = two_instruments(&db, ws).await;
    let mut sorted = vec![aapl.clone(), sap.clone()];
    sorted.sort();
    let mut conn = db.read().await.expect("conn");
    let all = InstrumentFilter::default;
    assert_eq!(instrument_ids(&mut conn, ws, all(), None, 10).await, sorted);
    assert_eq!(instrument_ids(&mut conn, ws, all(), None, 0).await, sorted[..1].to_vec(), "limit + 1 rows");
    assert_eq!(instrument_ids(&mut conn, ws, all(), Some(&sorted[0]), 10).await, sorted[1..].to_vec());
    let euro = InstrumentFilter { currency: Some("EUR"), ..all() };
    assert_eq!(instrument_ids(&mut conn, ws, euro, None, 10).await, vec![sap.clone()]);
    let symbol = InstrumentFilter { symbol: Some("AAPL"), ..all() };
    assert_eq!(instrument_ids(&mut conn, ws, symbol, None, 10).await, vec![aapl.clone()]);
    let xetra_equity = InstrumentFilter { exchange: Some("XETR"), asset_class: Some("equity"), ..all() };
    assert_eq!(instrument_ids(&mut conn, ws, xetra_equity, None, 10).await, vec![sap.clone()]);
    let bonds = InstrumentFilter { asset_class: Some("bond"), ..all() };
    assert!(instrument_ids(&mut conn, ws, bonds, None, 10).await.is_empty());
    // The filters match the newest reference data only: AAPL's dataset 2 made it an ETF.
    let equities = InstrumentFilter { asset_class: Some("equity"), ..all() };
    assert_eq!(instrument_ids(&mut conn, ws, equities, None, 10).await, vec![sap.clone()]);
    let etfs = InstrumentFilter { asset_class: Some("etf"), ..all() };
    assert_eq!(instrument_ids(&mut conn, ws, etfs, None, 10).await, vec![aapl]);
}

#[tokio::test]
async fn bars_read_from_one_dataset_in_date_order_inside_their_window() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = &t.workspace_id;
    let (aapl, sap) = two_instruments(&db, ws).await;
    let days = ["2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"];
    // Dataset 3 in an order that is not the dates'; dataset 4 one newer bar.
    let bars: Vec<(String, PriceRecord)> =
        days.iter().rev().enumerate().map(|(i, d)| (aapl.clone(), bar(d, &format!("{}", 11 - i)))).collect();
    let mut lines = Vec::new();
    let mut tx = db.begin().await.expect("begin");
    market::insert_prices(&mut tx, ws, 3, &bars, &mut lines).await.expect("prices");
    market::insert_prices(&mut tx, ws, 4, &[(aapl.clone(), bar("2024-02-01", "11.5"))], &mut Vec::new())
        .await
        .expect("prices");
    tx.commit().await.expect("commit");
    assert_eq!(lines.len(), 5);
    let mut conn = db.read().await.expect("conn");
    assert_eq!(
        data::recompute_content_hash(&mut conn, ws, Kind::Prices, 3, data::Sealing::Lines).await.expect("hash"),
        data::content_hash(lines)
    );
    assert_eq!(market::datasets_for(&mut conn, ws, Rows::Prices, &aapl).await.expect("datasets"), vec![4, 3]);
    assert_eq!(market::latest_dataset(&mut conn, ws, Rows::Prices, &aapl).await.expect("latest"), Some(4));
    assert!(market::datasets_for(&mut conn, ws, Rows::Prices, &sap).await.expect("datasets").is_empty());
    assert_eq!(market::latest_dataset(&mut conn, ws, Rows::Prices, &sap).await.expect("latest"), None);
    assert_eq!(market::latest_dataset(&mut conn, ws, Rows::Fundamentals, &aapl).await.expect("latest"), None);
    assert_eq!(market::last_bar(&mut conn, ws, &aapl, 3).await.expect("last"), Some(stored_bar("2024-01-08", "11")));
    assert_eq!(market::last_bar(&mut conn, ws, &aapl, 4).await.expect("last"), Some(stored_bar("2024-02-01", "11.5")));
    assert_eq!(market::last_bar(&mut conn, ws, &aapl, 9).await.expect("last"), None);
    let all = market::bars(&mut conn, ws, &aapl, 3, Window::default(), 10).await.expect("bars");
    assert_eq!(all.iter().map(|b| b.date.as_str()).collect::<Vec<_>>(), days.to_vec(), "date order");
    assert_eq!(all[0], stored_bar("2024-01-02", "7"));
    assert_eq!(bar_dates(&mut conn, ws, &aapl, Window::default(), 1).await, ["2024-01-02", "2024-01-03"], "limit + 1");
    let inside = Window { from: Some("2024-01-03"), to: Some("2024-01-05"), after: None };
    assert_eq!(bar_dates(&mut conn, ws, &aapl, inside, 10).await, ["2024-01-03", "2024-01-04", "2024-01-05"]);
    let cursor = Window { from: Some("2024-01-03"), to: None, after: Some("2024-01-04") };
    assert_eq!(
        bar_dates(&mut conn, ws, &aapl, cursor, 10).await,
        ["2024-01-05", "2024-01-08"],
        "the cursor is exclusive"
    );
    let cursor_before_from = Window { from: Some("2024-01-04"), to: None, after: Some("2024-01-02") };
    assert_eq!(
        bar_dates(&mut conn, ws, &aapl, cursor_before_from, 10).await,
        ["2024-01-04", "2024-01-05", "2024-01-08"],
        "`from` is inclusive when the cursor is before it"
    );
    let cursor_only = Window { from: None, to: Some("2024-01-05"), after: Some("2024-01-03") };
    assert_eq!(bar_dates(&mut conn, ws, &aapl, cursor_only, 10).await, ["2024-01-04", "2024-01-05"]);
    let other = workspace(&db).await;
    assert!(market::bars(&mut conn, &other, &aapl, 3, Window::default(), 10).await.expect("bars").is_empty());
    assert_eq!(market::last_bar(&mut conn, &other, &aapl, 3).await.expect("last"), None);
    assert!(market::datasets_for(&mut conn, &other, Rows::Prices, &aapl).await.expect("datasets").is_empty());
    assert_eq!(market::latest_dataset(&mut conn, &other, Rows::Prices, &aapl).await.expect("latest"), None);
}

#[tokio::test]
async fn corporate_actions_page_by_ex_date_then_action() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = &t.workspace_id;
    let (aapl, _) = two_instruments(&db, ws).await;
    let dividend = |ex_date: &str, amount: &str| CorporateActionRecord {
        symbol: "AAPL".into(),
        action: CorporateActionType::CashDividend,
        ex_date: ex_date.into(),
        pay_date: Some("2024-06-01".into()),
        ratio: None,
        amount: Some(amount.into()),
        currency: Some(currency("USD")),
    };
    let split = CorporateActionRecord {
        symbol: "AAPL".into(),
        action: CorporateActionType::Split,
        ex_date: "2024-02-09".into(),
        pay_date: None,
        ratio: Some("4".into()),
        amount: None,
        currency: None,
    };
    let actions = vec![
        (aapl.clone(), dividend("2024-05-10", "0.25")),
        (aapl.clone(), split),
        (aapl.clone(), dividend("2024-02-09", "0.24")),
    ];
    let mut lines = Vec::new();
    let mut tx = db.begin().await.expect("begin");
    market::insert_corporate_actions(&mut tx, ws, 5, &actions, &mut lines).await.expect("actions");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_eq!(
        data::recompute_content_hash(&mut conn, ws, Kind::CorporateActions, 5, data::Sealing::Lines)
            .await
            .expect("hash"),
        data::content_hash(lines)
    );
    assert_eq!(market::datasets_for(&mut conn, ws, Rows::CorporateActions, &aapl).await.expect("datasets"), vec![5]);
    assert_eq!(market::latest_dataset(&mut conn, ws, Rows::CorporateActions, &aapl).await.expect("latest"), Some(5));
    let none = Window::default;
    assert_eq!(
        action_keys(&mut conn, ws, &aapl, None, none(), 10).await,
        ["2024-02-09_cash_dividend", "2024-02-09_split", "2024-05-10_cash_dividend"]
    );
    assert_eq!(
        action_keys(&mut conn, ws, &aapl, None, none(), 1).await,
        ["2024-02-09_cash_dividend", "2024-02-09_split"]
    );
    let after = Window { after: Some("2024-02-09_cash_dividend"), ..none() };
    assert_eq!(
        action_keys(&mut conn, ws, &aapl, None, after, 10).await,
        ["2024-02-09_split", "2024-05-10_cash_dividend"]
    );
    let after_split = Window { after: Some("2024-02-09_split"), ..none() };
    assert_eq!(action_keys(&mut conn, ws, &aapl, None, after_split, 10).await, ["2024-05-10_cash_dividend"]);
    assert_eq!(action_keys(&mut conn, ws, &aapl, Some("split"), none(), 10).await, ["2024-02-09_split"]);
    let spring = Window { from: Some("2024-03-01"), to: Some("2024-12-31"), after: None };
    assert_eq!(
        action_keys(&mut conn, ws, &aapl, Some("cash_dividend"), spring, 10).await,
        ["2024-05-10_cash_dividend"]
    );
    let winter = Window { from: None, to: Some("2024-02-09"), after: None };
    assert_eq!(
        action_keys(&mut conn, ws, &aapl, None, winter, 10).await,
        ["2024-02-09_cash_dividend", "2024-02-09_split"]
    );
    let stored = market::corporate_actions(&mut conn, ws, &aapl, 5, None, Window::default(), 10).await.expect("all");
    assert_eq!(
        stored[1],
        CorporateAction {
            ex_date: "2024-02-09".into(),
            action: "split".into(),
            pay_date: None,
            ratio: Some("4".into()),
            amount: None,
            currency: None,
        }
    );
    assert_eq!(
        stored[2],
        CorporateAction {
            ex_date: "2024-05-10".into(),
            action: "cash_dividend".into(),
            pay_date: Some("2024-06-01".into()),
            ratio: None,
            amount: Some("0.25".into()),
            currency: Some("USD".into()),
        }
    );
    let other = workspace(&db).await;
    assert!(
        market::corporate_actions(&mut conn, &other, &aapl, 5, None, Window::default(), 10)
            .await
            .expect("actions")
            .is_empty()
    );
    assert!(market::datasets_for(&mut conn, &other, Rows::CorporateActions, &aapl).await.expect("ds").is_empty());
}

#[tokio::test]
async fn fundamentals_page_by_period_end_fiscal_period_and_metric_with_exact_filters() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = &t.workspace_id;
    let (aapl, _) = two_instruments(&db, ws).await;
    let figure = |period_end: &str, fiscal_period: &str, metric: &str, value: &str, money: bool| FundamentalRecord {
        symbol: "AAPL".into(),
        period_end: period_end.into(),
        fiscal_period: fiscal_period.into(),
        metric: metric.into(),
        value: value.into(),
        currency: money.then(|| currency("USD")),
    };
    let figures = vec![
        (aapl.clone(), figure("2024-03-31", "Q1", "revenue", "90", true)),
        (aapl.clone(), figure("2023-12-31", "Q4", "revenue", "119", true)),
        (aapl.clone(), figure("2023-12-31", "FY", "revenue", "383", true)),
        (aapl.clone(), figure("2023-12-31", "FY", "net_income", "97", true)),
        (aapl.clone(), figure("2023-12-31", "FY", "pe_ratio", "29.5", false)),
    ];
    let mut lines = Vec::new();
    let mut tx = db.begin().await.expect("begin");
    market::insert_fundamentals(&mut tx, ws, 6, &figures, &mut lines).await.expect("fundamentals");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_eq!(
        data::recompute_content_hash(&mut conn, ws, Kind::Fundamentals, 6, data::Sealing::Lines).await.expect("hash"),
        data::content_hash(lines)
    );
    assert_eq!(market::datasets_for(&mut conn, ws, Rows::Fundamentals, &aapl).await.expect("datasets"), vec![6]);
    let none = Window::default;
    let all = vec![
        "2023-12-31_FY_net_income",
        "2023-12-31_FY_pe_ratio",
        "2023-12-31_FY_revenue",
        "2023-12-31_Q4_revenue",
        "2024-03-31_Q1_revenue",
    ];
    assert_eq!(figure_keys(&mut conn, ws, &aapl, None, None, none(), 10).await, all);
    assert_eq!(figure_keys(&mut conn, ws, &aapl, None, None, none(), 2).await, all[..3].to_vec(), "limit + 1");
    // The cursor is the last row's key; a metric may hold underscores.
    let after = Window { after: Some("2023-12-31_FY_net_income"), ..none() };
    assert_eq!(figure_keys(&mut conn, ws, &aapl, None, None, after, 10).await, all[1..].to_vec());
    let after = Window { after: Some("2023-12-31_FY_revenue"), ..none() };
    assert_eq!(figure_keys(&mut conn, ws, &aapl, None, None, after, 10).await, all[3..].to_vec());
    assert_eq!(
        figure_keys(&mut conn, ws, &aapl, Some("revenue"), None, none(), 10).await,
        ["2023-12-31_FY_revenue", "2023-12-31_Q4_revenue", "2024-03-31_Q1_revenue"]
    );
    assert_eq!(figure_keys(&mut conn, ws, &aapl, None, Some("Q4"), none(), 10).await, ["2023-12-31_Q4_revenue"]);
    assert_eq!(
        figure_keys(&mut conn, ws, &aapl, Some("revenue"), Some("FY"), none(), 10).await,
        ["2023-12-31_FY_revenue"]
    );
    let year = Window { from: Some("2024-01-01"), to: Some("2024-12-31"), after: None };
    assert_eq!(figure_keys(&mut conn, ws, &aapl, None, None, year, 10).await, ["2024-03-31_Q1_revenue"]);
    let stored = market::fundamentals(&mut conn, ws, &aapl, 6, Some("pe_ratio"), None, Window::default(), 10)
        .await
        .expect("ratio");
    assert_eq!(
        stored,
        vec![Fundamental {
            period_end: "2023-12-31".into(),
            fiscal_period: "FY".into(),
            metric: "pe_ratio".into(),
            value: "29.5".into(),
            currency: None,
        }]
    );
    let other = workspace(&db).await;
    let theirs = market::fundamentals(&mut conn, &other, &aapl, 6, None, None, Window::default(), 10).await;
    assert!(theirs.expect("fundamentals").is_empty());
    assert_eq!(market::latest_dataset(&mut conn, &other, Rows::Fundamentals, &aapl).await.expect("latest"), None);
}
