//! Data quality written down, never silent (issue 34), on files no one here tuned: a close of 0 is in the
//! dataset's quality report and named in every computation's `warnings` that drops it; an economic series
//! missing 56 months is forecast with the gap named, refused for a seasonal model unless filling is asked
//! for (and then the filling is recorded); monthly prices are annualised with 12 periods a year, not 252.

use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_data::import::{self, ImportRequest, Mapping, Silent};
use fiscus_data_core::rules::{Kind, Provenance};
use fiscus_domain::actor::Actor;
use fiscus_kernel::governed::Caller;
use serde_json::{Value, json};

const FORECASTS: &str = "/api/v2/planning/forecasts";

async fn import(app: &TestApp, kind: Kind, name: &str, csv: &str, mapping: Mapping) -> import::Outcome {
    let req = ImportRequest {
        kind,
        file_name: format!("{name}.csv"),
        input: csv.as_bytes().to_vec().into(),
        dataset: None,
        source: "test".into(),
        licence: "CC0-1.0".into(),
        provenance: Provenance::Observed,
        mapping: Mapping { delimiter: b',', ..mapping },
        dry_run: false,
    };
    match import::import(&app.state.store, &Caller::bare(Actor::cli()), &app.workspace_id, req, &Silent).await {
        Ok(o) => o,
        Err(e) => panic!("{name}: {e}"),
    }
}

async fn grant(app: &TestApp) {
    let tenant = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&tenant, 100, "test grant").await.expect("grant");
}

fn warnings<'a>(out: &'a Value, code: &str) -> Vec<&'a Value> {
    out["warnings"].as_array().map(|w| w.iter().filter(|w| w["code"] == code).collect()).unwrap_or_default()
}

/// Weekdays from 2024-01-01 (a Monday).
fn weekdays(n: usize) -> Vec<String> {
    let start = time::macros::date!(2024 - 01 - 01);
    (0..n * 2)
        .map(|i| start + time::Duration::days(i as i64))
        .filter(|d| !matches!(d.weekday(), time::Weekday::Saturday | time::Weekday::Sunday))
        .take(n)
        .map(|d| d.to_string())
        .collect()
}

#[tokio::test]
async fn a_close_of_zero_is_reported_at_import_and_named_where_a_computation_drops_it() {
    let app = spawn_app().await;
    grant(&app).await;
    import(
        &app,
        Kind::Instruments,
        "zc",
        "symbol,name,asset_class,currency\nZC,Zero Close,equity,USD\n",
        Mapping::default(),
    )
    .await;
    let dates = weekdays(60);
    let mut csv = String::from("symbol,date,close\n");
    for (i, d) in dates.iter().enumerate() {
        let close = if i == 30 { 0.0 } else { 50.0 + 3.0 * (i as f64 * 0.9).sin() };
        csv.push_str(&format!("ZC,{d},{close}\n"));
    }
    let o = import(&app, Kind::Prices, "zc_prices", &csv, Mapping::default()).await;
    let q = o.quality.expect("a prices dataset has a quality report");
    assert_eq!((q.series, q.issues > 0), (1, true), "{q:?}");
    assert_eq!(q.findings[0].zero_values.dates, vec![dates[30].clone()]);
    // Served with the dataset.
    let list: Value = app.get("/api/v2/data/datasets?kind=prices", &app.key).await.json().await.expect("json");
    let served = list["data"].as_array().expect("data").iter().find(|d| d["name"] == "zc_prices").expect("listed");
    assert_eq!(served["quality"]["findings"][0]["zero_values"]["dates"], json!([dates[30]]));

    // A forecast of its prices drops the zero and says so, with the date.
    let r =
        app.post_json(FORECASTS, &app.key, &json!({"instrument": "ZC", "model": "arima", "horizon": 3}), None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let out = &job["result"]["output"];
    assert_eq!(out["observations"], 59, "{out}");
    let dropped = warnings(out, "observation_dropped");
    assert_eq!(dropped.len(), 1, "{out}");
    assert_eq!((dropped[0]["symbol"].as_str(), &dropped[0]["dates"]), (Some("ZC"), &json!([dates[30]])));
    assert!(dropped[0]["message"].as_str().is_some_and(|m| m.contains("close is 0")), "{}", dropped[0]);
    assert_eq!(out["frequency"], "daily");

    // A feature of the series leaves the zero out too (a return across it spans the two days around it),
    // in every form.
    let path = "/api/v2/quant/features/return_1d/values?instrument=ZC";
    let r = app.get(path, &app.key).await;
    assert_eq!(r.status(), 200);
    let page: Value = r.json().await.expect("json");
    let values = page["data"].as_array().expect("values");
    assert_eq!(values.len(), 58, "59 prices, 58 returns");
    assert!(values.iter().all(|v| v["date"] != dates[30].as_str() && v["value"].as_f64().is_some_and(f64::is_finite)));
    let csv = app.http.get(app.url(path)).bearer_auth(&app.key).header("accept", "text/csv").send().await.expect("csv");
    assert_eq!(csv.headers()["fiscus-content-hash"].to_str().ok(), page["dataset"]["content_hash"].as_str());
    let text = csv.text().await.expect("text");
    assert!(text.starts_with("date,value\r\n") && text.split("\r\n").count() == 60, "{text}");

    // The report is sealed with its dataset: one edited in the database is refused, not served as the import's.
    app.execute("UPDATE dataset_quality SET report = replace(report, '\"issues\":', '\"issues\":0,\"x\":')").await;
    problem(app.get("/api/v2/data/datasets?kind=prices", &app.key).await, 500, "integrity_failure").await;
    // One without a seal (as a release before the seal wrote it, during a rolling upgrade) is left out.
    app.execute("UPDATE dataset_quality SET seal_mac = NULL").await;
    let list: Value = app.get("/api/v2/data/datasets?kind=prices", &app.key).await.json().await.expect("json");
    let served = list["data"].as_array().expect("data").iter().find(|d| d["name"] == "zc_prices").expect("listed");
    assert_eq!(served["quality"], Value::Null, "{served}");
}

#[tokio::test]
async fn an_economic_series_missing_56_months_names_the_gap_and_a_seasonal_model_needs_filling_allowed() {
    let app = spawn_app().await;
    grant(&app).await;
    let mut csv = String::from("date,unrate\n");
    for i in (0..192).filter(|i| !(30..86).contains(i)) {
        let v = 5.0 + 1.5 * (i as f64 * std::f64::consts::PI / 6.0).sin() + 0.01 * i as f64;
        csv.push_str(&format!("{:04}-{:02}-01,{v:.3}\n", 2000 + i / 12, i % 12 + 1));
    }
    let o =
        import(&app, Kind::Economics, "gappy", &csv, Mapping { units: "percent".into(), ..Mapping::default() }).await;
    let q = o.quality.expect("an economics dataset has a quality report");
    assert_eq!(q.findings[0].gaps.dates, vec!["2002-06-01/2007-03-01"], "{q:?}");
    assert_eq!(q.findings[0].missing_periods, 56);

    // Not seasonal: forecast across the gap, which the answer names.
    let r = app.post_json(FORECASTS, &app.key, &json!({"series": "unrate", "model": "arima"}), None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let out = &job["result"]["output"];
    let bridged = warnings(out, "gap_bridged");
    assert_eq!(bridged.len(), 1, "{out}");
    assert_eq!(bridged[0]["dates"], json!(["2002-06-01/2007-03-01"]));
    assert!(bridged[0]["message"].as_str().is_some_and(|m| m.contains("56 periods missing")), "{}", bridged[0]);
    assert_eq!(out["frequency"], "monthly");

    // Seasonal: refused before anything is queued, naming the gap and the way out.
    let jobs = app.count("SELECT COUNT(*) FROM compute_jobs").await;
    let seasonal = json!({"series": "unrate", "model": "holt_winters", "seasonal_period": 12});
    let r = app.post_json(FORECASTS, &app.key, &seasonal, None).await;
    let p = problem(r, 422, "invalid_request").await;
    let text = p["errors"].to_string();
    assert!(
        text.contains("seasonal_period") && text.contains("2002-06-01/2007-03-01") && text.contains("fill_gaps"),
        "{p}"
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM compute_jobs").await, jobs, "nothing was queued");

    // Filling allowed: the 56 months are filled, and the answer records it.
    let mut filled = seasonal.clone();
    filled["fill_gaps"] = json!("linear");
    let r = app.post_json(FORECASTS, &app.key, &filled, None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let out = &job["result"]["output"];
    assert_eq!(out["observations"], 192, "{out}");
    let f = warnings(out, "gap_filled");
    assert_eq!((f.len(), &f[0]["count"]), (1, &json!(56)), "{out}");
    assert!(warnings(out, "gap_bridged").is_empty(), "{out}");
    assert_eq!(job["request"]["fill_gaps"], "linear", "the filling is part of the sealed request");
}

#[tokio::test]
async fn monthly_prices_are_annualised_with_twelve_periods_and_the_request_can_say_otherwise() {
    let app = spawn_app().await;
    import(
        &app,
        Kind::Instruments,
        "monthly",
        "symbol,name,asset_class,currency\nMON,Monthly Fund,equity,USD\nMBEN,Monthly Index,equity,USD\n",
        Mapping::default(),
    )
    .await;
    let (mut fund, mut index) = (100.0_f64, 100.0_f64);
    let mut csv = String::from("symbol,date,close\n");
    let mut closes = Vec::new();
    for i in 0..48 {
        let date = format!("{:04}-{:02}-01", 2019 + i / 12, i % 12 + 1);
        csv.push_str(&format!("MON,{date},{fund:.6}\nMBEN,{date},{index:.6}\n"));
        closes.push(format!("{fund:.6}").parse::<f64>().expect("number"));
        fund *= 1.0 + 0.01 + 0.04 * (i as f64 * 1.3).sin();
        index *= 1.0 + 0.008 + 0.03 * (i as f64 * 0.7).cos();
    }
    import(&app, Kind::Prices, "monthly_prices", &csv, Mapping::default()).await;
    import(
        &app,
        Kind::Portfolios,
        "monthly_book",
        "code,name,base_currency,benchmark\nMONTHLY,Monthly book,USD,MBEN\n",
        Mapping::default(),
    )
    .await;
    import(
        &app,
        Kind::Lots,
        "monthly_lots",
        "portfolio,lot,symbol,acquired,quantity,cost,currency\nMONTHLY,M1,MON,2019-01-01,100,10000.00,USD\n",
        Mapping::default(),
    )
    .await;
    let list: Value = app.get("/api/v2/investment/portfolios", &app.key).await.json().await.expect("json");
    let id = list["data"].as_array().expect("data").iter().find(|p| p["code"] == "MONTHLY").expect("listed")["id"]
        .as_i64()
        .expect("id");

    let returns: Vec<f64> = closes.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
    let mean = returns.iter().sum::<f64>() / returns.len() as f64;
    let sd = (returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (returns.len() - 1) as f64).sqrt();
    let path = format!("/api/v2/investment/risk?portfolio_id={id}&lookback_days=3650");
    let r: Value = app.get(&path, &app.key).await.json().await.expect("json");
    assert_eq!((r["periods_per_year"].as_f64(), r["frequency"].as_str()), (Some(12.0), Some("monthly")), "{r}");
    assert_eq!(r["observations"], 47);
    let vol = r["annual_volatility"].as_f64().expect("number");
    assert!((vol - sd * 12f64.sqrt()).abs() < 1e-12, "{vol} vs {}", sd * 12f64.sqrt());
    assert!(warnings(&r, "frequency_inferred").len() == 1, "{r}");
    // Said otherwise by the request: that is what is used, and nothing is inferred.
    let r: Value = app.get(&format!("{path}&periods_per_year=252"), &app.key).await.json().await.expect("json");
    assert_eq!(r["periods_per_year"], 252.0);
    assert!((r["annual_volatility"].as_f64().expect("number") - sd * 252f64.sqrt()).abs() < 1e-12);
    assert!(warnings(&r, "frequency_inferred").is_empty(), "{r}");
    problem(app.get(&format!("{path}&periods_per_year=0"), &app.key).await, 422, "invalid_parameter").await;

    let c: Value = app
        .get(&format!("/api/v2/benchmarking/comparisons?portfolio_id={id}&start=2019-01-01"), &app.key)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!((c["periods_per_year"].as_f64(), c["observations"].as_u64()), (Some(12.0), Some(47)), "{c}");
    let annual = c["portfolio_annual_return"].as_f64().expect("number");
    let growth: f64 = returns.iter().map(|r| 1.0 + r).product();
    let cagr = growth.powf(12.0 / returns.len() as f64) - 1.0;
    assert!((annual - cagr).abs() < 1e-9, "{annual} vs {cagr}: annualised by months, not trading days");

    // A report and the company view annualise by the same months (a construction needs 60 returns: five
    // years of months, more than this book has).
    let body = serde_json::json!({ "portfolio_id": id, "start": "2019-01-01" });
    let r = app.post_json("/api/v2/investment/reports", &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let out = r.json::<Value>().await.expect("json")["output"].clone();
    assert_eq!((out["periods_per_year"].as_f64(), out["frequency"].as_str()), (Some(12.0), Some("monthly")), "{out}");
    let vol = out["performance"]["annual_volatility"].as_f64().expect("number");
    assert!((vol - sd * 12f64.sqrt()).abs() < 1e-9, "{vol} vs {}", sd * 12f64.sqrt());
    assert!(warnings(&out, "frequency_inferred").len() == 1, "{out}");
    let body = serde_json::json!({ "portfolio_id": id, "periods_per_year": 0 });
    problem(app.post_json("/api/v2/investment/reports", &app.key, &body, None).await, 422, "invalid_request").await;
    let company: Value = app.get("/api/v2/investment/companies/MON", &app.key).await.json().await.expect("json");
    assert_eq!(company["prices"]["periods_per_year"], 12.0, "{company}");
    assert_eq!(company["prices"]["frequency"], "monthly");
}

/// Sample standard deviation (numpy's `std(ddof=1)`) and mean.
fn mean_sd(x: &[f64]) -> (f64, f64) {
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let var = x.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (x.len() - 1) as f64;
    (mean, var.sqrt())
}

fn close_to(got: &Value, expected: f64, what: &str) {
    let got = got.as_f64().unwrap_or_else(|| panic!("{what}: not a number: {got}"));
    assert!((got - expected).abs() <= 1e-9 * expected.abs().max(1.0), "{what}: {got} vs {expected}");
}

/// One frequency rule everywhere (issue 55): on monthly, weekly and daily prices of the same two instruments'
/// shape, a backtest's statistics and a simulation's estimates are annualised with 12, 52 and 252 periods,
/// matching a plain recomputation (empyrical's and numpy's formulas with those periods) to 1e-9; the answers
/// name the frequency and the periods; a backtest rebalances about monthly at each frequency; an override
/// that disagrees with the dates is used and named; a feature counted in trading days refuses monthly prices.
#[tokio::test]
async fn backtests_simulations_and_features_take_the_frequency_of_their_dates() {
    let app = spawn_app().await;
    grant(&app).await;
    let mut instruments = String::from("symbol,name,asset_class,currency\n");
    for f in ["M", "W", "D"] {
        instruments.push_str(&format!("{f}A,{f} one,equity,USD\n{f}B,{f} two,equity,USD\n"));
    }
    import(&app, Kind::Instruments, "freq_instruments", &instruments, Mapping::default()).await;
    let monthly: Vec<String> = (0..48).map(|i| format!("{:04}-{:02}-01", 2019 + i / 12, i % 12 + 1)).collect();
    let start = time::macros::date!(2020 - 01 - 06);
    let weekly: Vec<String> = (0..104).map(|i| (start + time::Duration::weeks(i)).to_string()).collect();
    let daily = weekdays(300);
    for (prefix, dates, ppy, every) in [("M", &monthly, 12.0, 1), ("W", &weekly, 52.0, 4), ("D", &daily, 252.0, 21)] {
        let mut csv = String::from("symbol,date,close\n");
        let (mut a, mut b) = (100.0_f64, 50.0_f64);
        let mut closes: Vec<[f64; 2]> = Vec::new();
        for (i, d) in dates.iter().enumerate() {
            csv.push_str(&format!("{prefix}A,{d},{a:.6}\n{prefix}B,{d},{b:.6}\n"));
            closes.push([format!("{a:.6}").parse().expect("a"), format!("{b:.6}").parse().expect("b")]);
            a *= 1.0 + 0.006 + 0.03 * (i as f64 * 1.7).sin();
            b *= 1.0 + 0.004 + 0.02 * (i as f64 * 0.9).cos();
        }
        import(&app, Kind::Prices, &format!("{prefix}_prices"), &csv, Mapping::default()).await;
        let (sa, sb) = (format!("{prefix}A"), format!("{prefix}B"));

        // A backtest: its equity curve's returns (from the initial cash) annualised with the dates' periods.
        let body = json!({ "weights": { &sa: 0.5, &sb: 0.5 } });
        let r = app.post_json("/api/v2/quant/compute/backtests", &app.key, &body, None).await;
        assert_eq!(r.status(), 201, "{prefix}");
        let out = r.json::<Value>().await.expect("json")["result"]["output"].clone();
        assert_eq!((out["periods_per_year"].as_f64(), out["rebalance_every"].as_u64()), (Some(ppy), Some(every)));
        let frequency = ["monthly", "weekly", "daily"][["M", "W", "D"].iter().position(|p| *p == prefix).unwrap_or(0)];
        assert_eq!(out["frequency"], frequency, "{out}");
        let mut values = vec![1_000_000.0];
        values.extend(out["equity_curve"].as_array().expect("curve").iter().map(|p| p["value"].as_f64().expect("v")));
        let returns: Vec<f64> = values.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
        let (mean, sd) = mean_sd(&returns);
        let growth = values.last().copied().unwrap_or(1.0) / values[0];
        let risk = &out["risk"];
        close_to(&risk["annual_volatility"], sd * ppy.sqrt(), &format!("{prefix} annual volatility"));
        close_to(&risk["annual_return"], growth.powf(ppy / returns.len() as f64) - 1.0, &format!("{prefix} return"));
        close_to(&risk["sharpe_ratio"], mean / sd * ppy.sqrt(), &format!("{prefix} Sharpe ratio"));
        assert!(warnings(&out, "frequency_overridden").is_empty(), "{out}");

        // A simulation from the instruments: GBM drift and volatility from their log returns, annualised alike.
        let body = json!({ "instruments": [&sa, &sb], "horizon_years": 1.0, "steps": 12, "paths": 200, "seed": 7 });
        let r = app.post_json("/api/v2/quant/compute/simulations", &app.key, &body, None).await;
        assert_eq!(r.status(), 201, "{prefix}");
        let out = r.json::<Value>().await.expect("json")["result"]["output"].clone();
        assert_eq!((out["periods_per_year"].as_f64(), out["frequency"].as_str()), (Some(ppy), Some(frequency)));
        for (k, asset) in out["assets"].as_array().expect("assets").iter().enumerate() {
            let logs: Vec<f64> = closes.windows(2).map(|w| (w[1][k] / w[0][k]).ln()).collect();
            let (m, s) = mean_sd(&logs);
            close_to(&asset["drift"], ppy * m + 0.5 * ppy * s * s, &format!("{prefix} drift of asset {k}"));
            close_to(&asset["initial"], closes.last().expect("last")[k], "the last price starts each path");
        }
    }

    // Monthly prices annualised as trading days because the request says so: used, and named.
    let body = json!({ "weights": { "MA": 0.5, "MB": 0.5 }, "periods_per_year": 252 });
    let out = app.post_json("/api/v2/quant/compute/backtests", &app.key, &body, None).await.json::<Value>().await;
    let out = out.expect("json")["result"]["output"].clone();
    assert_eq!(out["periods_per_year"], 252.0);
    let said = warnings(&out, "frequency_overridden");
    assert_eq!(said.len(), 1, "{out}");
    assert!(said[0]["message"].as_str().unwrap_or("").contains("monthly"), "{out}");
    // Two bars a month apart: an annual figure extrapolates one return, and says so.
    let body = json!({ "weights": { "MA": 1.0 }, "start": "2019-01-01", "end": "2019-02-01" });
    let out = app.post_json("/api/v2/quant/compute/backtests", &app.key, &body, None).await.json::<Value>().await;
    assert_eq!(warnings(&out.expect("json")["result"]["output"], "short_history").len(), 1);

    // A 21-trading-day window is not stretched to 21 months: refused on monthly prices, served on daily ones.
    let refused =
        problem(app.get("/api/v2/quant/features/volatility_21d/values?instrument=MA", &app.key).await, 409, "conflict")
            .await;
    assert_eq!(refused["frequency"], "monthly", "{refused}");
    let daily_values = app.get("/api/v2/quant/features/volatility_21d/values?instrument=DA", &app.key).await;
    assert_eq!(daily_values.status(), 200);
    let drawdown = app.get("/api/v2/quant/features/drawdown/values?instrument=MA", &app.key).await;
    assert_eq!(drawdown.status(), 200, "a drawdown has no window: any frequency");
}
