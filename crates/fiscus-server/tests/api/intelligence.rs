//! The marketplace's listings (templates, model families, promoted models, each with version and hash) and
//! the sealed intelligence summary of a workspace's activity.

use fiscus_apptest::{problem, spawn_app};
use serde_json::{Value, json};

#[tokio::test]
async fn the_marketplace_lists_templates_and_model_families_with_their_hashes() {
    let app = spawn_app().await;
    let all: Value = app.get("/api/v2/marketplace/listings", &app.key).await.json().await.expect("json");
    let library: Value = app.get("/api/v2/workflows/library", &app.key).await.json().await.expect("json");
    let templates: Vec<&Value> =
        all["data"].as_array().expect("data").iter().filter(|l| l["kind"] == "workflow_template").collect();
    assert_eq!(templates.len(), 3);
    for (listing, template) in templates.iter().zip(library["data"].as_array().expect("data")) {
        assert_eq!(
            (listing["key"].clone(), listing["content_hash"].clone()),
            (template["key"].clone(), template["definition_hash"].clone())
        );
        assert_eq!(
            listing["path"],
            format!("/api/v2/workflows/library/{}/install", template["key"].as_str().expect("key"))
        );
    }
    let families: Value =
        app.get("/api/v2/marketplace/listings?kind=model_family", &app.key).await.json().await.expect("json");
    let families = families["data"].as_array().expect("data");
    assert!(families.iter().any(|f| f["key"] == "holt_winters"));
    assert!(
        families.iter().all(
            |f| f["kind"] == "model_family" && f["content_hash"].as_str().is_some_and(|h| h.starts_with("sha256:"))
        )
    );
    let promoted: Value =
        app.get("/api/v2/marketplace/listings?kind=promoted_model", &app.key).await.json().await.expect("json");
    assert_eq!(promoted["data"], json!([]), "nothing promoted in a new workspace");
    problem(app.get("/api/v2/marketplace/listings?kind=agent", &app.key).await, 422, "invalid_parameter").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_counts_this_workspace_s_activity_and_seals_it_to_the_audit_head() {
    let app = spawn_app().await;
    crate::workflows::demo(&app).await;
    let version = crate::workflows::installed(&app, "liquidity_report").await;
    let run = crate::workflows::started(&app, &version).await;
    crate::workflows::reaches(&app, &run, "completed").await;
    let action = app.post_json("/api/v2/actions", &app.key, &fiscus_apptest::actions::proposal(), None).await;
    assert_eq!(action.status(), 201);

    let summary: Value = app.get("/api/v2/intelligence/summary", &app.key).await.json().await.expect("json");
    assert_eq!(summary["workflow_runs"], json!({"completed": 1}));
    assert_eq!(summary["actions"], json!({"pending_approval": 1}));
    assert!(summary["datasets"]["prices"].as_i64().is_some_and(|n| n > 0));
    let head: Value = app.get("/api/v2/trust/audit-head", &app.key).await.json().await.expect("json");
    assert_eq!(summary["audit_head"]["seq"], head["seq"]);
    assert_eq!(summary["audit_head"]["hash"], head["hash"]);
    // The hash covers the summary without itself (RFC 8785).
    let mut content = summary.clone();
    content.as_object_mut().expect("object").remove("summary_hash");
    let canonical = fiscus_domain::jcs::canonicalize(&content).expect("jcs");
    assert_eq!(summary["summary_hash"], fiscus_domain::evidence::seal_bytes(canonical.as_bytes()));

    let (_, other) = app.other_workspace_key().await;
    let theirs: Value = app.get("/api/v2/intelligence/summary", &other).await.json().await.expect("json");
    assert_eq!((theirs["workflow_runs"].clone(), theirs["actions"].clone()), (json!({}), json!({})));
}
