//! Investment over HTTP on the demo book: portfolios, marked tax lots (the engine's lot rules on observed
//! prices), loss-harvest proposals sealed and never executable, risk on current holdings (checked against
//! the same figures computed independently in Python on the shipped CSV), company lookups; and the book's
//! imports refusing what a book must never hold. Bad input changes nothing; another workspace sees nothing.

use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_data::import::{self, Failure, ImportRequest, Mapping, Silent};
use fiscus_data_core::rules::{Kind, Provenance};
use fiscus_domain::actor::Actor;
use fiscus_kernel::governed::Caller;
use serde_json::{Value, json};

async fn demo(app: &TestApp) {
    app.load_demo().await;
}

async fn json(app: &TestApp, path: &str) -> Value {
    let r = app.get(path, &app.key).await;
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.expect("json")
}

/// The id of a demo portfolio by code.
async fn portfolio(app: &TestApp, code: &str) -> i64 {
    let list = json(app, "/api/v2/investment/portfolios").await;
    list["data"].as_array().expect("present").iter().find(|p| p["code"] == code).expect(code)["id"]
        .as_i64()
        .expect("present")
}

/// The demo book's statistics as the peer libraries compute them (empyrical, numpy, statsmodels), from the
/// shipped CSVs with the API's conventions: `peers/generate.py --only demo_book`.
fn peers() -> Value {
    serde_json::from_str(include_str!("../../../fiscus-quant/tests/fixtures/demo_book.json")).expect("fixture")
}

/// `got` and the peer's number agree to 1e-12 (relative above 1): the same formulas, summed in another order.
fn agrees(what: &str, got: &Value, peer: &Value) {
    let (g, p) = (got.as_f64().unwrap_or(f64::NAN), peer.as_f64().unwrap_or(f64::NAN));
    assert!((g - p).abs() <= 1e-12 * p.abs().max(1.0), "{what}: {g} vs the peer's {p}");
}

fn lot<'a>(lots: &'a Value, name: &str) -> &'a Value {
    lots["lots"].as_array().expect("present").iter().find(|l| l["lot"] == name).unwrap_or_else(|| panic!("{name}"))
}

#[tokio::test]
async fn the_demo_book_is_marked_to_observed_prices_with_the_engines_lot_rules() {
    let app = spawn_app().await;
    demo(&app).await;
    let list = json(&app, "/api/v2/investment/portfolios").await;
    assert_eq!(list["data"].as_array().expect("present").len(), 2);
    assert_eq!(list["data"][0]["benchmark_symbol"], "SPX");
    let growth = portfolio(&app, "GROWTH").await;

    // By default the book is today's, each holding marked at its newest observed price, flagged stale
    // when that price is more than a week older (the shipped prices end on 2022-12-28).
    let today = json(&app, &format!("/api/v2/investment/portfolios/{growth}/tax-lots")).await;
    assert_eq!(today["as_of"], fiscus_domain::clock::utc_day(fiscus_domain::clock::now_micros()));
    assert_eq!(today["lots"].as_array().map(Vec::len), Some(12));
    let marks = today["marks"].as_array().expect("marks");
    assert!(marks.iter().all(|m| m["date"] == "2022-12-28" && m["stale"] == true), "{marks:?}");
    // On the prices' own last day, as the peers computed it.
    let lots = json(&app, &format!("/api/v2/investment/portfolios/{growth}/tax-lots?as_of=2022-12-28")).await;
    assert_eq!(lots["as_of"], "2022-12-28");
    assert!(lots["marks"].as_array().expect("marks").iter().all(|m| m["stale"] == false));
    assert_eq!(lots["lots"].as_array().expect("present").len(), 12);
    // 200 AAPL bought at the observed 42.277 (cost 8,455.40), marked at 125.674 → 125.67 per unit.
    let aapl = lot(&lots, "AAPL-2019-03");
    assert_eq!(aapl["quantity"], "200");
    assert_eq!(aapl["cost_minor"], 845_540);
    assert_eq!(aapl["market_value_minor"], 2_513_400);
    assert_eq!(aapl["unrealised_gain_minor"], 1_667_860);
    assert_eq!(aapl["term"], "long");
    let amd = lot(&lots, "AMD-2022-12");
    assert_eq!((amd["term"].as_str(), amd["holding_days"].as_i64()), (Some("short"), Some(16)));
    assert_eq!(amd["unrealised_gain_minor"], -32_400);
    let mark = lots["marks"].as_array().expect("present").iter().find(|m| m["symbol"] == "AAPL").expect("present");
    assert_eq!((mark["price"].as_str(), mark["price_minor"].as_i64()), (Some("125.674"), Some(12_567)));
    assert_eq!(mark["field"], "adj_close");
    // An earlier valuation date marks to that day's prices and leaves out lots bought after it.
    let earlier = json(&app, &format!("/api/v2/investment/portfolios/{growth}/tax-lots?as_of=2022-06-30")).await;
    assert_eq!(earlier["lots"].as_array().expect("present").len(), 11);
    // Positions are read as lots acquired on their as-of date.
    let income = portfolio(&app, "INCOME").await;
    let lots = json(&app, &format!("/api/v2/investment/portfolios/{income}/tax-lots")).await;
    let ko = lot(&lots, "position-KO-2021-01-04");
    assert_eq!((ko["origin"].as_str(), ko["acquired"].as_str()), (Some("position"), Some("2021-01-04")));

    // Another workspace sees none of it.
    let (_, other) = app.other_workspace_key().await;
    let r = app.get(&format!("/api/v2/investment/portfolios/{growth}/tax-lots"), &other).await;
    problem(r, 404, "not_found").await;
    let r = app.get("/api/v2/investment/portfolios", &other).await;
    assert_eq!(r.json::<Value>().await.expect("present")["data"].as_array().expect("present").len(), 0);
}

#[tokio::test]
async fn a_harvest_proposal_weighs_wash_sales_is_sealed_and_never_executes() {
    let app = spawn_app().await;
    demo(&app).await;
    let growth = portfolio(&app, "GROWTH").await;
    let path = format!("/api/v2/investment/portfolios/{growth}/tax-harvest");
    let body = json!({ "as_of": "2022-12-28", "planned_purchases": [{ "symbol": "MSFT", "date": "2023-01-10" }] });
    let r = app.post_json(&path, &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let p: Value = r.json().await.expect("present");
    assert_eq!(p["object"], "tax_harvest_proposal");
    assert_eq!(p["output"]["executable"], false);
    let candidates = p["output"]["candidates"].as_array().expect("present");
    let names: Vec<&str> = candidates.iter().map(|c| c["lot"].as_str().expect("present")).collect();
    // Largest loss first; only the lots below cost.
    assert_eq!(names, ["AMD-2021-11", "MSFT-2021-12", "PG-2022-01", "AMD-2022-12"]);
    // Losses and terms as the peers' fixture has them.
    for (ours, peer) in candidates.iter().zip(peers()["harvest"]["candidates"].as_array().expect("candidates")) {
        assert_eq!(
            (&ours["lot"], &ours["loss_minor"], &ours["term"]),
            (&peer["lot"], &peer["loss_cents"], &peer["term"])
        );
    }
    let amd = &candidates[0];
    assert_eq!((amd["loss_minor"].as_i64(), amd["term"].as_str()), (Some(1_490_100), Some("long")));
    // The newer AMD lot (2022-12-12) is inside 30 days of the sale: the loss would wash.
    assert_eq!(
        (amd["wash_sale_conflict"].as_str(), amd["clear_from"].as_str()),
        (Some("2022-12-12"), Some("2023-01-12"))
    );
    // The planned MSFT purchase washes that loss too.
    assert_eq!(candidates[1]["wash_sale_conflict"], "2023-01-10");
    // Totals count only the clear candidates: PG (549.36) and the new AMD lot (324.00), both short term.
    let total = &p["output"]["totals"][0];
    assert_eq!(
        (total["short_term_loss_minor"].as_i64(), total["long_term_loss_minor"].as_i64()),
        (Some(87_336), Some(0))
    );
    assert_eq!(
        total["estimated_tax_effect_minor"],
        (54_936.0_f64 * 0.37).round() as i64 + (32_400.0_f64 * 0.37).round() as i64
    );
    assert!(p["content_hash"].as_str().expect("present").starts_with("sha256:"));
    assert_eq!(app.count("SELECT COUNT(*) FROM investment_records WHERE kind = 'tax_harvest'").await, 1);
    // Nothing moved in the book.
    assert_eq!(app.count("SELECT COUNT(*) FROM lot_disposals").await, 0);

    // Bad input: refused, nothing recorded.
    for (body, field) in [
        (json!({ "short_term_rate": 2 }), "short_term_rate"),
        (json!({ "as_of": "2022-13-01" }), "as_of"),
        (json!({ "min_loss_minor": -1 }), "min_loss_minor"),
        (json!({ "planned_purchases": [{ "symbol": "MSFT", "date": "soon" }] }), "planned_purchases"),
    ] {
        let r = app.post_json(&path, &app.key, &body, None).await;
        let p = problem(r, 422, "invalid_request").await;
        assert!(p["errors"].to_string().contains(field), "{p}");
    }
    let r = app.post_json(&path, &app.key, &json!({ "rate": 1 }), None).await;
    problem(r, 422, "invalid_request").await;
    let r = app.post_json("/api/v2/investment/portfolios/999/tax-harvest", &app.key, &json!({}), None).await;
    problem(r, 404, "not_found").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM investment_records").await, 1);
    // The record is sealed: it verifies, and an edited output does not.
    let verify = || fiscus_kernel::verify::verify_records(&app.state.store, &app.workspace_id);
    let (_, failing) = verify().await.expect("verify");
    assert!(failing.is_empty(), "{}", failing.len());
    app.execute("UPDATE investment_records SET output = REPLACE(output, '1490100', '1') WHERE kind = 'tax_harvest'")
        .await;
    let (_, failing) = verify().await.expect("verify");
    assert_eq!(failing.iter().map(|u| u.table).collect::<Vec<_>>(), ["investment_records"]);
}

#[tokio::test]
async fn risk_on_current_holdings_matches_an_independent_computation() {
    let app = spawn_app().await;
    demo(&app).await;
    let growth = portfolio(&app, "GROWTH").await;
    let r = json(&app, &format!("/api/v2/investment/risk?portfolio_id={growth}")).await;
    assert_eq!((r["as_of"].as_str(), r["observations"].as_u64()), (Some("2022-12-28"), Some(252)));
    assert_eq!(r["holdings_value_minor"], 19_319_520);
    assert_eq!(r["cash_minor"], 21_000_000);
    // The figures of empyrical and numpy over the same window (the peers' fixture).
    let peer = peers();
    let risk = &peer["risk"];
    assert_eq!(r["observations"], risk["observations"]);
    agrees("annual_volatility", &r["annual_volatility"], &risk["annual_volatility"]);
    agrees("annual_return", &r["annual_return"], &risk["annual_return"]);
    agrees("var_1d", &r["var_1d"], &risk["value_at_risk"]);
    agrees("cvar_1d", &r["cvar_1d"], &risk["conditional_value_at_risk"]);
    agrees("max_drawdown", &r["max_drawdown"], &risk["max_drawdown"]);
    agrees("herfindahl", &r["concentration"]["herfindahl"], &risk["concentration"]["herfindahl"]);
    assert_eq!(r["concentration"]["largest_symbol"], risk["concentration"]["largest_symbol"]);
    assert_eq!(r["var_1d_minor"], (-0.023685840565889616_f64 * 19_319_520.0).round() as i64);
    let weights: f64 =
        r["weights"].as_array().expect("present").iter().map(|w| w["weight"].as_f64().expect("present")).sum();
    assert!((weights - 1.0).abs() < 1e-12);

    for (query, field) in
        [("lookback_days=10", "lookback_days"), ("confidence=0.5", "confidence"), ("as_of=yesterday", "as_of")]
    {
        let resp = app.get(&format!("/api/v2/investment/risk?portfolio_id={growth}&{query}"), &app.key).await;
        let p = problem(resp, 422, "invalid_parameter").await;
        assert!(p["errors"].to_string().contains(field), "{p}");
    }
    let resp = app.get("/api/v2/investment/risk", &app.key).await;
    assert_eq!(resp.status(), 422);
    let resp = app.get("/api/v2/investment/risk?portfolio_id=424242", &app.key).await;
    problem(resp, 404, "not_found").await;

    // Against the S&P 500 over the default three years, as empyrical computes it (the peers' fixture).
    let c = json(&app, &format!("/api/v2/benchmarking/comparisons?portfolio_id={growth}")).await;
    let bench = &peer["benchmark"];
    assert_eq!((c["benchmark"].as_str(), &c["observations"]), (Some("SPX"), &bench["observations"]));
    assert_eq!(c["window_start"], "2019-12-31");
    for field in [
        "tracking_error",
        "information_ratio",
        "excess_sharpe",
        "alpha",
        "beta",
        "up_capture",
        "down_capture",
        "up_down_capture",
        "portfolio_annual_return",
        "benchmark_annual_return",
        "portfolio_annual_volatility",
        "benchmark_annual_volatility",
    ] {
        agrees(field, &c[field], &bench[field]);
    }
    let resp =
        app.get(&format!("/api/v2/benchmarking/comparisons?portfolio_id={growth}&benchmark=NOPE"), &app.key).await;
    let p = problem(resp, 409, "reference_not_found").await;
    assert!(p["errors"].to_string().contains("benchmark"), "{p}");
    let resp = app
        .get(
            &format!("/api/v2/benchmarking/comparisons?portfolio_id={growth}&start=2022-06-01&end=2022-01-01"),
            &app.key,
        )
        .await;
    // An end before the start is an empty window: too few returns, 409 (JSON Schema cannot compare dates).
    problem(resp, 409, "insufficient_data").await;

    let c = json(&app, "/api/v2/investment/companies/AAPL").await;
    assert_eq!((c["name"].as_str(), c["sector"].as_str()), (Some("Apple Inc."), Some("Information Technology")));
    assert_eq!(
        (c["prices"]["last_date"].as_str(), c["prices"]["last_price"].as_str()),
        (Some("2022-12-28"), Some("125.674"))
    );
    assert!(c["prices"]["year_low"].as_f64().expect("present") <= 125.674);
    problem(app.get("/api/v2/investment/companies/NOPE", &app.key).await, 404, "not_found").await;
}

fn request(kind: Kind, csv: &str) -> ImportRequest {
    ImportRequest {
        kind,
        file_name: "book.csv".into(),
        input: csv.as_bytes().to_vec().into(),
        dataset: None,
        source: "test".into(),
        licence: "CC0-1.0".into(),
        provenance: Provenance::Observed,
        mapping: Mapping { delimiter: b',', ..Mapping::default() },
        dry_run: false,
    }
}

async fn import(app: &TestApp, kind: Kind, csv: &str) -> Result<import::Outcome, Vec<String>> {
    match import::import(&app.state.store, &Caller::bare(Actor::cli()), &app.workspace_id, request(kind, csv), &Silent)
        .await
    {
        Ok(o) => Ok(o),
        Err(Failure::Invalid { errors, .. }) => Err(errors.into_iter().map(|e| e.to_string()).collect()),
        Err(e) => panic!("the store failed: {e:?}"),
    }
}

#[tokio::test]
async fn the_books_imports_refuse_what_a_book_must_never_hold() {
    let app = spawn_app().await;
    demo(&app).await;
    let before = app.count("SELECT COUNT(*) FROM tax_lots").await;
    let errors = import(
        &app,
        Kind::Lots,
        "portfolio,lot,symbol,acquired,quantity,cost,currency\n\
         NOPE,L1,AAPL,2022-01-03,10,1000.00,USD\n\
         GROWTH,L2,ZZZZ,2022-01-03,10,1000.00,USD\n\
         GROWTH,L3,AAPL,2022-01-03,10,1000.00,EUR\n\
         GROWTH,L4,AAPL,2022-01-03,0,1000.00,USD\n\
         GROWTH,L5,AAPL,2022-01-03,1.0000001,1000.00,USD\n\
         GROWTH,L6,AAPL,2022-01-03,10,-5.00,USD\n\
         GROWTH,L7,AAPL,2022-01-03,10,1000.00,USD\n\
         GROWTH,L7,AAPL,2022-01-04,10,1000.00,USD\n\
         GROWTH,AAPL-2019-03,AAPL,2019-03-01,201,8455.40,USD\n",
    )
    .await
    .expect_err("refused");
    let text = errors.join("\n");
    for (line, what) in [
        (2, "no portfolio `NOPE`"),
        (3, "no instrument `ZZZZ`"),
        (4, "quoted in USD"),
        (5, "above zero"),
        (6, "more than six decimals"),
        (7, "negative"),
        (9, "appears twice"),
        (10, "never changed"),
    ] {
        assert!(text.contains(&format!("line {line}")) && text.contains(what), "line {line} {what}:\n{text}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM tax_lots").await, before);
    // The same lots file again: every row skipped, nothing added.
    let again = import(&app, Kind::Lots, include_str!("../../../../data/investment/sample_lots.csv")).await;
    assert!(again.is_ok_and(|o| !o.created), "found by its hash");
    // A holding in an instrument without observed prices cannot be marked: 503, never a stand-in price.
    import(&app, Kind::Instruments, "symbol,name,asset_class,currency\nNEWCO,New Co,equity,USD\n")
        .await
        .expect("present");
    import(
        &app,
        Kind::Lots,
        "portfolio,lot,symbol,acquired,quantity,cost,currency\nGROWTH,N1,NEWCO,2022-01-03,5,50.00,USD\n",
    )
    .await
    .expect("present");
    let growth = portfolio(&app, "GROWTH").await;
    let r = app.get(&format!("/api/v2/investment/portfolios/{growth}/tax-lots"), &app.key).await;
    let p = problem(r, 503, "market_data_unavailable").await;
    assert!(p["detail"].as_str().expect("present").contains("NEWCO"), "{p}");
    let r =
        app.post_json(&format!("/api/v2/investment/portfolios/{growth}/tax-harvest"), &app.key, &json!({}), None).await;
    problem(r, 503, "market_data_unavailable").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM investment_records").await, 0);
}

#[tokio::test]
async fn scenarios_and_constructions_are_sealed_proposals_on_the_holdings() {
    let app = spawn_app().await;
    demo(&app).await;
    let growth = portfolio(&app, "GROWTH").await;
    let path = format!("/api/v2/investment/portfolios/{growth}/scenarios");
    // The covid crash replayed on today's holdings: the same figures Python computes from the shipped CSV
    // (each holding's market value times its observed return from 2020-02-19 to 2020-03-23).
    let r = app.post_json(&path, &app.key, &json!({ "historical": { "preset": "covid_crash_2020" } }), None).await;
    assert_eq!(r.status(), 201);
    let run: Value = r.json().await.expect("json");
    let out = &run["output"];
    assert_eq!((out["window_start"].as_str(), out["window_end"].as_str()), (Some("2020-02-19"), Some("2020-03-23")));
    assert!((out["pnl_minor"].as_i64().expect("pnl") - -6_405_522).abs() <= 5, "{}", out["pnl_minor"]);
    let xom = out["lines"].as_array().expect("lines").iter().find(|l| l["symbol"] == "XOM").expect("XOM");
    assert!((xom["return"].as_f64().expect("return") - -0.4787840405319823).abs() < 1e-12);
    assert!(out["worst_day"]["return"].as_f64().expect("worst") < -0.09);
    assert!(out["max_drawdown"].as_f64().expect("drawdown") < -0.3);
    // Hypothetical: an instrument's own shock wins over its sector's, a sector's over the market's (beta).
    let shocks =
        json!({ "hypothetical": { "market": -0.2, "sectors": { "Energy": -0.35 }, "instruments": { "AAPL": -0.25 } } });
    let run: Value = app.post_json(&path, &app.key, &shocks, None).await.json().await.expect("json");
    let lines = run["output"]["lines"].as_array().expect("lines");
    let line = |s: &str| lines.iter().find(|l| l["symbol"] == s).expect("line");
    assert_eq!(
        (line("AAPL")["source"].as_str(), line("AAPL")["pnl_minor"].as_i64()),
        (Some("instrument"), Some(-942_525))
    );
    assert_eq!((line("XOM")["source"].as_str(), line("XOM")["pnl_minor"].as_i64()), (Some("sector"), Some(-1_119_615)));
    let msft = line("MSFT");
    assert_eq!(msft["source"], "market");
    let beta = msft["beta"].as_f64().expect("beta");
    assert!(beta > 0.5 && beta < 2.0, "{beta}");
    assert!((msft["return"].as_f64().expect("return") - -0.2 * beta).abs() < 1e-12);
    for (body, field) in [
        (json!({}), "historical"),
        (json!({ "historical": { "preset": "dotcom" } }), "historical"),
        (json!({ "hypothetical": { "market": -1.5 } }), "hypothetical"),
    ] {
        let p = problem(app.post_json(&path, &app.key, &body, None).await, 422, "invalid_request").await;
        assert!(p["errors"].to_string().contains(field), "{p}");
    }
    // A shock to an instrument the portfolio does not hold names what is not there: 409.
    let unheld = json!({ "hypothetical": { "instruments": { "NFLX": -0.1 } } });
    problem(app.post_json(&path, &app.key, &unheld, None).await, 409, "reference_not_found").await;
    // A window ending before it starts holds no prices: 409, as on every read.
    let reversed = json!({ "historical": { "start": "2020-03-23", "end": "2020-02-19" } });
    problem(app.post_json(&path, &app.key, &reversed, None).await, 409, "insufficient_data").await;

    // Construction: minimum variance over the holdings, capped at 30 % each, weights summing exactly.
    let path = format!("/api/v2/investment/portfolios/{growth}/construct");
    let r = app.post_json(&path, &app.key, &json!({ "max_weight": 0.3 }), None).await;
    assert_eq!(r.status(), 201);
    let c: Value = r.json().await.expect("json");
    let targets = c["output"]["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 9);
    assert_eq!(targets.iter().map(|t| t["target_weight_ppm"].as_i64().expect("ppm")).sum::<i64>(), 1_000_000);
    assert!(targets.iter().all(|t| t["target_weight_ppm"].as_i64().expect("ppm") <= 300_000));
    assert_eq!(c["output"]["executable"], false);
    assert!(c["output"]["expected_volatility"].as_f64().expect("vol") < 0.23, "below the holdings' own");
    for (body, field) in [
        (json!({ "lookback_days": 10 }), "lookback_days"),
        (json!({ "instruments": ["AAPL"] }), "instruments"),
        (json!({ "objective": "max_return" }), "objective"),
    ] {
        let p = problem(app.post_json(&path, &app.key, &body, None).await, 422, "invalid_request").await;
        assert!(p["errors"].to_string().contains(field), "{p}");
    }
    // Nine holdings cannot be fully invested at 5 % each: a conflict with what the portfolio holds.
    let capped = app.post_json(&path, &app.key, &json!({ "max_weight": 0.05 }), None).await;
    assert_eq!(problem(capped, 409, "conflict").await["instruments"], 9);
    assert_eq!(app.count("SELECT COUNT(*) FROM investment_records").await, 3);
}

#[tokio::test]
async fn a_collateral_snapshot_applies_the_policy_in_force_to_observed_values() {
    use fiscus_investment::rules::collateral::CollateralRule;
    let app = spawn_app().await;
    demo(&app).await;
    // By code (the seed's string id) with the built-in default policy (version 0).
    let inventory = "/api/v2/investment/portfolios/GROWTH/collateral-inventory";
    // By default, today's book: every lot held now, at its newest observed price (with that price's date).
    let r = app.post_json(inventory, &app.key, &json!({}), None).await;
    assert_eq!(r.status(), 201);
    let today: Value = r.json().await.expect("json");
    assert_eq!(today["output"]["as_of"], fiscus_domain::clock::utc_day(fiscus_domain::clock::now_micros()));
    let r = app.post_json(inventory, &app.key, &json!({ "as_of": "2022-12-28" }), None).await;
    assert_eq!(r.status(), 201);
    let snap: Value = r.json().await.expect("json");
    assert_eq!(snap["output"]["lines"], today["output"]["lines"], "the same lots, at the same newest prices");
    let out = &snap["output"];
    assert_eq!((out["policy_version"].as_i64(), out["as_of"].as_str()), (Some(0), Some("2022-12-28")));
    let lines = out["lines"].as_array().expect("lines");
    let line = |p: &str| lines.iter().find(|l| l["position"] == p).expect("line");
    // 300 AAPL at the observed 125.674 (not rounded first): 37,702.20, less 25 %, rounded down.
    assert_eq!(
        (line("AAPL")["market_value_minor"].as_i64(), line("AAPL")["collateral_value_minor"].as_i64()),
        (Some(3_770_220), Some(2_827_665))
    );
    let cash = line("cash:USD");
    assert_eq!(
        (cash["market_value_minor"].as_i64(), cash["collateral_value_minor"].as_i64()),
        (Some(21_000_000), Some(21_000_000))
    );
    let total: i64 = lines.iter().map(|l| l["collateral_value_minor"].as_i64().expect("value")).sum();
    assert_eq!(out["total_collateral_value_minor"], total);

    // A stricter policy, set by a person at the command line, is the next version and is named.
    let caller = Caller::bare(Actor::cli());
    let rules = vec![
        CollateralRule { asset_class: "cash".into(), haircut: 0.0, currencies: vec!["USD".into()] },
        CollateralRule { asset_class: "equity".into(), haircut: 0.4, currencies: vec![] },
    ];
    let p = fiscus_investment::collateral::set_policy(&app.state.store, &caller, &app.workspace_id, rules)
        .await
        .expect("policy");
    assert_eq!(p.version, 1);
    let bad = vec![CollateralRule { asset_class: "art".into(), haircut: 1.2, currencies: vec![] }];
    assert!(
        fiscus_investment::collateral::set_policy(&app.state.store, &caller, &app.workspace_id, bad).await.is_err()
    );
    let growth = portfolio(&app, "GROWTH").await;
    let r = app
        .post_json(&format!("/api/v2/investment/portfolios/{growth}/collateral-inventory"), &app.key, &json!({}), None)
        .await;
    let snap: Value = r.json().await.expect("json");
    assert_eq!(
        (snap["output"]["policy_version"].as_i64(), snap["output"]["policy_rules_hash"].as_str()),
        (Some(1), Some(p.rules_hash.as_str()))
    );
    let aapl = snap["output"]["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .find(|l| l["position"] == "AAPL")
        .expect("AAPL")
        .clone();
    assert_eq!(aapl["collateral_value_minor"], 2_262_132);

    problem(
        app.post_json("/api/v2/investment/portfolios/NOPE/collateral-inventory", &app.key, &json!({}), None).await,
        404,
        "not_found",
    )
    .await;
    let (_, other) = app.other_workspace_key().await;
    problem(
        app.post_json("/api/v2/investment/portfolios/GROWTH/collateral-inventory", &other, &json!({}), None).await,
        404,
        "not_found",
    )
    .await;
    assert_eq!(app.count("SELECT COUNT(*) FROM investment_records WHERE kind = 'collateral_inventory'").await, 3);
}

#[tokio::test]
async fn factor_exposures_limits_and_synthetic_markets_are_evidence_never_orders() {
    let app = spawn_app().await;
    demo(&app).await;
    let growth = portfolio(&app, "GROWTH").await;
    // Fama-French loadings of today's holdings over the 60 factor months up to 2018-11 (the data's last),
    // as statsmodels fits them on the same monthly returns (the peers' fixture).
    let r = json(&app, &format!("/api/v2/investment/risk?portfolio_id={growth}")).await;
    let f = &r["factor_exposures"];
    assert_eq!(
        (f["window_start"].as_str(), f["window_end"].as_str(), f["observations"].as_u64()),
        (Some("2013-12"), Some("2018-11"), Some(60))
    );
    let fit = &peers()["factor_exposures"]["statsmodels"];
    for (i, name) in ["alpha", "market", "smb", "hml"].iter().enumerate() {
        agrees(name, &f[name]["estimate"], &fit["params"][i]);
        agrees(name, &f[name]["std_error"], &fit["bse"][i]);
        agrees(name, &f[name]["t_value"], &fit["tvalues"][i]);
    }
    agrees("r_squared", &f["r_squared"], &fit["rsquared"]);
    agrees("adj_r_squared", &f["adj_r_squared"], &fit["rsquared_adj"]);

    // A risk-compliance run: each limit measured and passed or breached, sealed, readable by id.
    let body = json!({ "portfolio_id": growth, "limits": { "max_weight": 0.15, "max_var_1d": 0.05 } });
    let r = app.post_json("/api/v2/investment/risk-compliance/runs", &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let run: Value = r.json().await.expect("json");
    let checks = run["output"]["checks"].as_array().expect("checks");
    let status = |l: &str| {
        checks.iter().find(|c| c["limit"] == l).expect("check")["status"].as_str().expect("status").to_string()
    };
    // The largest holding (AAPL, 19.5 %) is above 15 %; the one-day VaR (2.4 %) is within 5 %.
    assert_eq!((status("max_weight"), status("max_var_1d")), ("breached".to_string(), "passed".to_string()));
    assert_eq!(run["output"]["status"], "breached");
    let id = run["id"].as_str().expect("id");
    let again = json(&app, &format!("/api/v2/investment/risk-compliance/runs/{id}")).await;
    assert_eq!(again["content_hash"], run["content_hash"]);
    let (_, other) = app.other_workspace_key().await;
    problem(app.get(&format!("/api/v2/investment/risk-compliance/runs/{id}"), &other).await, 404, "not_found").await;
    problem(app.get("/api/v2/investment/risk-compliance/runs/rcr_nope", &app.key).await, 404, "not_found").await;
    let bad = json!({ "portfolio_id": 999, "limits": {} });
    let p = problem(
        app.post_json("/api/v2/investment/risk-compliance/runs", &app.key, &bad, None).await,
        409,
        "reference_not_found",
    )
    .await;
    assert!(p["errors"].to_string().contains("portfolio_id"), "{p}");

    // Synthetic markets: seeded, so the same request draws the same distribution; never executable.
    let body = json!({ "portfolio_id": growth, "horizon_days": 21, "paths": 500, "seed": 7 });
    let a: Value = app
        .post_json("/api/v2/investment/generative-markets/runs", &app.key, &body, None)
        .await
        .json()
        .await
        .expect("json");
    let b: Value = app
        .post_json("/api/v2/investment/generative-markets/runs", &app.key, &body, None)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(a["output"]["return_percentiles"], b["output"]["return_percentiles"]);
    assert_eq!((a["output"]["synthetic"].as_bool(), a["output"]["executable"].as_bool()), (Some(true), Some(false)));
    let p5 = a["output"]["return_percentiles"][1]["return"].as_f64().expect("p5");
    assert!(a["output"]["expected_shortfall_5"].as_f64().expect("es") <= p5);
    let list = json(&app, &format!("/api/v2/investment/generative-markets/runs?portfolio_id={growth}")).await;
    assert_eq!(list["data"].as_array().expect("data").len(), 2);
    let none = json(&app, "/api/v2/investment/generative-markets/runs?portfolio_id=999").await;
    assert_eq!(none["data"].as_array().expect("data").len(), 0);
    problem(
        app.get("/api/v2/investment/generative-markets/runs?portfolio_id=abc", &app.key).await,
        422,
        "invalid_parameter",
    )
    .await;
    let bad = json!({ "portfolio_id": growth, "paths": 10 });
    problem(
        app.post_json("/api/v2/investment/generative-markets/runs", &app.key, &bad, None).await,
        422,
        "invalid_request",
    )
    .await;
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, 0);
}

#[tokio::test]
async fn a_report_attributes_the_period_return_to_its_holdings_and_is_listed_sealed() {
    let app = spawn_app().await;
    demo(&app).await;
    let growth = portfolio(&app, "GROWTH").await;
    let r = app.post_json("/api/v2/investment/reports", &app.key, &json!({ "portfolio_id": growth }), None).await;
    assert_eq!(r.status(), 201);
    let report: Value = r.json().await.expect("json");
    let out = &report["output"];
    // Today's quantities held through the year to 2022-12-28, as Python computes from the shipped CSVs.
    assert_eq!((out["period_start"].as_str(), out["observations"].as_u64()), (Some("2021-12-28"), Some(252)));
    let ret = out["performance"]["period_return"].as_f64().expect("return");
    assert!((ret - -0.14738122126190933).abs() < 1e-9, "{ret}");
    let bench = out["benchmark_performance"]["period_return"].as_f64().expect("benchmark");
    assert!((bench - -0.2095814138121952).abs() < 1e-9, "{bench}");
    // Contributions add up to the return, by holding and by sector.
    let sum =
        |key: &str| out[key].as_array().expect(key).iter().map(|c| c["contribution"].as_f64().expect("c")).sum::<f64>();
    assert!((sum("contributions") - ret).abs() < 1e-12 && (sum("sectors") - ret).abs() < 1e-12);
    assert_eq!(out["monthly"].as_array().expect("monthly").len(), 13);
    let list = json(&app, &format!("/api/v2/investment/reports?portfolio_id={growth}")).await;
    assert_eq!(list["data"][0]["id"], report["id"]);
    let missing = app.post_json("/api/v2/investment/reports", &app.key, &json!({ "portfolio_id": 999 }), None).await;
    assert_eq!(problem(missing, 409, "reference_not_found").await["errors"][0]["field"], "portfolio_id");
    // A period ending before it starts is empty: 409 `insufficient_data`, nothing recorded.
    let reversed = json!({ "portfolio_id": growth, "start": "2022-06-01", "end": "2022-01-01" });
    problem(app.post_json("/api/v2/investment/reports", &app.key, &reversed, None).await, 409, "insufficient_data")
        .await;
    let (_, other) = app.other_workspace_key().await;
    let r = app.get("/api/v2/investment/reports", &other).await;
    assert_eq!(r.json::<Value>().await.expect("json")["data"].as_array().expect("data").len(), 0);
}

#[tokio::test]
async fn an_empty_portfolio_and_a_missing_fx_rate_are_refused_and_an_observed_rate_converts() {
    let app = spawn_app().await;
    demo(&app).await;
    import(&app, Kind::Portfolios, "code,name,base_currency\nEMPTY,Nothing yet,USD\nEURO,European book,USD\n")
        .await
        .expect("portfolios");
    let list = json(&app, "/api/v2/investment/portfolios").await;
    let id = |code: &str| {
        list["data"].as_array().expect("data").iter().find(|p| p["code"] == code).expect(code)["id"]
            .as_i64()
            .expect("id")
    };
    let (empty, euro) = (id("EMPTY"), id("EURO"));
    let before = app.count("SELECT COUNT(*) FROM investment_records").await;
    problem(app.get(&format!("/api/v2/investment/risk?portfolio_id={empty}"), &app.key).await, 409, "conflict").await;
    let r =
        app.post_json(&format!("/api/v2/investment/portfolios/{empty}/tax-harvest"), &app.key, &json!({}), None).await;
    problem(r, 409, "conflict").await;

    // A euro-quoted holding in a dollar portfolio: 30 observed closes, no EUR/USD rate yet.
    import(&app, Kind::Instruments, "symbol,name,asset_class,currency\nSAP,SAP SE,equity,EUR\n")
        .await
        .expect("instrument");
    let mut prices = String::from("symbol,date,close\n");
    for d in 1..=30 {
        prices.push_str(&format!("SAP,2022-11-{d:02},{}\n", 100 + d));
    }
    import(&app, Kind::Prices, &prices).await.expect("prices");
    import(
        &app,
        Kind::Lots,
        "portfolio,lot,symbol,acquired,quantity,cost,currency\nEURO,S1,SAP,2022-11-01,10,1000.00,EUR\n",
    )
    .await
    .expect("lot");
    let p = problem(
        app.get(&format!("/api/v2/investment/risk?portfolio_id={euro}"), &app.key).await,
        503,
        "market_data_unavailable",
    )
    .await;
    assert!(p["detail"].as_str().expect("detail").contains("EUR/USD"), "{p}");
    let r = app
        .post_json(&format!("/api/v2/investment/portfolios/{euro}/collateral-inventory"), &app.key, &json!({}), None)
        .await;
    problem(r, 503, "market_data_unavailable").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM investment_records").await, before, "nothing recorded");

    // An observed rate (units of USD per EUR) converts; nothing was ever filled in.
    import(&app, Kind::Economics, "date,fx_eurusd\n2022-11-25,1.04\n").await.expect("rate");
    let r = json(&app, &format!("/api/v2/investment/risk?portfolio_id={euro}&lookback_days=30")).await;
    // 10 SAP at the last close, 130.00 EUR, at 1.04: 1,352.00 USD.
    assert_eq!(r["holdings_value_minor"], 135_200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settled_sale_larger_than_the_book_is_a_reconciliation_exception_and_moves_nothing() {
    let app = spawn_app().await;
    demo(&app).await;
    let op = fiscus_apptest::console::enrolled_operator(&app, "ada@example.com", fiscus_domain::people::Role::Approver)
        .await;
    let cookie = fiscus_apptest::console::sign_in(&app, &op).await;
    // An investment order whose ticket sells more AAPL than the book holds (300), proposed directly.
    let ticket = json!({
        "rebalance_proposal": "rbp_01M8C3ZQ5V6J1P8N2T4W0XK7RD", "proposal_hash": format!("sha256:{}", "0".repeat(64)),
        "model_portfolio": "mdp_01M8C3ZQ5V6J1P8N2T4W0XK7RD", "model_portfolio_hash": format!("sha256:{}", "0".repeat(64)),
        "portfolio_id": 1,
        "orders": [{ "symbol": "AAPL", "side": "sell", "quantity": "500", "price_minor": 12567, "notional_minor": 6283500,
                     "weight_before_ppm": 0, "weight_after_ppm": 0 }]
    });
    let mut body = fiscus_apptest::actions::proposal();
    body["kind"] = json!("investment_order");
    body["amount_minor"] = json!(6_283_500);
    body["risk_tier"] = json!("T1");
    body["required_checks"] = json!([]);
    body["metadata"] = ticket;
    let created: Value = app.post_json("/api/v2/actions", &app.key, &body, None).await.json().await.expect("json");
    let id = created["id"].as_str().expect("id").to_string();
    assert_eq!(fiscus_apptest::console::decide(&app, &cookie, &id, "approve").await.status(), 303);
    let r = app.post_json(&format!("/api/v2/actions/{id}/execute"), &app.key, &json!({}), None).await;
    assert!(r.status().is_success());
    app.drain().await;
    let state: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(
        (state["control_state"].as_str(), state["reconciliation_status"].as_str()),
        (Some("reconciliation_exception"), Some("exception")),
        "{state}"
    );
    let recon: Value = app
        .get(&format!("/api/v2/agent-execution/actions/{id}/reconciliation"), &app.key)
        .await
        .json()
        .await
        .expect("json");
    assert!(recon.to_string().contains("book: AAPL cannot be sold"), "{recon}");
    assert_eq!(app.count("SELECT COUNT(*) FROM lot_disposals").await, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM portfolio_cash WHERE environment IS NOT NULL").await, 0);
}
