//! Unmodified third-party clients (Python packages pinned in `clients/requirements.txt`) against a live
//! server. `scripts/test` prepares their virtual environment; `FISCUS_PYTHON` may name another interpreter.

use crate::helpers::spawn_app;
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
async fn the_openapi_document_validates_as_openapi_31() {
    let app = spawn_app().await;
    let base = app.base.clone();
    let out = tokio::task::spawn_blocking(move || run("validate_openapi.py", &[&base])).await.expect("join");
    assert!(out.contains("valid"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_message_signatures_signs_requests_the_gateway_accepts() {
    let app = spawn_app().await;
    let signer = crate::signed_clients::granted_client(
        &app,
        &["post_agent_execution_proposals", "get_agent_execution_actions_uid"],
        &["payment"],
        (600, 10_000),
    )
    .await;
    let key_hex: String = signer.key.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let (base, id) = (app.base.clone(), signer.id.clone());
    let out =
        tokio::task::spawn_blocking(move || run("http_signatures.py", &[&base, &id, &key_hex])).await.expect("join");
    assert!(out.contains("http-message-signatures: ok"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_sdk_lists_and_calls_tools_on_both_endpoints() {
    let app = spawn_app().await;
    let signer = crate::signed_clients::granted_client(
        &app,
        &["post_agent_execution_proposals", "get_agent_execution_actions_uid"],
        &["payment"],
        (600, 10_000),
    )
    .await;
    let key_hex: String = signer.key.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let (base, key, id) = (app.base.clone(), app.key.clone(), signer.id.clone());
    let out =
        tokio::task::spawn_blocking(move || run("mcp_client.py", &[&base, &key, &id, &key_hex])).await.expect("join");
    assert!(out.contains("mcp sdk: ok"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_a2a_sdk_resolves_the_card_sends_messages_and_reads_tasks() {
    let app = spawn_app().await;
    let signer = crate::signed_clients::granted_client(
        &app,
        &["post_agent_execution_proposals", "get_agent_execution_actions_uid"],
        &["payment"],
        (600, 10_000),
    )
    .await;
    let key_hex: String = signer.key.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let (base, key, id) = (app.base.clone(), app.key.clone(), signer.id.clone());
    let out =
        tokio::task::spawn_blocking(move || run("a2a_client.py", &[&base, &key, &id, &key_hex])).await.expect("join");
    assert!(out.contains("a2a sdk: ok"), "{out}");
}
