//! Unmodified third-party clients (Python packages pinned in `clients/requirements.txt`) against a live
//! server. `scripts/test` prepares their virtual environment; `FISCUS_PYTHON` may name another interpreter.

use fiscus_apptest::spawn_app;
use std::path::PathBuf;
use std::process::Command;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn python() -> PathBuf {
    if let Ok(p) = std::env::var("FISCUS_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = repo_root().join("target/clients-venv/bin/python");
    assert!(
        venv.exists(),
        "the client tests need the Python clients: run scripts/test (it creates target/clients-venv), or set FISCUS_PYTHON"
    );
    venv
}

pub fn run(script: &str, args: &[&str]) -> String {
    let out =
        Command::new(python()).arg(repo_root().join("clients").join(script)).args(args).output().expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{script} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authlib_obtains_and_uses_a_client_credentials_token() {
    let app = spawn_app().await;
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    let base = app.base.clone();
    let out =
        tokio::task::spawn_blocking(move || run("oauth_client_credentials.py", &[&base, &client.id, &client.secret]))
            .await
            .expect("join");
    assert!(out.contains("authlib: ok"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_client_parses_metrics_in_the_format_it_asks_for() {
    let app = spawn_app().await;
    let base = app.base.clone();
    let out = tokio::task::spawn_blocking(move || run("scrape_metrics.py", &[&base])).await.expect("join");
    assert!(out.contains("prometheus_client: ok"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_validates_as_openapi_31() {
    let app = spawn_app().await;
    let base = app.base.clone();
    let out = tokio::task::spawn_blocking(move || run("validate_openapi.py", &[&base])).await.expect("join");
    assert!(out.contains("valid"), "{out}");
}

/// A client generated from the served document by openapi-python-client makes three calls: a read, a list
/// with a query parameter and a keyed POST built from its generated model (replayed once by its key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_generated_from_the_document_makes_three_calls() {
    let app = spawn_app().await;
    // The demo's instruments, so that the list has rows to parse.
    app.load_demo().await;
    let (base, key) = (app.base.clone(), app.key.clone());
    let out = tokio::task::spawn_blocking(move || run("generated_client.py", &[&base, &key])).await.expect("join");
    assert_eq!(out.lines().filter(|l| l.starts_with("call: ")).count(), 3, "{out}");
}

/// A signed client granted two gateway operations: its id and its private key in hex, for a Python client.
async fn granted_signer(app: &fiscus_apptest::TestApp) -> (String, String) {
    let signer = crate::signed_clients::granted_client(
        app,
        &["post_agent_execution_proposals", "get_agent_execution_actions_uid"],
        &["payment"],
        (600, 10_000),
    )
    .await;
    (signer.id.clone(), signer.key.to_bytes().iter().map(|b| format!("{b:02x}")).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_message_signatures_signs_requests_the_gateway_accepts() {
    let app = spawn_app().await;
    let (client_id, key_hex) = granted_signer(&app).await;
    let base = app.base.clone();
    let out = tokio::task::spawn_blocking(move || run("http_signatures.py", &[&base, &client_id, &key_hex]))
        .await
        .expect("join");
    assert!(out.contains("http-message-signatures: ok"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_sdk_lists_and_calls_tools_on_both_endpoints() {
    let app = spawn_app().await;
    let (client_id, key_hex) = granted_signer(&app).await;
    let (base, key) = (app.base.clone(), app.key.clone());
    let out = tokio::task::spawn_blocking(move || run("mcp_client.py", &[&base, &key, &client_id, &key_hex]))
        .await
        .expect("join");
    assert!(out.contains("mcp sdk: ok"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_a2a_sdk_resolves_the_card_sends_messages_and_reads_tasks() {
    let app = spawn_app().await;
    let (client_id, key_hex) = granted_signer(&app).await;
    let (base, key) = (app.base.clone(), app.key.clone());
    let out = tokio::task::spawn_blocking(move || run("a2a_client.py", &[&base, &key, &client_id, &key_hex]))
        .await
        .expect("join");
    assert!(out.contains("a2a sdk: ok"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standardwebhooks_and_svix_verify_real_deliveries() {
    use crate::webhook_delivery::{Answer, loopback_app, propose, receiver, register};
    let app = loopback_app().await;
    let rx = receiver(|_| Answer::Status(200)).await;
    let (_, secret) = register(&app, &format!("http://{}/hook", rx.addr)).await;
    propose(&app).await;
    propose(&app).await;
    let got = rx.wait_for(2, std::time::Duration::from_secs(10)).await;
    let deliveries: Vec<serde_json::Value> = got
        .iter()
        .map(|g| serde_json::json!({ "id": g.id, "timestamp": g.timestamp, "signature": g.signature, "body": g.body }))
        .collect();
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("deliveries.json");
    std::fs::write(&path, serde_json::to_vec(&deliveries).expect("json")).expect("write");
    let path = path.to_string_lossy().to_string();
    let out = tokio::task::spawn_blocking(move || run("webhook_verify.py", &[&secret, &path])).await.expect("join");
    assert!(out.contains("webhook verifiers: ok"), "{out}");
}
