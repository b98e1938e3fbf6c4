//! One answer per cause (issue 55): every engine refusal kind a compute endpoint can meet is walked through
//! each endpoint that can meet it, and each answers with the status and code of the one table
//! (`fiscus_kernel::engine::engine_code`, docs/standards.md), naming the engine's reason in `engine_error`.
//! The same cause reached through two endpoints (a constant series, a season on non-positive data) answers
//! alike, whether the endpoint computes in the request or would have queued a job.

use fiscus_apptest::{TestApp, spawn_app};
use fiscus_quant::QuantError;
use serde_json::{Value, json};

async fn grant(app: &TestApp) {
    let tenant = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&tenant, 1_000, "test grant").await.expect("grant");
}

/// An engine refusal of each kind the walk meets, to ask the table what it answers.
fn of_kind(reason: &str) -> QuantError {
    match reason {
        "insufficient_data" => QuantError::InsufficientData { what: "x", needed: 2, got: 1 },
        "undefined" => QuantError::Undefined { what: "x", reason: "y" },
        "infeasible" => QuantError::Infeasible { detail: "x".into() },
        "invalid_parameter" => QuantError::InvalidParameter { name: "x", reason: "y".into() },
        other => panic!("the walk does not meet `{other}`"),
    }
}

fn seasonal(values: &[f64], seasonal: &str) -> Value {
    json!({"input": {"values": values}, "parameters": {"trend": false, "seasonal": seasonal, "period": 4, "horizon": 2}})
}

#[tokio::test]
async fn each_engine_refusal_answers_as_the_table_says_through_every_endpoint_that_meets_it() {
    let app = spawn_app().await;
    app.load_demo().await;
    grant(&app).await;
    let constant = vec![42.0; 40];
    let trend: Vec<f64> = (0..40).map(|t| 100.0 + t as f64 + 5.0 * ((t % 4) as f64).sin()).collect();
    let with_zero: Vec<f64> = trend.iter().enumerate().map(|(i, v)| if i == 9 { 0.0 } else { *v }).collect();
    let with_negative: Vec<f64> = trend.iter().enumerate().map(|(i, v)| if i == 9 { -3.0 } else { *v }).collect();
    let three: Vec<Vec<f64>> = (0..30)
        .map(|t| (0..3).map(|j| 0.001 * (j + 1) as f64 + 0.01 * ((t * (j + 2)) as f64).sin()).collect())
        .collect();
    let returns = fiscus_apptest::columns(&["A", "B", "C"], &json!(three));
    let cases: Vec<(&str, &str, Value, &str)> = vec![
        // A constant series leaves an ARIMA likelihood undefined: in a model run, in a forecast of one
        // model (answered in the request) and in an automatic forecast (which would be queued).
        (
            "arima on a constant series",
            "/api/v2/quant/models/arima/run",
            json!({"input": {"values": constant}, "parameters": {"p": 1, "d": 0, "q": 0, "trend": "constant"}}),
            "undefined",
        ),
        (
            "ARIMA forecast of a constant series",
            "/api/v2/planning/forecasts",
            json!({"values": constant, "model": "arima"}),
            "undefined",
        ),
        (
            "automatic forecast of a constant series",
            "/api/v2/planning/forecasts",
            json!({"values": constant}),
            "undefined",
        ),
        // Too few observations, at each endpoint's own minimum.
        (
            "arima on five values",
            "/api/v2/quant/models/arima/run",
            json!({"input": {"values": [1.0, 2.0, 1.5, 2.5, 2.0]}, "parameters": {"p": 2, "d": 1, "q": 2}}),
            "insufficient_data",
        ),
        (
            "automatic forecast of a three-day window",
            "/api/v2/planning/forecasts",
            json!({"instrument": "AAPL", "start": "2015-01-02", "end": "2015-01-06"}),
            "insufficient_data",
        ),
        (
            "backtest of a one-day window",
            "/api/v2/quant/compute/backtests",
            json!({"weights": {"AAPL": 0.5, "MSFT": 0.5}, "start": "2015-01-02", "end": "2015-01-02"}),
            "insufficient_data",
        ),
        (
            "simulation from a two-day window",
            "/api/v2/quant/compute/simulations",
            json!({"instruments": ["AAPL"], "start": "2015-01-02", "end": "2015-01-05", "horizon_years": 1.0, "steps": 4, "paths": 10}),
            "insufficient_data",
        ),
        (
            "optimisation over a one-day window",
            "/api/v2/quant/compute/optimizations",
            json!({"objective": "min_variance", "instruments": ["AAPL", "MSFT"], "start": "2015-01-02", "end": "2015-01-02"}),
            "insufficient_data",
        ),
        // A multiplicative season on values that are not all positive, zeros or negatives alike.
        (
            "multiplicative season on a zero",
            "/api/v2/quant/models/holt_winters/run",
            seasonal(&with_zero, "multiplicative"),
            "undefined",
        ),
        (
            "multiplicative season on a negative",
            "/api/v2/quant/models/holt_winters/run",
            seasonal(&with_negative, "multiplicative"),
            "undefined",
        ),
        // Constraints no portfolio meets.
        (
            "bounds no portfolio meets",
            "/api/v2/quant/compute/optimizations",
            json!({"objective": "min_variance", "returns": returns, "min_weight": 0.5}),
            "infeasible",
        ),
        (
            "a return no portfolio reaches",
            "/api/v2/quant/compute/optimizations",
            json!({"objective": "efficient_return", "returns": returns, "target_return": 9.0}),
            "infeasible",
        ),
    ];
    for (what, path, body, reason) in cases {
        let r = app.post_json(path, &app.key, &body, None).await;
        let status = r.status().as_u16();
        let p: Value = r.json().await.expect("json");
        let (expected_status, expected_code, _) = fiscus_kernel::engine::engine_code(&of_kind(reason)).describe();
        assert_eq!((status, p["code"].as_str()), (expected_status, Some(expected_code)), "{what}: {p}");
        assert_eq!(p["engine_error"], reason, "{what}: {p}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM compute_jobs").await, 0, "a refusal queues nothing");
    // Bad input is the schema's 422 at each, never an engine refusal.
    let r =
        app.post_json("/api/v2/planning/forecasts", &app.key, &json!({"values": constant, "horizon": 0}), None).await;
    assert_eq!(r.status(), 422);
}

/// Degenerate inputs that still have an answer say so (issue 55): three assets over two periods have a
/// singular sample covariance, so a minimum-variance portfolio's estimated volatility is near zero and its
/// Sharpe ratio means nothing; the answer names both in `warnings` (`degenerate`) rather than a silent 6.6e9.
#[tokio::test]
async fn a_degenerate_optimisation_is_answered_with_its_degeneracy_named() {
    let app = spawn_app().await;
    grant(&app).await;
    let returns = fiscus_apptest::columns(&["A", "B", "C"], &json!([[0.01, 0.02, -0.01], [0.03, -0.01, 0.02]]));
    let body = json!({"objective": "min_variance", "returns": returns});
    let r = app.post_json("/api/v2/quant/compute/optimizations", &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let out = r.json::<Value>().await.expect("json")["result"]["output"].clone();
    let named: Vec<&str> = out["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter(|w| w["code"] == "degenerate")
        .filter_map(|w| w["message"].as_str())
        .collect();
    assert!(named.iter().any(|m| m.contains("2 periods of 3 assets")), "{out}");
    // Long-only weights reach a variance of zero here (B offsets A and C in both periods).
    assert!(out["volatility"].as_f64().is_some_and(|v| v < 1e-6), "{out}");
    assert!(named.iter().any(|m| m.contains("Sharpe ratio")), "{out}");
    // Sixty periods of the same three assets: nothing degenerate to say.
    let many: Vec<Vec<f64>> = (0..60)
        .map(|t| (0..3).map(|j| 0.001 * (j + 1) as f64 + 0.01 * ((t * (j + 2)) as f64).sin()).collect())
        .collect();
    let body = json!({"objective": "min_variance", "returns": fiscus_apptest::columns(&["A", "B", "C"], &json!(many))});
    let out = app.post_json("/api/v2/quant/compute/optimizations", &app.key, &body, None).await.json::<Value>().await;
    let out = out.expect("json")["result"]["output"].clone();
    assert!(out["warnings"].as_array().is_some_and(Vec::is_empty), "{out}");
}
