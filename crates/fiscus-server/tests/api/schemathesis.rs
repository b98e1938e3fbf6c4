//! Schemathesis (unmodified, pinned in `clients/requirements.txt`) holds the server to its own OpenAPI
//! document: every check, the examples, coverage, fuzzing and stateful phases, real ids from a seeded
//! workspace and OAuth client credentials. It must find nothing. The harness is `clients/schemathesis_run.py`.

use fiscus_apptest::console::{decide, enrolled_operator, sign_in};
use fiscus_apptest::spawn_app_with;
use fiscus_domain::people::Role;
use fiscus_kernel::settings::ServiceClass;
use serde_json::{Value, json};
use std::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_failure_of_any_check() {
    let generous = ServiceClass { quota: 10_000_000, window_seconds: 60 };
    let app = spawn_app_with(|s| {
        // Rate limits have tests of their own (rate_limit.rs, probes.rs); here they would only hide answers.
        s.token_requests_per_client = generous.clone();
        s.token_requests_per_address = generous.clone();
        s.service_classes.insert("standard".into(), generous.clone());
    })
    .await;
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    // An action an operator approved at the console, so that execution can be accepted (once).
    let mut body = fiscus_apptest::actions::proposal();
    body["required_checks"] = json!([]);
    let created: Value = app.post_json("/api/v2/actions", &app.key, &body, None).await.json().await.expect("json");
    let approved = created["id"].as_str().expect("id").to_string();
    let op = enrolled_operator(&app, "schemathesis@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    assert_eq!(decide(&app, &cookie, &approved, "approve").await.status(), 303);

    // The demo's data, so that the data plane's reads answer with real rows (the hooks fill in its symbols
    // and keys).
    app.load_demo().await;

    // Credits for the compute jobs the run submits.
    let sandbox = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&sandbox, 1_000_000, "schemathesis").await.expect("grant");
    let dir = tempfile::tempdir().expect("dir");
    let ids = dir.path().join("ids.json");
    // A space an admin promoted at the console, for the Agent Space operations.
    let space = crate::agent_spaces::promoted(&app, "market_watch").await;
    std::fs::write(&ids, json!({ "execute_action_id": approved, "agent_space_id": space }).to_string()).expect("ids");
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (base, key) = (app.base.clone(), app.key.clone());
    let report_dir = dir.path().join("report");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(crate::python_clients::python())
            .arg(root.join("clients/schemathesis_run.py"))
            .args([&base, &key, &client.id, &client.secret])
            .arg(&ids)
            .env("FISCUS_ST_MAX_TIME", std::env::var("FISCUS_ST_MAX_TIME").unwrap_or_else(|_| "120".into()))
            .env("FISCUS_ST_REPORT_DIR", &report_dir)
            .output()
            .expect("run schemathesis")
    })
    .await
    .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout
        .lines()
        .filter(|l| l.starts_with("failure:") || l.starts_with("error:") || l.starts_with("schemathesis:"));
    let summary: Vec<&str> = summary.collect();
    assert!(
        out.status.success() && stdout.contains(" 0 failures, 0 errors"),
        "schemathesis found problems:\n{}\n\n{stdout}\n{}",
        summary.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", summary.join("\n"));
}
