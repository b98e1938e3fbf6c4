//! No poison pill (issue 54): a record that fails its seal is set aside (named in the log, at the console,
//! in the workspace's audit trail and in `/metrics`), and the worker goes on with every other record, of its
//! own workspace and of every other.

use fiscus_apptest::bank::{accounts, approve_and_execute, bank_app_with, production_key, propose};
use serde_json::Value;

#[tokio::test]
async fn a_tampered_payment_instruction_is_set_aside_and_every_other_payment_is_filed() {
    let dir = tempfile::tempdir().expect("dir");
    // The bank file worker runs when the test says, so the instruction can be edited before it is filed.
    let app = bank_app_with(dir.path(), |s| s.bank_file_worker = false).await;
    let key = production_key(&app).await;
    let supplier = accounts(&app, &key).await;
    let edited = propose(&app, &key, &supplier, 125_000, "INV-2026-101").await;
    let kept = propose(&app, &key, &supplier, 250_000, "INV-2026-102").await;
    approve_and_execute(&app, &key, &[edited.clone(), kept.clone()]).await;
    app.drain().await;
    assert_eq!(app.count("SELECT COUNT(*) FROM payment_instructions WHERE file_id IS NULL").await, 2);

    // One instruction edited in the database: its seal no longer matches.
    app.execute(&format!(
        "UPDATE payment_instructions SET body = replace(body, '125000', '1') WHERE action_id = '{edited}'"
    ))
    .await;
    let pass = fiscus_actions::bank_files::run_once(&app.state, "wrk_test").await.expect("a pass");
    assert_eq!((pass.filed, pass.set_aside, pass.held), (1, 1, 0), "{pass:?}");
    let files: Value = app.get("/api/v2/payment-files", &key).await.json().await.expect("json");
    assert_eq!(files["data"].as_array().map(Vec::len), Some(1), "{files}");
    let file_id = files["data"][0]["id"].as_str().expect("id");
    let file: Value = app.get(&format!("/api/v2/payment-files/{file_id}"), &key).await.json().await.expect("json");
    assert_eq!(file["action_ids"], serde_json::json!([kept]), "only the untouched payment is filed: {file}");

    // The next pass neither retries it nor fails on it.
    let again = fiscus_actions::bank_files::run_once(&app.state, "wrk_test").await.expect("a pass");
    assert_eq!((again.filed, again.set_aside, again.held), (0, 0, 0), "{again:?}");
    assert_eq!(app.count("SELECT COUNT(*) FROM payment_instructions WHERE file_id IS NULL").await, 1);

    // Counted in /metrics, shown at the console, and in the workspace's audit trail.
    let metrics = app.http.get(app.url("/metrics")).send().await.expect("request").text().await.expect("text");
    assert!(metrics.contains("fiscus_records_set_aside{table=\"payment_instructions\"} 1"), "{metrics}");
    let ada =
        fiscus_apptest::console::enrolled_operator(&app, "auditor@example.com", fiscus_domain::people::Role::Auditor)
            .await;
    let cookie = fiscus_apptest::console::sign_in(&app, &ada).await;
    let page = fiscus_apptest::console::console_page(&app, &cookie, "/console/bank-entries").await;
    assert!(page.contains("id=\"set-aside\"") && page.contains("failed its seal"), "{page}");
    let audited = app.count("SELECT COUNT(*) FROM audit_events WHERE action = 'record.set_aside'").await;
    assert_eq!(audited, 1);
}
