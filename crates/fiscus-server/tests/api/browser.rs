//! A real browser (Debian's headless Chromium, driven by playwright-core from `clients/browser`) signs an
//! operator in with password and TOTP and approves an action at the console. `scripts/test` installs
//! both; `FISCUS_CHROMIUM` may point at another Chromium.

use crate::console::enrolled_operator;
use crate::helpers::spawn_app;
use fiscus_domain::actions::approval::Role;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_signs_in_with_password_and_totp_and_approves_in_chromium() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let created: Value =
        app.post_json("/api/v2/actions", &app.key, &crate::actions::proposal(), None).await.json().await.expect("json");
    let id = created["id"].as_str().expect("id").to_string();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../clients/browser");
    assert!(
        dir.join("node_modules/playwright-core").exists(),
        "the browser test needs playwright-core: run scripts/test (it runs `npm ci` in clients/browser)"
    );
    let args = vec![
        dir.join("approve.mjs").display().to_string(),
        app.base.clone(),
        app.workspace_id.clone(),
        op.email.clone(),
        op.password.clone(),
        fiscus_domain::totp::base32(&op.secret),
        id.clone(),
    ];
    let out = tokio::task::spawn_blocking(move || Command::new("node").args(&args).output().expect("run node"))
        .await
        .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "browser run failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("browser: ok"), "{stdout}");
    let after: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(after["control_state"], "approved");
}
