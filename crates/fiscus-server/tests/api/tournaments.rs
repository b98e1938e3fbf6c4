//! Model tournaments: the M4 measures computed by rolling origin, Naïve 2 the benchmark (OWA 1), ranked.

use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::tenancy::Tenant;
use serde_json::{Value, json};

const TOURNAMENTS: &str = "/api/v2/quant/model-tournaments";

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

#[tokio::test]
async fn candidates_are_ranked_by_owa_against_naive_2() {
    let app = spawn_app().await;
    grant(&app).await;
    let y = airline();
    let body = json!({"values": y, "candidates": ["naive", "seasonal_naive", "ses", "damped"], "horizon": 6, "origins": 4, "seasonal_period": 12});
    let r = app.post_json(TOURNAMENTS, &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let out = &job["result"]["output"];
    let ranking = out["ranking"].as_array().expect("ranking");
    assert_eq!(ranking.len(), 5, "Naïve 2 always runs: {out}");
    let owa: Vec<f64> = ranking.iter().map(|r| r["owa"].as_f64().expect("owa")).collect();
    assert!(owa.windows(2).all(|w| w[0] <= w[1]), "{owa:?}");
    let naive2 = ranking.iter().find(|r| r["candidate"] == "naive2").expect("naive2");
    assert!((naive2["owa"].as_f64().expect("owa") - 1.0).abs() < 1e-12);
    assert_eq!(out["winner"], ranking[0]["candidate"]);
    // The naïve method's sMAPE, by hand: origins at 36 - 6 - 3 = 27 .. 30.
    let mut total = 0.0;
    for n in 27..31 {
        let last = y[n - 1];
        total += 200.0 / 6.0 * (n..n + 6).map(|t| (y[t] - last).abs() / (y[t].abs() + last.abs())).sum::<f64>();
    }
    let naive = ranking.iter().find(|r| r["candidate"] == "naive").expect("naive");
    assert!((naive["smape"].as_f64().expect("smape") - total / 4.0).abs() < 1e-9, "{naive}");
    // With ARIMA it is queued, and read back by id and in the list.
    let r = app
        .post_json(TOURNAMENTS, &app.key, &json!({"values": y, "candidates": ["arima", "naive"], "horizon": 3}), None)
        .await;
    assert_eq!(r.status(), 202);
    let id = r.json::<Value>().await.expect("json")["id"].as_str().expect("id").to_string();
    app.drain().await;
    let done: Value = app.get(&format!("{TOURNAMENTS}/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(done["status"], "succeeded", "{done}");
    let list: Value = app.get(TOURNAMENTS, &app.key).await.json().await.expect("json");
    assert_eq!(list["data"].as_array().map(Vec::len), Some(2));
    // A method named twice runs once.
    let twice = json!({"values": y, "candidates": ["naive", "ses", "naive"], "horizon": 6, "origins": 4});
    let job: Value = app.post_json(TOURNAMENTS, &app.key, &twice, None).await.json().await.expect("json");
    let ranked: Vec<&str> = job["result"]["output"]["ranking"]
        .as_array()
        .expect("ranking")
        .iter()
        .map(|r| r["candidate"].as_str().expect("candidate"))
        .collect();
    assert_eq!(ranked.len(), 3, "naive, ses and naive2, each once: {ranked:?}");
    assert_eq!(ranked.iter().filter(|c| **c == "naive").count(), 1);
    // A horizon out of range is a body error (422); too few values for the horizon, origins and season is
    // too little data (409 `insufficient_data`).
    for (bad, status) in [
        (json!({"values": y, "horizon": 0}), 422),
        (json!({"values": y[..10].to_vec()}), 409),
        (json!({"values": y, "horizon": 30, "origins": 10}), 409),
    ] {
        assert_eq!(app.post_json(TOURNAMENTS, &app.key, &bad, None).await.status(), status, "{bad}");
    }
    let opt = json!({"objective": "min_variance", "returns": fiscus_apptest::columns(&["A", "B"], &json!([[0.01, 0.0], [0.0, 0.02], [-0.01, 0.01]]))});
    let other: Value =
        app.post_json("/api/v2/quant/compute/optimizations", &app.key, &opt, None).await.json().await.expect("json");
    problem(app.get(&format!("{TOURNAMENTS}/{}", other["id"].as_str().expect("id")), &app.key).await, 404, "not_found")
        .await;
}
