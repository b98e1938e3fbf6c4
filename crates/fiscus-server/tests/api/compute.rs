//! Compute jobs over HTTP: an optimisation's numbers equal the engine's, small jobs answer in the request
//! and others are queued for the worker, cancel, a worker's death mid-job, credits, and bad input.

use fiscus_apptest::{TestApp, problem, spawn_app, spawn_app_with};
use fiscus_data::import::Silent;
use fiscus_domain::actor::Actor;
use fiscus_domain::clock::now_micros;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::Caller;
use fiscus_quant::Matrix;
use fiscus_quant::optimise::mean_variance::{Constraints, Objective, optimise_from_returns};
use serde_json::{Value, json};

const OPTIMIZE: &str = "/api/v2/quant/compute/optimizations";

fn returns() -> Vec<Vec<f64>> {
    // Three assets, 60 periods of deterministic, distinct returns.
    (0..60)
        .map(|t| {
            let t = t as f64;
            vec![0.001 + 0.01 * (t * 0.7).sin(), 0.0005 + 0.015 * (t * 1.3).cos(), 0.0008 + 0.008 * (t * 0.4).sin()]
        })
        .collect()
}

fn inline_body(objective: &str) -> Value {
    json!({ "objective": objective, "returns": fiscus_apptest::columns(&["A", "B", "C"], &json!(returns())) })
}

async fn grant(app: &TestApp, credits: i64) {
    let tenant = Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&tenant, credits, "test grant").await.expect("grant");
}

async fn post(app: &TestApp, body: &Value, prefer_async: bool) -> reqwest::Response {
    let mut req = app.http.post(app.url(OPTIMIZE)).bearer_auth(&app.key).json(body);
    if prefer_async {
        req = req.header("Prefer", "respond-async");
    }
    req.send().await.expect("request")
}

async fn wait_for_end(app: &TestApp, id: &str) -> Value {
    app.ended_job(id).await
}

fn weights(job: &Value) -> Vec<f64> {
    job["result"]["output"]["weights"]
        .as_array()
        .expect("weights")
        .iter()
        .map(|w| w["weight"].as_f64().expect("w"))
        .collect()
}

#[tokio::test]
async fn a_small_optimisation_answers_in_the_request_with_the_engines_numbers_sealed() {
    let app = spawn_app().await;
    grant(&app, 100).await;
    for (objective, engine) in
        [("min_variance", Objective::MinVariance), ("max_sharpe", Objective::MaxSharpe { risk_free: 0.0 })]
    {
        let r = post(&app, &inline_body(objective), false).await;
        assert_eq!(r.status(), 201, "{objective}");
        let location = r.headers()["location"].to_str().expect("location").to_string();
        let job: Value = r.json().await.expect("json");
        assert_eq!(location, format!("/api/v2/quant/compute/jobs/{}", job["id"].as_str().expect("id")));
        assert_eq!(job["status"], "succeeded");
        assert_eq!(job["progress"], 1.0);
        assert_eq!(job["credits"], 1);
        let expected = optimise_from_returns(
            &Matrix::from_rows(&returns()).expect("matrix"),
            252.0,
            engine,
            &Constraints::long_only(3),
        )
        .expect("engine");
        assert_eq!(weights(&job), expected.weights, "{objective}");
        assert_eq!(job["result"]["output"]["volatility"].as_f64(), Some(expected.volatility));
        // The hashes are what they say: the output's RFC 8785 form, and the result binding request and engine.
        let output_hash = fiscus_domain::evidence::seal(&job["result"]["output"]).expect("seal");
        assert_eq!(job["result"]["output_hash"], output_hash);
        assert_eq!(job["request_hash"], fiscus_domain::evidence::seal(&job["request"]).expect("seal"));
        let result_hash = fiscus_domain::evidence::seal(&json!({
            "request_hash": job["request_hash"], "engine_version": job["engine_version"], "output_hash": output_hash
        }))
        .expect("seal");
        assert_eq!(job["result"]["result_hash"], result_hash);
        // Read back, the same.
        let again: Value = app.get(&location, &app.key).await.json().await.expect("json");
        assert_eq!(again["result"], job["result"]);
    }
    let balance: Value = app.get("/api/v2/ai-credits/balance", &app.key).await.json().await.expect("json");
    assert_eq!(balance["consumed"], 2);
}

#[tokio::test]
async fn a_queued_job_is_run_by_the_worker_to_the_same_numbers_and_listed() {
    let app = spawn_app().await;
    grant(&app, 100).await;
    let inline: Value = post(&app, &inline_body("min_variance"), false).await.json().await.expect("json");
    let r = post(&app, &inline_body("min_variance"), true).await;
    assert_eq!(r.status(), 202);
    assert_eq!(r.headers()["preference-applied"], "respond-async");
    let queued: Value = r.json().await.expect("json");
    assert!(["queued", "running", "succeeded"].contains(&queued["status"].as_str().unwrap_or_default()));
    let done = wait_for_end(&app, queued["id"].as_str().expect("id")).await;
    assert_eq!(done["status"], "succeeded", "{done}");
    assert_eq!(weights(&done), weights(&inline));
    assert_eq!(done["request_hash"], inline["request_hash"]);
    assert_eq!(done["result"]["output_hash"], inline["result"]["output_hash"]);
    assert_eq!(done["attempts"], 1);
    let list: Value = app.get("/api/v2/quant/compute/jobs?limit=1", &app.key).await.json().await.expect("json");
    assert_eq!(list["data"][0]["id"], done["id"]);
    assert_eq!(list["has_more"], true);
    let next = list["next_after_id"].as_str().expect("cursor");
    let rest: Value =
        app.get(&format!("/api/v2/quant/compute/jobs?after_id={next}"), &app.key).await.json().await.expect("json");
    assert_eq!(rest["data"][0]["id"], inline["id"]);
    let failed: Value = app.get("/api/v2/quant/compute/jobs?status=failed", &app.key).await.json().await.expect("json");
    assert_eq!(failed["data"].as_array().map(Vec::len), Some(0));
}

#[tokio::test]
async fn instruments_are_read_from_the_data_plane_pinned_to_their_datasets() {
    let app = spawn_app().await;
    grant(&app, 100).await;
    app.load_demo().await;
    let body = json!({"objective": "min_variance", "instruments": ["AAPL", "MSFT", "JPM"], "start": "2015-01-01", "end": "2016-12-31"});
    let r = post(&app, &body, false).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let pinned = job["request"]["returns"]["instruments"].as_array().expect("pinned");
    assert_eq!(pinned.len(), 3);
    assert!(pinned.iter().all(|p| p["dataset"].as_i64().is_some() && p["content_hash"].as_str().is_some()));
    let w = weights(&job);
    assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-6 && w.iter().all(|x| *x >= -1e-9), "{w:?}");
    let out = &job["result"]["output"];
    assert_eq!(out["first_date"].as_str().map(|d| d >= "2015-01-01"), Some(true));
    assert_eq!(out["last_date"].as_str().map(|d| d <= "2016-12-31"), Some(true));
    assert!(out["periods"].as_i64().is_some_and(|n| n > 400), "{out}");
    let unknown = post(&app, &json!({"objective": "min_variance", "instruments": ["NOPE"]}), false).await;
    // An instrument the workspace does not hold: 409 naming the field (the body itself is well formed).
    let p = problem(unknown, 409, "reference_not_found").await;
    assert!(p.to_string().contains("NOPE") && p["errors"][0]["field"] == "instruments", "{p}");
}

#[tokio::test]
async fn cancel_stops_a_queued_job_and_refunds_it_and_an_ended_job_is_a_conflict() {
    let app = spawn_app_with(|s| s.compute_worker = false).await;
    grant(&app, 10).await;
    let queued: Value = post(&app, &inline_body("min_variance"), true).await.json().await.expect("json");
    assert_eq!(queued["status"], "queued");
    let id = queued["id"].as_str().expect("id");
    let cancel = format!("/api/v2/quant/compute/jobs/{id}/cancel");
    let r = app.post_json(&cancel, &app.key, &json!({}), None).await;
    assert_eq!(r.status(), 200);
    let cancelled: Value = r.json().await.expect("json");
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled["result"].is_null());
    let balance: Value = app.get("/api/v2/ai-credits/balance", &app.key).await.json().await.expect("json");
    assert_eq!(balance["balance"], 10, "refunded: {balance}");
    problem(app.post_json(&cancel, &app.key, &json!({}), None).await, 409, "conflict").await;
    problem(app.get("/api/v2/quant/compute/jobs/cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD", &app.key).await, 404, "not_found")
        .await;
}

#[tokio::test]
async fn a_job_whose_worker_died_is_retaken_and_ends_once() {
    let app = spawn_app_with(|s| s.compute_worker = false).await;
    grant(&app, 10).await;
    let queued: Value = post(&app, &inline_body("max_sharpe"), true).await.json().await.expect("json");
    let id = queued["id"].as_str().expect("id").to_string();
    // A worker claims it and dies without a word: its claim goes stale.
    let mut tx = app.state.store.begin().await.expect("tx");
    let long_ago = now_micros() - 10 * fiscus_models::compute::STALE_AFTER;
    let claimed =
        fiscus_models::tables::compute::claim(&mut tx, "wrk_dead", long_ago, fiscus_models::compute::STALE_AFTER, 8, 8)
            .await
            .expect("claim");
    tx.commit().await.expect("commit");
    assert_eq!(claimed.len(), 1);
    let running: Value =
        app.get(&format!("/api/v2/quant/compute/jobs/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(running["status"], "running");
    // Another node's worker retakes it and finishes it; the dead worker can no longer end it.
    let n = fiscus_server::workers::compute::run_once(&app.state, "wrk_alive").await.expect("pass");
    assert_eq!(n, 1);
    let done = wait_for_end(&app, &id).await;
    assert_eq!(done["status"], "succeeded");
    assert_eq!(done["attempts"], 2);
    let mut tx = app.state.store.begin().await.expect("tx");
    let tenant = claimed[0].tenant.clone();
    let late = fiscus_models::tables::compute::finish(
        &mut tx,
        &tenant,
        &id,
        Some("wrk_dead"),
        now_micros(),
        fiscus_models::tables::compute::Ending::Cancelled,
    )
    .await
    .expect("finish");
    assert!(!late);
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM compute_results WHERE job_id = '{id}'")).await, 1);
}

#[tokio::test]
async fn credits_bad_input_and_engine_refusals_are_typed_and_change_nothing() {
    let app = spawn_app().await;
    // No credits at all.
    let p = problem(post(&app, &inline_body("min_variance"), false).await, 402, "credits_exhausted").await;
    assert!(p["detail"].as_str().is_some_and(|d| d.contains("balance")), "{p}");
    problem(post(&app, &inline_body("min_variance"), true).await, 402, "credits_exhausted").await;
    grant(&app, 5).await;
    // Bounds no portfolio of these assets meets (three assets at least 0.5 each; a maximum below the
    // minimum): 409 with the engine's typed reason, nothing stored.
    let mut body = inline_body("min_variance");
    body["min_weight"] = json!(0.5);
    let p = problem(post(&app, &body, false).await, 409, "conflict").await;
    assert_eq!(p["engine_error"], "infeasible", "{p}");
    let mut body = inline_body("min_variance");
    body["min_weight"] = json!(0.3);
    body["max_weight"] = json!(0.2);
    let p = problem(post(&app, &body, false).await, 409, "conflict").await;
    assert_eq!(p["engine_error"], "infeasible", "{p}");
    for bad in [
        json!({"objective": "min_variance"}),
        json!({"objective": "efficient_risk", "returns": fiscus_apptest::columns(&["A", "B"], &json!([[0.1, 0.2], [0.0, 0.1]]))}),
        json!({"objective": "min_variance", "instruments": ["AAPL"], "returns": fiscus_apptest::columns(&["A"], &json!([[0.1], [0.2]]))}),
        json!({"objective": "min_variance", "instruments": ["AAPL"], "start": "2020-02-30"}),
        json!({"objective": "min_variance", "returns": fiscus_apptest::columns(&["A"], &json!([[0.1], [0.2]])), "max_weight": 2}),
    ] {
        let r = post(&app, &bad, false).await;
        assert_eq!(r.status(), 422, "{bad}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM compute_jobs").await, 0);
    let balance: Value = app.get("/api/v2/ai-credits/balance", &app.key).await.json().await.expect("json");
    assert_eq!(balance["balance"], 5);
    // Another workspace's job is invisible.
    let ok: Value = post(&app, &inline_body("min_variance"), false).await.json().await.expect("json");
    let (_, other_key) = app.other_workspace_key().await;
    let path = format!("/api/v2/quant/compute/jobs/{}", ok["id"].as_str().expect("id"));
    problem(app.get(&path, &other_key).await, 404, "not_found").await;
    problem(app.post_json(&format!("{path}/cancel"), &other_key, &json!({}), None).await, 404, "not_found").await;
}

fn gbm_body(paths: u32, seed: u64) -> Value {
    json!({
        "parameters": {
            "EQUITY": { "initial": 100.0, "drift": 0.06, "volatility": 0.2, "correlations": { "GOLD": 0.1 } },
            "GOLD": { "initial": 50.0, "drift": 0.02, "volatility": 0.15 }
        },
        "horizon_years": 1.0, "steps": 12, "paths": paths, "seed": seed, "weights": { "EQUITY": 0.6, "GOLD": 0.4 }
    })
}

#[tokio::test]
async fn a_simulation_is_the_engines_paths_for_its_seed_and_reproducible_in_chunks() {
    let app = spawn_app().await;
    grant(&app, 100).await;
    let post = |body: Value| {
        let app = &app;
        async move {
            app.http
                .post(app.url("/api/v2/quant/compute/simulations"))
                .bearer_auth(&app.key)
                .json(&body)
                .send()
                .await
                .expect("request")
        }
    };
    let r = post(gbm_body(5_000, 11)).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    // The covariance σᵢσⱼρᵢⱼ of the volatilities and correlation given.
    let (s, rho) = ([0.2_f64, 0.15], 0.1);
    let covariance =
        Matrix::from_rows(&[vec![s[0] * s[0] * 1.0, s[0] * s[1] * rho], vec![s[1] * s[0] * rho, s[1] * s[1] * 1.0]])
            .expect("matrix");
    let spec = fiscus_quant::simulate::gbm::GbmSpec {
        initial: &[100.0, 50.0],
        drift: &[0.06, 0.02],
        covariance: &covariance,
        horizon_years: 1.0,
        steps: 12,
        paths: 5_000,
        seed: 11,
    };
    let terminal = fiscus_quant::simulate::gbm::gbm_terminal_prices(&spec).expect("engine");
    for i in 0..2 {
        let column: Vec<f64> = (0..5_000).map(|p| terminal.row(p)[i]).collect();
        let mean = column.iter().sum::<f64>() / 5_000.0;
        assert_eq!(job["result"]["output"]["assets"][i]["mean"].as_f64(), Some(mean), "asset {i}");
    }
    let portfolio = &job["result"]["output"]["portfolio"];
    assert!(portfolio["value_at_risk_95"].as_f64().is_some_and(|v| v > 0.0 && v < 1.0), "{portfolio}");
    // More paths than a chunk: the same request twice gives the same numbers, queued or not.
    let first: Value = post(gbm_body(25_000, 3)).await.json().await.expect("json");
    let queued = app
        .http
        .post(app.url("/api/v2/quant/compute/simulations"))
        .bearer_auth(&app.key)
        .header("Prefer", "respond-async")
        .json(&gbm_body(25_000, 3))
        .send()
        .await
        .expect("request");
    assert_eq!(queued.status(), 202);
    let queued: Value = queued.json().await.expect("json");
    let second = wait_for_end(&app, queued["id"].as_str().expect("id")).await;
    assert_eq!(second["status"], "succeeded", "{second}");
    assert_eq!(first["result"]["output_hash"], second["result"]["output_hash"]);
    // Without a seed one is drawn and recorded, so the job can be run again.
    let mut unseeded = gbm_body(100, 0);
    unseeded.as_object_mut().expect("object").remove("seed");
    let drawn: Value = post(unseeded).await.json().await.expect("json");
    assert!(drawn["request"]["seed"].as_u64().is_some(), "{drawn}");
    for bad in [json!({"horizon_years": 1.0, "steps": 1, "paths": 1}), {
        let mut b = gbm_body(10, 1);
        b["parameters"]["GOLD"]["volatility"] = json!(0.0);
        b
    }] {
        assert_eq!(post(bad.clone()).await.status(), 422, "{bad}");
    }
    // Sizes each within its bounds whose product is past the job limit: 409, as no schema states it.
    let mut huge = gbm_body(1_000_000, 1);
    huge["steps"] = json!(10_000);
    problem(post(huge).await, 409, "limit_exceeded").await;
    // Parts of the body that disagree with each other, in ways no schema states: 409, and nothing is run.
    let mut disagreeing = Vec::new();
    for (pointer, value) in [
        ("/parameters/EQUITY/correlations", json!({ "SILVER": 0.1 })),
        ("/parameters/EQUITY/correlations", json!({ "EQUITY": 0.5 })),
        (
            "/parameters/GOLD",
            json!({ "initial": 50.0, "drift": 0.02, "volatility": 0.15, "correlations": { "EQUITY": 0.2 } }),
        ),
        ("/weights", json!({ "SILVER": 1.0 })),
    ] {
        let mut b = gbm_body(10, 1);
        *b.pointer_mut(pointer).expect("member") = value;
        disagreeing.push(b);
    }
    // Correlations no returns can have: 1, -0.9 and 0.9 around three assets.
    let mut b = gbm_body(10, 1);
    b["parameters"]["EQUITY"]["correlations"] = json!({ "GOLD": 0.9, "OIL": -0.9 });
    b["parameters"]["OIL"] =
        json!({ "initial": 80.0, "drift": 0.0, "volatility": 0.3, "correlations": { "GOLD": 0.9 } });
    disagreeing.push(b);
    for b in disagreeing {
        problem(post(b).await, 409, "conflict").await;
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM compute_jobs WHERE kind = 'simulation'").await, 4);
}

#[tokio::test]
async fn a_backtest_is_the_engines_run_on_the_pinned_prices() {
    let app = spawn_app().await;
    grant(&app, 100).await;
    app.load_demo().await;
    let body = json!({
        "weights": {"AAPL": 0.4, "JPM": 0.3, "MSFT": 0.3}, "start": "2015-01-01",
        "end": "2017-12-31", "rebalance_every": 21, "initial_cash": 1000000, "fee_rate": 0.001
    });
    let r = app.post_json("/api/v2/quant/compute/backtests", &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let (pinned, dates, expected) = engine_backtest(&app, &job, &[0.4, 0.3, 0.3], 0.001).await;
    let out = &job["result"]["output"];
    assert_eq!(out["final_value"].as_f64(), expected.values.last().copied());
    assert_eq!(out["total_fees"].as_f64(), Some(expected.total_fees));
    assert_eq!(out["equity_curve"].as_array().map(Vec::len), Some(dates));
    assert_eq!(job["credits"], 1);
    for bad in [
        json!({"weights": {"AAPL": 1.5}}),
        json!({"weights": {}}),
        json!({"instruments": ["AAPL"], "weights": [1.0]}),
        json!({"weights": {"AAPL": 1.0}, "fee_rate": 0.5}),
    ] {
        let r = app.post_json("/api/v2/quant/compute/backtests", &app.key, &bad, None).await;
        assert_eq!(r.status(), 422, "{bad}");
    }
    // Two names of one instrument are a fact of the workspace's data (409); an unknown one is not held.
    let aapl_id = panel_instrument(&pinned, "AAPL");
    let twice = json!({"weights": {"AAPL": 0.5, aapl_id: 0.5}});
    problem(app.post_json("/api/v2/quant/compute/backtests", &app.key, &twice, None).await, 409, "conflict").await;
    let unknown = json!({"weights": {"NOPE": 0.5}});
    problem(
        app.post_json("/api/v2/quant/compute/backtests", &app.key, &unknown, None).await,
        409,
        "reference_not_found",
    )
    .await;
    // Weights adding up to more than 1 trade as vectorbt trades them: buys cut to the cash left, no borrowing.
    let over = json!({"weights": {"AAPL": 0.7, "MSFT": 0.7}, "start": "2015-01-01", "end": "2015-12-31"});
    let r = app.post_json("/api/v2/quant/compute/backtests", &app.key, &over, None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let (_, _, expected) = engine_backtest(&app, &job, &[0.7, 0.7], 0.0).await;
    let out = &job["result"]["output"];
    assert_eq!(out["final_value"].as_f64(), expected.values.last().copied());
    assert!(expected.cash.iter().all(|c| *c >= -1e-6), "no borrowing");
    // Equal orders go in the order of the names (vectorbt's column order with the columns sorted by name; a
    // JSON object's members have no order): the last name is the one cut, however the body orders them.
    for order in [["MSFT", "AAPL"], ["AAPL", "MSFT"]] {
        let body = format!(
            r#"{{"weights": {{"{}": 0.6, "{}": 0.6}}, "start": "2015-01-01", "end": "2015-01-31", "rebalance_every": 1000}}"#,
            order[0], order[1]
        );
        let r = app
            .http
            .post(app.url("/api/v2/quant/compute/backtests"))
            .bearer_auth(&app.key)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request");
        let job: Value = r.json().await.expect("json");
        let pinned: Vec<&str> = job["request"]["prices"]["instruments"]
            .as_array()
            .expect("pinned")
            .iter()
            .filter_map(|i| i["symbol"].as_str())
            .collect();
        assert_eq!(pinned, ["AAPL", "MSFT"], "pinned in the order of the names, whatever order the body gives");
        let (_, _, engine) = engine_backtest_ordered(&app, &job).await;
        let positions: Vec<f64> = job["result"]["output"]["final_positions"]
            .as_array()
            .expect("positions")
            .iter()
            .filter_map(|p| p["quantity"].as_f64())
            .collect();
        assert_eq!(positions, engine.final_positions, "the engine's run of the same column order");
        // At the first close both buys are equal (60% of the cash each); the first given is filled in full, the
        // second is cut to the 40% left.
        let bought: Vec<(usize, f64)> =
            engine.fills.iter().filter(|f| f.row == 0).map(|f| (f.asset, f.size * f.price)).collect();
        assert_eq!(bought.len(), 2, "{bought:?}");
        assert!((bought[0].1 - 600_000.0).abs() < 1e-6 && (bought[1].1 - 400_000.0).abs() < 1e-6, "{bought:?}");
        assert_eq!((bought[0].0, bought[1].0), (0, 1), "the last name is the one cut: {order:?}");
    }
}

/// The engine's own run of a backtest job as pinned (its weights, order and schedule), for comparing.
async fn engine_backtest_ordered(
    app: &TestApp,
    job: &Value,
) -> (fiscus_kernel::inputs::PinnedPrices, usize, fiscus_quant::backtest::BacktestResult) {
    let pinned: fiscus_kernel::inputs::PinnedPrices =
        serde_json::from_value(job["request"]["prices"].clone()).expect("pinned");
    let weights: Vec<f64> =
        job["request"]["weights"].as_array().expect("weights").iter().filter_map(Value::as_f64).collect();
    let every = job["request"]["rebalance_every"].as_u64().unwrap_or(21) as usize;
    let panel = fiscus_kernel::inputs::load(&app.state, &app.workspace_id, &pinned).await.expect("panel");
    let close = Matrix::from_rows(&panel.prices).expect("matrix");
    let schedule = fiscus_quant::backtest::periodic_schedule(panel.prices.len(), every, &weights).expect("plan");
    let config = fiscus_quant::backtest::BacktestConfig { initial_cash: 1_000_000.0, fee_rate: 0.0 };
    let expected = fiscus_quant::backtest::run(&close, &schedule, config).expect("engine");
    (pinned, panel.dates.len(), expected)
}

/// The engine's own run of a backtest job's pinned prices (monthly rebalancing, 1,000,000 of cash): the
/// pinned prices, the number of dates and the result.
async fn engine_backtest(
    app: &TestApp,
    job: &Value,
    weights: &[f64],
    fee_rate: f64,
) -> (fiscus_kernel::inputs::PinnedPrices, usize, fiscus_quant::backtest::BacktestResult) {
    let pinned: fiscus_kernel::inputs::PinnedPrices =
        serde_json::from_value(job["request"]["prices"].clone()).expect("pinned");
    let panel = fiscus_kernel::inputs::load(&app.state, &app.workspace_id, &pinned).await.expect("panel");
    let close = Matrix::from_rows(&panel.prices).expect("matrix");
    let schedule = fiscus_quant::backtest::periodic_schedule(panel.prices.len(), 21, weights).expect("plan");
    let config = fiscus_quant::backtest::BacktestConfig { initial_cash: 1_000_000.0, fee_rate };
    let expected = fiscus_quant::backtest::run(&close, &schedule, config).expect("engine");
    (pinned, panel.dates.len(), expected)
}

fn panel_instrument(pinned: &fiscus_kernel::inputs::PinnedPrices, symbol: &str) -> String {
    pinned.instruments.iter().find(|i| i.symbol == symbol).expect("pinned").instrument.clone()
}

#[tokio::test]
async fn synthetic_prices_never_feed_a_computation() {
    use fiscus_data::import::{self, ImportRequest, Mapping};
    use fiscus_data_core::rules::{Kind, Provenance};
    let app = spawn_app().await;
    grant(&app, 100).await;
    let file = |kind: Kind, csv: String, provenance: Provenance| ImportRequest {
        kind,
        file_name: format!("{}.csv", kind.as_str()),
        input: csv.into_bytes().into(),
        dataset: None,
        source: "test".into(),
        licence: "CC0-1.0".into(),
        provenance,
        mapping: Mapping { delimiter: b',', ..Mapping::default() },
        dry_run: false,
    };
    let caller = Caller::bare(Actor::cli());
    let instruments = "symbol,name,asset_class,currency\nAAA,Alpha,equity,USD\nBBB,Beta,equity,USD\n".to_string();
    import::import(
        &app.state.store,
        &caller,
        &app.workspace_id,
        file(Kind::Instruments, instruments, Provenance::Observed),
        &Silent,
    )
    .await
    .expect("instruments");
    let mut prices = String::from("symbol,date,close\n");
    for d in 1..=28 {
        prices.push_str(&format!("AAA,2020-02-{d:02},{}\nBBB,2020-02-{d:02},{}\n", 100 + d * (d % 3), 50 + d % 4));
    }
    import::import(
        &app.state.store,
        &caller,
        &app.workspace_id,
        file(Kind::Prices, prices, Provenance::Synthetic),
        &Silent,
    )
    .await
    .expect("synthetic prices");
    let body = json!({"objective": "min_variance", "instruments": ["AAA", "BBB"]});
    let p = problem(post(&app, &body, false).await, 422, "invalid_request").await;
    assert!(p.to_string().contains("synthetic"), "{p}");
    let forecast = json!({"instrument": "AAA", "model": "holt_winters"});
    let r = app.post_json("/api/v2/planning/forecasts", &app.key, &forecast, None).await;
    problem(r, 422, "invalid_request").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM compute_jobs").await, 0);
}

#[tokio::test]
async fn return_minimal_leaves_the_request_just_sent_out_of_the_answer() {
    let app = spawn_app().await;
    grant(&app, 10).await;
    for prefer in ["return=minimal", "respond-async, return=minimal"] {
        let r = app
            .http
            .post(app.url(OPTIMIZE))
            .bearer_auth(&app.key)
            .header("Prefer", prefer)
            .json(&inline_body("min_variance"))
            .send()
            .await
            .expect("request");
        let applied = r.headers()["preference-applied"].to_str().expect("header").to_string();
        let status = r.status().as_u16();
        let job: Value = r.json().await.expect("json");
        assert!(job.get("request").is_none(), "{job}");
        assert!(job["request_hash"].as_str().is_some_and(|h| h.starts_with("sha256:")));
        if prefer == "return=minimal" {
            assert_eq!((status, applied.as_str()), (201, "return=minimal"));
            assert!(job["result"]["output"]["weights"].is_object() || job["result"]["output"]["weights"].is_array());
        } else {
            assert_eq!((status, applied.as_str()), (202, "respond-async, return=minimal"));
        }
        let full: Value = app
            .get(&format!("/api/v2/quant/compute/jobs/{}", job["id"].as_str().expect("id")), &app.key)
            .await
            .json()
            .await
            .expect("json");
        assert_eq!(full["request"]["returns"]["assets"], json!(["A", "B", "C"]));
    }
}

/// The workspace's entitlement without any `data:*` scope.
fn without_data() -> fiscus_domain::scopes::ScopeSet {
    use fiscus_domain::scopes::ScopeSet;
    ScopeSet::parse(&ScopeSet::all().iter().filter(|s| !s.starts_with("data:")).collect::<Vec<_>>().join(" "))
        .expect("scopes")
}

#[tokio::test]
async fn computations_read_no_data_the_workspace_is_no_longer_entitled_to() {
    let app = spawn_app_with(|s| s.compute_worker = false).await;
    grant(&app, 100).await;
    app.load_demo().await;
    let body = json!({"objective": "min_variance", "instruments": ["AAPL", "MSFT", "JPM"], "start": "2015-01-01", "end": "2016-12-31"});
    let queued: Value = post(&app, &body, true).await.json().await.expect("json");
    let id = queued["id"].as_str().expect("id").to_string();
    let before: Value = app.get("/api/v2/ai-credits/balance", &app.key).await.json().await.expect("json");

    // The market data entitlement withdrawn: the data routes refuse, and so does every computation on it.
    app.admin().set_workspace_entitlement(&app.workspace_id, &without_data()).await.expect("entitlement");
    problem(app.get("/api/v2/data/instruments/AAPL/prices", &app.key).await, 403, "entitlement_missing").await;
    let refused = problem(post(&app, &body, false).await, 403, "entitlement_missing").await;
    assert_eq!(refused["required_scope"], "data:market:read", "{refused}");
    let simulation = json!({
        "instruments": ["AAPL", "MSFT"], "start": "2015-01-01", "end": "2017-12-31", "horizon_years": 1.0,
        "steps": 12, "paths": 100, "seed": 7, "weights": {"AAPL": 0.5, "MSFT": 0.5}
    });
    let r = app.post_json("/api/v2/quant/compute/simulations", &app.key, &simulation, None).await;
    problem(r, 403, "entitlement_missing").await;
    let backtest = json!({"weights": {"AAPL": 0.5, "MSFT": 0.5}, "start": "2017-10-01", "end": "2017-12-31"});
    let r = app.post_json("/api/v2/quant/compute/backtests", &app.key, &backtest, None).await;
    problem(r, 403, "entitlement_missing").await;
    let values = "/api/v2/quant/features/volatility_21d/values?instrument=AAPL&start=2020-03-01&end=2020-03-31";
    problem(app.get(values, &app.key).await, 403, "entitlement_missing").await;
    let forecast = json!({"series": "cpilfesl", "start": "2012-01-01", "model": "arima"});
    let r = app.post_json("/api/v2/planning/forecasts", &app.key, &forecast, None).await;
    problem(r, 403, "entitlement_missing").await;

    // The job queued while the workspace was entitled reads nothing now: it fails as such, refunded.
    fiscus_server::workers::compute::run_once(&app.state, "wrk_test").await.expect("pass");
    let job = app.ended_job(&id).await;
    assert_eq!(job["status"], "failed", "{job}");
    assert_eq!(job["error"]["code"], "entitlement_missing", "{job}");
    let after: Value = app.get("/api/v2/ai-credits/balance", &app.key).await.json().await.expect("json");
    assert_eq!(after["balance"].as_i64(), before["balance"].as_i64().map(|b| b + job["credits"].as_i64().unwrap_or(0)));

    // Entitled again, the same request computes.
    app.admin()
        .set_workspace_entitlement(&app.workspace_id, &fiscus_domain::scopes::ScopeSet::all())
        .await
        .expect("all");
    assert_eq!(post(&app, &body, false).await.status(), 201);
}
