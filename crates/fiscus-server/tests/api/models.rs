//! The model catalogue and model runs: each run's numbers equal the engine's on the same input.

use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::Matrix;
use serde_json::{Value, json};

async fn grant(app: &TestApp) {
    let tenant = Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&tenant, 100, "test grant").await.expect("grant");
}

async fn run(app: &TestApp, key: &str, body: &Value) -> reqwest::Response {
    app.post_json(&format!("/api/v2/quant/models/{key}/run"), &app.key, body, None).await
}

fn series() -> Vec<f64> {
    (0..48)
        .map(|t| 100.0 + t as f64 * 0.8 + 6.0 * ((t % 12) as f64 * 0.52).sin() + ((t * 7) % 5) as f64 * 0.3)
        .collect()
}

#[tokio::test]
async fn the_catalogue_lists_each_model_with_its_parameters() {
    let app = spawn_app().await;
    let list: Value = app.get("/api/v2/quant/models", &app.key).await.json().await.expect("json");
    let keys: Vec<&str> = list["data"].as_array().expect("data").iter().filter_map(|m| m["key"].as_str()).collect();
    for key in
        ["holt_winters", "arima", "isolation_forest", "robust_z", "ledoit_wolf", "historical_var", "parametric_var"]
    {
        assert!(keys.contains(&key), "{key}");
    }
    let statistical: Value = app.get("/api/v2/quant/statistical-models", &app.key).await.json().await.expect("json");
    assert!(statistical["data"].as_array().expect("data").iter().all(|m| m["kind"] == "statistical"));
    let hw: Value = app.get("/api/v2/quant/models/holt_winters", &app.key).await.json().await.expect("json");
    assert_eq!(hw["parameters"]["properties"]["seasonal"]["enum"], json!(["none", "additive", "multiplicative"]));
    problem(app.get("/api/v2/quant/models/prophet", &app.key).await, 404, "not_found").await;
}

#[tokio::test]
async fn runs_equal_the_engine_on_the_same_input() {
    let app = spawn_app().await;
    grant(&app).await;
    let y = series();
    // Holt-Winters with an additive trend and season.
    let r = run(&app, "holt_winters", &json!({"input": {"values": y}, "parameters": {"trend": true, "seasonal": "additive", "period": 12, "horizon": 6}})).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let spec = fiscus_quant::forecast::holt_winters::HoltWintersSpec {
        trend: true,
        damped: false,
        season: Some(fiscus_quant::forecast::holt_winters::Season::Additive { period: 12 }),
    };
    let fit = fiscus_quant::forecast::fit_holt_winters(&y, spec).expect("engine");
    let served: Vec<f64> = serde_json::from_value(job["result"]["output"]["forecast"].clone()).expect("forecast");
    assert_eq!(served, fit.forecast(6));
    assert_eq!(job["kind"], "model_run");
    assert_eq!(job["request"]["parameters"]["model"], "holt_winters");
    // Robust z.
    let mut spiky = y.clone();
    spiky[20] = 400.0;
    let job: Value = run(&app, "robust_z", &json!({"input": {"values": spiky}})).await.json().await.expect("json");
    let z = fiscus_quant::anomaly::robust_z::robust_z_scores(&spiky).expect("engine");
    assert_eq!(job["result"]["output"]["median"].as_f64(), Some(z.median));
    assert_eq!(job["result"]["output"]["outliers"][0]["index"], 20);
    // Historical VaR on returns.
    let returns: Vec<f64> = y.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
    let job: Value = run(&app, "historical_var", &json!({"input": {"values": returns}, "parameters": {"cutoff": 0.1}}))
        .await
        .json()
        .await
        .expect("json");
    let tail = fiscus_quant::value_at_risk::historical(&returns, 0.1).expect("engine");
    assert_eq!(job["result"]["output"]["var"].as_f64(), Some(tail.var));
    assert_eq!(job["result"]["output"]["cvar"].as_f64(), Some(tail.cvar));
    // Ledoit-Wolf on a panel.
    let panel: Vec<Vec<f64>> =
        (0..30).map(|t| vec![(t as f64 * 0.3).sin() * 0.01, (t as f64 * 0.7).cos() * 0.02]).collect();
    let job: Value =
        run(&app, "ledoit_wolf", &json!({"input": {"returns": fiscus_apptest::columns(&["A", "B"], &json!(panel))}}))
            .await
            .json()
            .await
            .expect("json");
    let shrunk = fiscus_quant::covariance::ledoit_wolf(&Matrix::from_rows(&panel).expect("m")).expect("engine");
    assert_eq!(job["result"]["output"]["shrinkage"].as_f64(), Some(shrunk.shrinkage));
    // An ARIMA fit is queued and run by the worker.
    let r = run(&app, "arima", &json!({"input": {"values": y}, "parameters": {"p": 1, "d": 1, "q": 0, "horizon": 3}}))
        .await;
    assert_eq!(r.status(), 202);
    let queued: Value = r.json().await.expect("json");
    let id = queued["id"].as_str().expect("id");
    let done = app.ended_job(id).await;
    assert_eq!(done["status"], "succeeded", "{done}");
    let spec = fiscus_quant::forecast::arima::ArimaSpec {
        p: 1,
        d: 1,
        q: 0,
        seasonal_p: 0,
        seasonal_d: 0,
        seasonal_q: 0,
        period: 0,
        trend: fiscus_quant::forecast::arima::ArimaTrend::None,
    };
    let fit = fiscus_quant::forecast::arima::fit(&y, spec).expect("engine");
    let f = fit.forecast(3, 0.95).expect("forecast");
    let served: Vec<f64> = serde_json::from_value(done["result"]["output"]["forecast"].clone()).expect("forecast");
    assert_eq!(served, f.mean);
    let runs: Value = app.get("/api/v2/quant/model-runs", &app.key).await.json().await.expect("json");
    assert_eq!(runs["data"].as_array().map(Vec::len), Some(5));
    assert!(runs["data"].as_array().expect("data").iter().all(|j| j["kind"] == "model_run"));
}

#[tokio::test]
async fn bad_parameters_and_inputs_are_refused_naming_them() {
    let app = spawn_app().await;
    grant(&app).await;
    let y = series();
    for (key, body) in [
        ("holt_winters", json!({"input": {"values": y}, "parameters": {"damped": true}})),
        ("holt_winters", json!({"input": {"values": y}, "parameters": {"seasonal": "additive"}})),
        ("holt_winters", json!({"input": {"values": y}, "parameters": {"colour": "red"}})),
        ("arima", json!({"input": {"values": y}, "parameters": {"p": 30}})),
        ("robust_z", json!({"input": {"values": [1.0, 2.0]}})),
        ("robust_z", json!({"input": {"values": y, "instruments": ["AAPL"]}})),
        ("historical_var", json!({"input": {"values": y}, "parameters": {"cutoff": 1.5}})),
        ("historical_var", json!({"input": {"values": y}, "parameters": {"model": "arima"}})),
        ("arima", json!({"input": {"values": y}, "parameters": {"d": 2, "trend": "drift"}})),
        ("arima", json!({"input": {"values": y}, "parameters": {"seasonal_p": 1}})),
    ] {
        let r = run(&app, key, &body).await;
        assert_eq!(r.status(), 422, "{key} {body}");
    }
    // A body the document allows for some model (its schema is every model's) but not for the one the path
    // names meets that model's catalogue entry: 409.
    for (key, body) in [
        ("ledoit_wolf", json!({"input": {"values": y}})),
        ("robust_z", json!({"input": {"values": y}, "parameters": {"trees": 5}})),
        (
            "robust_z",
            json!({"input": {"returns": fiscus_apptest::columns(&["A", "B"], &json!([[0.1, 0.2], [0.0, 0.1]]))}}),
        ),
    ] {
        problem(run(&app, key, &body).await, 409, "conflict").await;
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM compute_jobs").await, 0);
}

/// What the series makes an ARIMA fit fail on is refused at submission with the engine's problem, never a
/// 202 whose job fails later (issue 34): a constant series, and too few observations for the model's lags
/// and parameters. Nothing is queued and no credit is spent.
#[tokio::test]
async fn an_arima_run_its_series_cannot_fit_is_refused_before_it_is_queued() {
    let app = spawn_app().await;
    grant(&app).await;
    let constant = vec![42.0; 60];
    let p = problem(
        run(
            &app,
            "arima",
            &json!({"input": {"values": constant}, "parameters": {"p": 1, "d": 0, "q": 0, "trend": "constant"}}),
        )
        .await,
        409,
        "conflict",
    )
    .await;
    assert_eq!(p["engine_error"], "undefined", "{p}");
    let short: Vec<f64> = series().into_iter().take(20).collect();
    let p = problem(
        run(&app, "arima", &json!({"input": {"values": short}, "parameters": {"p": 12, "d": 1, "q": 12}})).await,
        409,
        "insufficient_data",
    )
    .await;
    assert_eq!(p["engine_error"], "insufficient_data", "{p}");
    assert_eq!(app.count("SELECT COUNT(*) FROM compute_jobs").await, 0);
}

/// The same ARIMA request ends the same way every time: its budget is counted work, so the served fit
/// carries the same `work` and the same numbers on every run.
#[tokio::test]
async fn the_same_arima_request_spends_the_same_work_every_time() {
    let app = spawn_app().await;
    grant(&app).await;
    let body =
        json!({"input": {"values": series()}, "parameters": {"p": 2, "d": 1, "q": 1, "trend": "drift", "horizon": 4}});
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let r = run(&app, "arima", &body).await;
        assert_eq!(r.status(), 202);
        let queued: Value = r.json().await.expect("json");
        let done = app.ended_job(queued["id"].as_str().expect("id")).await;
        assert_eq!(done["status"], "succeeded", "{done}");
        outputs.push(done["result"]["output"].clone());
    }
    assert!(outputs[0]["work"].as_u64().is_some_and(|w| w > 0), "{}", outputs[0]);
    assert_eq!(outputs[0], outputs[1]);
}

/// A panel of real size (1,000 assets × 300 periods, about 6 MB of JSON) is taken inline by the computations,
/// up to their 16 MiB limit; past it the body is 413 whether its length is declared or not (issue 34).
#[tokio::test]
async fn a_thousand_asset_panel_is_taken_inline_and_a_larger_body_is_413() {
    let app = spawn_app().await;
    grant(&app).await;
    let names: Vec<String> = (0..1000).map(|i| format!("A{i:04}")).collect();
    let rows: Vec<Vec<f64>> =
        (0..300).map(|t| (0..1000).map(|i| (((t * 31 + i * 17) % 101) as f64 - 50.0) * 1e-4).collect()).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let body = json!({"input": {"returns": fiscus_apptest::columns(&name_refs, &json!(rows))}});
    let bytes = serde_json::to_vec(&body).expect("json");
    assert!(bytes.len() > 1024 * 1024, "{}", bytes.len());
    let r = app
        .http
        .post(format!("{}/api/v2/quant/models/ledoit_wolf/run", app.base))
        .bearer_auth(&app.key)
        .header("content-type", "application/json")
        .header("prefer", "respond-async")
        .body(bytes)
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 202, "{}", r.text().await.unwrap_or_default());
    let too_large = vec![b' '; 16 * 1024 * 1024 + 1];
    let r = app
        .http
        .post(format!("{}/api/v2/quant/models/ledoit_wolf/run", app.base))
        .bearer_auth(&app.key)
        .header("content-type", "application/json")
        .body(too_large.clone())
        .send()
        .await
        .expect("post");
    problem(r, 413, "payload_too_large").await;
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = too_large.chunks(1 << 20).map(|c| Ok(c.to_vec())).collect();
    let r = app
        .http
        .post(format!("{}/api/v2/quant/models/ledoit_wolf/run", app.base))
        .bearer_auth(&app.key)
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(tokio_stream::iter(chunks)))
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 413);
    // Elsewhere the service's own limit still holds.
    let r = app
        .post_json(
            "/api/v2/actions/autonomy/assessment-evidence",
            &app.key,
            &json!({"title": "x".repeat(2 * 1024 * 1024)}),
            None,
        )
        .await;
    assert_eq!(r.status(), 413);
}

#[tokio::test]
async fn ml_anomaly_and_scenarios_equal_the_engine() {
    let app = spawn_app().await;
    grant(&app).await;
    let ml: Value = app.get("/api/v2/ml/models", &app.key).await.json().await.expect("json");
    assert_eq!(ml["data"].as_array().map(Vec::len), Some(4));
    let mut y = series();
    y[30] = -50.0;
    let body =
        json!({"method": "isolation_forest", "input": {"values": y}, "parameters": {"trees": 50, "seed": 3, "top": 1}});
    let r = app.post_json("/api/v2/ml/anomaly", &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let x = Matrix::from_rows(&y.iter().map(|v| vec![*v]).collect::<Vec<_>>()).expect("m");
    let forest = fiscus_quant::anomaly::isolation_forest::IsolationForest::fit(
        &x,
        fiscus_quant::anomaly::isolation_forest::IsolationForestConfig { trees: 50, max_samples: 256, seed: 3 },
    )
    .expect("engine");
    let scores = forest.scores(&x).expect("scores");
    let served: Vec<f64> = serde_json::from_value(job["result"]["output"]["scores"].clone()).expect("scores");
    assert_eq!(served, scores);
    assert_eq!(job["result"]["output"]["most_anomalous"][0]["index"], 30);
    // Stress: the portfolio's return is the weighted moves.
    let stress = json!({
        "method": "stress", "returns": fiscus_apptest::columns(&["A", "B"], &json!([[0.01, 0.0], [0.0, 0.01]])),
        "weights": {"A": 0.6, "B": 0.4}, "shocks": [{"name": "crash", "moves": {"A": -0.35, "B": 0.05}}]
    });
    let job: Value = app.post_json("/api/v2/ml/scenarios", &app.key, &stress, None).await.json().await.expect("json");
    let got = job["result"]["output"]["scenarios"][0]["portfolio_return"].as_f64().expect("return");
    assert!((got - (0.6 * -0.35 + 0.4 * 0.05)).abs() < 1e-12, "{got}");
    // An asset a shock leaves out does not move; a name that is no asset of the request is 409.
    let mut partial = stress.clone();
    partial["shocks"] = json!([{"name": "crash", "moves": {"A": -0.35}}]);
    let job: Value = app.post_json("/api/v2/ml/scenarios", &app.key, &partial, None).await.json().await.expect("json");
    let got = job["result"]["output"]["scenarios"][0]["portfolio_return"].as_f64().expect("return");
    assert!((got - 0.6 * -0.35).abs() < 1e-12, "{got}");
    for (pointer, value) in [("/weights", json!({"A": 0.5, "C": 0.5})), ("/shocks/0/moves", json!({"C": -0.1}))] {
        let mut b = stress.clone();
        *b.pointer_mut(pointer).expect("member") = value;
        problem(app.post_json("/api/v2/ml/scenarios", &app.key, &b, None).await, 409, "conflict").await;
    }
    // Bootstrap: the engine's paths for the seed, compounded.
    let history: Vec<Vec<f64>> = (0..40).map(|t| vec![(t as f64 * 0.9).sin() * 0.01]).collect();
    let boot = json!({
        "method": "block_bootstrap", "returns": fiscus_apptest::columns(&["A"], &json!(history)),
        "steps": 10, "paths": 201, "block_length": 3, "seed": 9
    });
    let job: Value = app.post_json("/api/v2/ml/scenarios", &app.key, &boot, None).await.json().await.expect("json");
    let paths = fiscus_quant::simulate::bootstrap::bootstrap_paths(
        &Matrix::from_rows(&history).expect("m"),
        fiscus_quant::simulate::bootstrap::BootstrapSpec { steps: 10, paths: 201, block_length: 3, seed: 9 },
    )
    .expect("engine");
    let mut compounded: Vec<f64> =
        paths.iter().map(|m| (0..m.rows()).fold(1.0, |g, r| g * (1.0 + m.row(r)[0])) - 1.0).collect();
    compounded.sort_by(f64::total_cmp);
    assert_eq!(job["result"]["output"]["assets"][0]["return_quantiles"]["0.5"].as_f64(), Some(compounded[100]));
    let bad = json!({"method": "stress", "returns": fiscus_apptest::columns(&["A"], &json!([[0.01], [0.0]]))});
    assert_eq!(app.post_json("/api/v2/ml/scenarios", &app.key, &bad, None).await.status(), 422);
}

#[tokio::test]
async fn an_isolation_forest_scores_a_feature_set_as_the_engine_does() {
    let app = spawn_app().await;
    grant(&app).await;
    // Inline: the engine's scores of the same matrix, bit for bit.
    let rows: Vec<Vec<f64>> =
        (0..64).map(|t| vec![100.0 + ((t * 37) % 11) as f64, ((t * 13) % 7) as f64, (t % 5) as f64 * 0.5]).collect();
    let mut odd = rows.clone();
    odd[40] = vec![900.0, 30.0, -8.0];
    let body = json!({"method": "isolation_forest", "input": {"columns": fiscus_apptest::columns(&["amount", "hour", "lag"], &json!(odd))},
                      "parameters": {"trees": 60, "seed": 9, "top": 2}});
    let r = app.post_json("/api/v2/ml/anomaly", &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let x = Matrix::from_rows(&odd).expect("matrix");
    let config =
        fiscus_quant::anomaly::isolation_forest::IsolationForestConfig { trees: 60, max_samples: 256, seed: 9 };
    let forest = fiscus_quant::anomaly::isolation_forest::IsolationForest::fit(&x, config).expect("fit");
    let scores = forest.scores(&x).expect("scores");
    let out = &job["result"]["output"];
    let served: Vec<f64> = serde_json::from_value(out["scores"].clone()).expect("scores");
    assert_eq!(served, scores);
    assert_eq!(out["columns"], json!(["amount", "hour", "lag"]));
    assert_eq!(out["most_anomalous"][0]["index"], 40);
    let values = &out["most_anomalous"][0]["values"];
    assert_eq!(
        [values["amount"].as_f64(), values["hour"].as_f64(), values["lag"].as_f64()],
        [Some(900.0), Some(30.0), Some(-8.0)]
    );

    // From the data plane: features of one instrument, the same values GET /quant/features serves.
    app.load_demo().await;
    let body = json!({"method": "isolation_forest", "input": {"instruments": ["AAPL"], "features": ["return_1d", "volatility_21d"],
                      "start": "2017-01-01", "end": "2017-12-31"}, "parameters": {"seed": 1, "top": 3}});
    let r = app.post_json("/api/v2/ml/anomaly", &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let out = &job["result"]["output"];
    assert_eq!(job["request"]["input"]["features"]["source"], "data_plane");
    assert!(job["request"]["input"]["features"]["prices"]["instruments"][0]["dataset"].is_i64());
    let served: Vec<f64> = serde_json::from_value(out["scores"].clone()).expect("scores");
    let vol: Value = app
        .get(
            "/api/v2/quant/features/volatility_21d/values?instrument=AAPL&start=2017-01-01&end=2017-12-31&limit=10000",
            &app.key,
        )
        .await
        .json()
        .await
        .expect("json");
    let vol = vol["data"].as_array().expect("data");
    assert_eq!(served.len(), vol.len(), "one row per date with every feature");
    assert_eq!(out["first_date"], "2017-01-03");
    for a in out["most_anomalous"].as_array().expect("anomalies") {
        let on = vol.iter().find(|v| v["date"] == a["date"]).expect("the date has a volatility");
        assert_eq!(a["values"]["volatility_21d"].as_f64(), on["value"].as_f64());
    }
    for bad in [
        json!({"method": "isolation_forest", "input": {"instruments": ["AAPL"], "features": ["nope"]}}),
        json!({"method": "isolation_forest", "input": {"instruments": ["AAPL", "MSFT"], "features": ["return_1d"]}}),
        json!({"method": "isolation_forest", "input": {"columns": {"a": [1.0, 2.0]}}}),
        json!({"method": "isolation_forest", "input": {"columns": {" ": [1.0, 2.0, 3.0]}}}),
        json!({"method": "robust_z", "input": {"columns": {"a": [1.0, 2.0, 1.0]}}}),
    ] {
        assert_eq!(app.post_json("/api/v2/ml/anomaly", &app.key, &bad, None).await.status(), 422, "{bad}");
    }
}
