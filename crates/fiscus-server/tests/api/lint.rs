//! The served OpenAPI document as two unmodified linters read it: Stoplight Spectral with the committed
//! ruleset (`clients/lint/.spectral.yaml`, Spectral's own `spectral:oas`) and Redocly CLI's recommended
//! rules (`clients/lint/redocly.yaml`). Both are pinned in `clients/lint` and installed by `scripts/test`.
//! Spectral may report nothing at all, Redocly no error (its warnings are printed).

use fiscus_apptest::spawn_app;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn lint_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../clients/lint");
    assert!(
        dir.join("node_modules/.bin/spectral").exists() && dir.join("node_modules/.bin/redocly").exists(),
        "the linters are missing: run scripts/test (it runs `npm ci` in clients/lint)"
    );
    dir
}

/// Runs `program` with `args` off the runtime; its standard output.
async fn run(program: PathBuf, args: Vec<String>) -> String {
    let out = tokio::task::spawn_blocking(move || Command::new(&program).args(&args).output().expect("run linter"))
        .await
        .expect("join");
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[tokio::test]
async fn spectral_and_redocly_find_no_error_in_the_served_document() {
    let app = spawn_app().await;
    let doc = app.http.get(app.url("/api/v2/openapi.json")).send().await.expect("request").text().await.expect("doc");
    let tmp = tempfile::tempdir().expect("temp dir");
    let file = tmp.path().join("openapi.json");
    std::fs::write(&file, doc).expect("write");
    let dir = lint_dir();
    let file = file.display().to_string();

    let spectral = run(
        dir.join("node_modules/.bin/spectral"),
        vec![
            "lint".into(),
            "-r".into(),
            dir.join(".spectral.yaml").display().to_string(),
            "-f".into(),
            "json".into(),
            file.clone(),
        ],
    )
    .await;
    // The JSON array comes first; with no finding Spectral appends a sentence to it.
    let findings: Vec<Value> = serde_json::Deserializer::from_str(&spectral)
        .into_iter::<Vec<Value>>()
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("spectral's JSON:\n{spectral}"));
    // No finding of any severity (0 error, 1 warning, 2 information, 3 hint): the committed ruleset turns
    // nothing off.
    assert!(findings.is_empty(), "Spectral findings: {findings:#?}");

    let redocly = run(
        dir.join("node_modules/.bin/redocly"),
        vec![
            "lint".into(),
            "--config".into(),
            dir.join("redocly.yaml").display().to_string(),
            "--format=json".into(),
            file,
        ],
    )
    .await;
    let report: Value = serde_json::from_str(&redocly).unwrap_or_else(|e| panic!("redocly's JSON: {e}\n{redocly}"));
    assert_eq!(report["totals"]["errors"], 0, "Redocly errors: {:#}", report["problems"]);
    eprintln!("Spectral: no finding; Redocly: 0 errors, {} warnings", report["totals"]["warnings"]);
}
