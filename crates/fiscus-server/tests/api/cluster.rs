//! The settings every node on one database must share (issue 35): a node started with another server key or
//! other claim times refuses to start, naming what differs, until they are accepted on purpose.

use fiscus_apptest::spawn_app;
use fiscus_server::serve::{Agreement, open, open_node, open_with};

#[tokio::test]
async fn a_node_that_disagrees_with_the_cluster_refuses_to_start_until_its_settings_are_accepted() {
    let app = spawn_app().await;
    let same = app.state.settings.clone();
    open_node(same.clone()).await.expect("a node with the cluster's settings starts");

    let mut other_key = same.clone();
    other_key.secret_key_file = Some(same.data_dir.join("another.key"));
    let refused = open(other_key.clone()).await.err().expect("another server key is refused").to_string();
    assert!(refused.contains("server_key: the cluster has another server key"), "{refused}");
    assert!(!refused.contains("webhook_claim_stale_seconds"), "{refused}");

    let mut other_claims = same.clone();
    other_claims.webhook_claim_stale_seconds += 1;
    // Claim times matter to serving nodes; a command (an import, an admin task) starts with its own.
    open(other_claims.clone()).await.expect("a command");
    let refused = open_node(other_claims.clone()).await.err().expect("other claim times are refused").to_string();
    assert!(refused.contains("webhook_claim_stale_seconds: the cluster has `"), "{refused}");
    assert!(refused.contains("fiscus migrate --accept-settings"), "{refused}");

    // Accepted on purpose: that node starts, and one with the old value is the one refused now.
    open_with(other_claims.clone(), Agreement::Accept).await.expect("accepted");
    open_node(other_claims).await.expect("starts with the accepted settings");
    assert!(open_node(same.clone()).await.is_err());
    open_with(same, Agreement::Accept).await.expect("accepted back");
}
