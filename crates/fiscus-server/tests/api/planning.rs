//! Planning forecasts: a named model's numbers equal the engine's, the automatic choice runs as a job on an
//! economic series of the data plane, and bad requests are refused.

use crate::helpers::{TestApp, spawn_app};
use fiscus_domain::actor::Actor;
use fiscus_domain::tenancy::Tenant;
use fiscus_server::governed::Caller;
use fiscus_server::import::Silent;
use serde_json::{Value, json};

const FORECASTS: &str = "/api/v2/planning/forecasts";

fn airline() -> Vec<f64> {
    vec![
        112.0, 118.0, 132.0, 129.0, 121.0, 135.0, 148.0, 148.0, 136.0, 119.0, 104.0, 118.0, 115.0, 126.0, 141.0, 135.0,
        125.0, 149.0, 170.0, 170.0, 158.0, 133.0, 114.0, 140.0, 145.0, 150.0, 178.0, 163.0, 172.0, 178.0, 199.0, 199.0,
        184.0, 162.0, 146.0, 166.0,
    ]
}

async fn grant(app: &TestApp) {
    let tenant = Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&tenant, 100, "test grant").await.expect("grant");
}

fn numbers(v: &Value) -> Vec<f64> {
    serde_json::from_value(v.clone()).expect("numbers")
}

#[tokio::test]
async fn named_models_equal_the_engine_and_auto_runs_on_an_economic_series() {
    let app = spawn_app().await;
    grant(&app).await;
    let y = airline();
    let body = json!({"values": y, "model": "holt_winters", "horizon": 6, "level": 0.9, "seasonal_period": 12});
    let r = app.post_json(FORECASTS, &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let spec = fiscus_quant::forecast::holt_winters::HoltWintersSpec {
        trend: true,
        damped: true,
        season: Some(fiscus_quant::forecast::holt_winters::Season::Additive { period: 12 }),
    };
    let fit = fiscus_quant::forecast::fit_holt_winters(&y, spec).expect("engine");
    let out = &job["result"]["output"];
    assert_eq!(numbers(&out["forecast"]), fit.forecast(6));
    let bands = fit.prediction_intervals(6, 0.9, 2000, 0).expect("bands");
    assert_eq!(numbers(&out["lower"]), bands.iter().map(|b| b.0).collect::<Vec<_>>());
    let body = json!({"values": y, "model": "arima", "horizon": 3});
    let job: Value = app.post_json(FORECASTS, &app.key, &body, None).await.json().await.expect("json");
    let spec = fiscus_quant::forecast::arima::ArimaSpec {
        p: 1,
        d: 1,
        q: 1,
        seasonal_p: 0,
        seasonal_d: 0,
        seasonal_q: 0,
        period: 0,
        trend: fiscus_quant::forecast::arima::ArimaTrend::Drift,
    };
    let f = fiscus_quant::forecast::arima::fit(&y, spec).expect("engine").forecast(3, 0.9).expect("forecast");
    assert_eq!(numbers(&job["result"]["output"]["forecast"]), f.mean);
    assert_eq!(numbers(&job["result"]["output"]["upper"]), f.upper);
    // The automatic choice on core CPI from the demo data: queued, then run by the worker.
    fiscus_server::demo_data::load(&app.state.store, &Caller::bare(Actor::demo()), &app.workspace_id, &Silent)
        .await
        .expect("demo data");
    let r = app.post_json(FORECASTS, &app.key, &json!({"series": "cpilfesl", "start": "2012-01-01"}), None).await;
    assert_eq!(r.status(), 202);
    let queued: Value = r.json().await.expect("json");
    assert!(queued["request"]["source"]["content_hash"].as_str().is_some_and(|h| h.starts_with("sha256:")));
    let id = queued["id"].as_str().expect("id");
    let mut done = Value::Null;
    for _ in 0..600 {
        done = app.get(&format!("/api/v2/quant/compute/jobs/{id}"), &app.key).await.json().await.expect("json");
        if done["status"] == "succeeded" || done["status"] == "failed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(done["status"], "succeeded", "{done}");
    let out = &done["result"]["output"];
    assert!(out["model"].as_str().is_some_and(|m| m.starts_with("arima(")), "{out}");
    assert_eq!(numbers(&out["forecast"]).len(), 12);
    let lower = numbers(&out["lower"]);
    let upper = numbers(&out["upper"]);
    assert!(lower.iter().zip(&upper).all(|(l, u)| l < u));
    let list: Value = app.get(FORECASTS, &app.key).await.json().await.expect("json");
    assert_eq!(list["data"].as_array().map(Vec::len), Some(3));
    for bad in [
        json!({"values": y, "series": "cpilfesl"}),
        json!({"series": "no_such_series"}),
        json!({"values": [1.0, 2.0]}),
        json!({"values": y, "horizon": 0}),
        json!({"values": y, "start": "2010-01-01"}),
    ] {
        assert_eq!(app.post_json(FORECASTS, &app.key, &bad, None).await.status(), 422, "{bad}");
    }
}
