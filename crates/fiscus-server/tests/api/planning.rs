//! Planning forecasts: a named model's numbers equal the engine's, the automatic choice runs as a job on an
//! economic series of the data plane, and bad requests are refused.

use fiscus_apptest::{TestApp, spawn_app};
use fiscus_data::import::Silent;
use fiscus_domain::actor::Actor;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::Caller;
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
    app.load_demo().await;
    let r = app.post_json(FORECASTS, &app.key, &json!({"series": "cpilfesl", "start": "2012-01-01"}), None).await;
    assert_eq!(r.status(), 202);
    let queued: Value = r.json().await.expect("json");
    assert!(queued["request"]["source"]["content_hash"].as_str().is_some_and(|h| h.starts_with("sha256:")));
    let id = queued["id"].as_str().expect("id");
    let done = app.ended_job(id).await;
    assert_eq!(done["status"], "succeeded", "{done}");
    let out = &done["result"]["output"];
    assert!(out["model"].as_str().is_some_and(|m| m.starts_with("arima(")), "{out}");
    assert_eq!(numbers(&out["forecast"]).len(), 12);
    let lower = numbers(&out["lower"]);
    let upper = numbers(&out["upper"]);
    assert!(lower.iter().zip(&upper).all(|(l, u)| l < u));
    let list: Value = app.get(FORECASTS, &app.key).await.json().await.expect("json");
    assert_eq!(list["data"].as_array().map(Vec::len), Some(3));
    // A series the workspace does not hold: 409 naming the field.
    let missing = app.post_json(FORECASTS, &app.key, &json!({"series": "no_such_series"}), None).await;
    assert_eq!(fiscus_apptest::problem(missing, 409, "reference_not_found").await["errors"][0]["field"], "series");
    for bad in [
        json!({"values": y, "series": "cpilfesl"}),
        json!({"values": [1.0, 2.0]}),
        json!({"values": y, "horizon": 0}),
        json!({"values": y, "start": "2010-01-01"}),
    ] {
        assert_eq!(app.post_json(FORECASTS, &app.key, &bad, None).await.status(), 422, "{bad}");
    }
}

#[tokio::test]
async fn a_ledger_accounts_monthly_movement_is_forecast_from_its_posted_journals() {
    use fiscus_data::import::{self, ImportRequest, Mapping};
    use fiscus_data_core::rules::{Kind, Provenance};
    let app = spawn_app().await;
    grant(&app).await;
    let file = |kind: Kind, csv: String| ImportRequest {
        kind,
        file_name: format!("{}.csv", kind.as_str()),
        input: csv.into_bytes().into(),
        dataset: None,
        source: "test ERP export".into(),
        licence: "LicenseRef-internal".into(),
        provenance: Provenance::Observed,
        mapping: Mapping { delimiter: b',', ..Mapping::default() },
        dry_run: false,
    };
    let caller = Caller::bare(Actor::cli());
    let ledgers = "code,name,currency\nGL-1,Group ledger,USD\n".to_string();
    let entities = "code,name,status,ledger,currency,country\nOPCO,Operating Co.,active,GL-1,USD,US\n".to_string();
    // Revenue on account 4000 for 2022-01 .. 2023-12 except 2022-07 (no postings: a zero month), two
    // entries in March; each against receivables 1200.
    let mut journals = String::from("entry,date,ledger,entity,account,description,debit,credit,currency\n");
    let mut expected = Vec::new();
    for k in 0..24 {
        let (year, month) = (2022 + k / 12, k % 12 + 1);
        if (year, month) == (2022, 7) {
            expected.push(0.0);
            continue;
        }
        let cents = 1_000_000 + 37_500 * k + 125_000 * ((k * 5) % 7);
        let amount = format!("{}.{:02}", cents / 100, cents % 100);
        journals.push_str(&format!("JE-{k},{year}-{month:02}-28,GL-1,OPCO,4000,Sales,,{amount},USD\n"));
        journals.push_str(&format!("JE-{k},{year}-{month:02}-28,GL-1,OPCO,1200,Receivable,{amount},,USD\n"));
        let mut movement = -(cents as f64) / 100.0;
        if month == 3 {
            journals.push_str(&format!("JE-{k}b,{year}-03-30,GL-1,OPCO,4000,Refund,250.00,,USD\n"));
            journals.push_str(&format!("JE-{k}b,{year}-03-30,GL-1,OPCO,1200,Refund,,250.00,USD\n"));
            movement += 250.0;
        }
        expected.push(movement);
    }
    for (kind, csv) in [(Kind::Ledgers, ledgers), (Kind::Entities, entities), (Kind::Journals, journals)] {
        import::import(&app.state.store, &caller, &app.workspace_id, file(kind, csv), &Silent).await.expect("import");
    }
    let page: Value = app.get("/api/v2/finance-core/journals?limit=1", &app.key).await.json().await.expect("json");
    let ledger = page["data"][0]["general_ledger_id"].as_i64().expect("ledger id");
    let body = json!({"ledger_account": {"general_ledger_id": ledger, "account": "4000"}, "model": "holt_winters", "horizon": 3});
    let r = app.post_json(FORECASTS, &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let source = &job["request"]["source"];
    assert_eq!(source["source"], "ledger_account");
    assert_eq!(source["currency"], "USD");
    assert_eq!(source["datasets"].as_array().map(Vec::len), Some(1));
    let out = &job["result"]["output"];
    assert_eq!(out["observations"], 24);
    assert_eq!(out["last_date"], "2023-12");
    assert_eq!(out["last_value"].as_f64(), expected.last().copied());
    let spec = fiscus_quant::forecast::holt_winters::HoltWintersSpec { trend: true, damped: true, season: None };
    let fit = fiscus_quant::forecast::fit_holt_winters(&expected, spec).expect("engine");
    assert_eq!(numbers(&out["forecast"]), fit.forecast(3));
    // Quarterly: eight quarters, each the sum of its months.
    let quarterly = json!({"ledger_account": {"general_ledger_id": ledger, "account": "4000", "frequency": "quarterly"},
                           "model": "holt_winters", "horizon": 2});
    let job: Value = app.post_json(FORECASTS, &app.key, &quarterly, None).await.json().await.expect("json");
    assert_eq!(job["result"]["output"]["observations"], 8);
    assert_eq!(job["result"]["output"]["last_date"], "2023-Q4");
    let q4: f64 = expected[21..24].iter().sum();
    assert!((job["result"]["output"]["last_value"].as_f64().expect("last") - q4).abs() < 1e-6);
    // No such account, or none in another currency: what the ledger holds, 409. Two sources: a body error, 422.
    for (bad, status) in [
        (json!({"ledger_account": {"general_ledger_id": ledger, "account": "9999"}, "model": "holt_winters"}), 409),
        (
            json!({"ledger_account": {"general_ledger_id": ledger, "account": "4000", "currency": "EUR"}, "model": "holt_winters"}),
            409,
        ),
        (json!({"ledger_account": {"general_ledger_id": ledger, "account": "4000"}, "values": [1.0, 2.0]}), 422),
    ] {
        assert_eq!(app.post_json(FORECASTS, &app.key, &bad, None).await.status(), status, "{bad}");
    }
    app.load_demo().await;
    let sample: Value = app.get("/api/v2/finance-core/journals?limit=100", &app.key).await.json().await.expect("json");
    let gl_us = sample["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|j| j["general_ledger_id"].as_i64().expect("id"))
        .find(|id| *id != ledger)
        .expect("the sample ledger");
    let synthetic = json!({"ledger_account": {"general_ledger_id": gl_us, "account": "1000"}, "model": "holt_winters"});
    let r = app.post_json(FORECASTS, &app.key, &synthetic, None).await;
    assert_eq!(r.status(), 422);
    let text = r.text().await.expect("text");
    assert!(text.contains("synthetic"), "{text}");
}
