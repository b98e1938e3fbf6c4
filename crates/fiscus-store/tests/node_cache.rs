//! The PostgreSQL cache fails closed: a node uses its cache only while its watch keeps a current lease, so a
//! watch that cannot read the standing generation (here: stuck behind a lock) turns the cache off by itself,
//! before committers stop waiting for that node; and a committer waits for the node's acknowledgement.
//! Skipped without `FISCUS_TEST_DATABASE_URL`.

use fiscus_domain::integrity::SealKey;
use fiscus_store::Store;
use sqlx::{Connection, Executor};
use std::time::{Duration, Instant};

async fn eventually(what: &str, within: Duration, mut check: impl FnMut() -> bool) {
    let until = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < until, "{what} did not happen within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_watch_is_stuck_stops_using_its_cache() {
    let Ok(admin) = std::env::var("FISCUS_TEST_DATABASE_URL") else {
        eprintln!("skipped: FISCUS_TEST_DATABASE_URL is not set");
        return;
    };
    sqlx::any::install_default_drivers();
    let name = format!("fiscus_node_cache_{}", std::process::id());
    let mut conn = sqlx::AnyConnection::connect(&admin).await.expect("connect");
    conn.execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str()).await.expect("drop");
    conn.execute(format!("CREATE DATABASE {name}").as_str()).await.expect("create");
    let url = format!("{}/{name}", admin.rsplit_once('/').expect("database in URL").0);

    let node = Store::connect(&url, 4, SealKey::derive(b"node cache test")).await.expect("connect");
    node.migrate().await.expect("migrate");
    assert!(!node.cache_usable(), "no cache before the watch runs");
    node.watch_standing();
    eventually("the watch taking its lease", Duration::from_secs(5), || node.cache_usable()).await;

    // Hold the generation row hostage: the watch can neither read it nor acknowledge.
    let mut blocker = sqlx::AnyConnection::connect(&url).await.expect("connect");
    blocker.execute("BEGIN").await.expect("begin");
    blocker.execute("LOCK TABLE cache_generation IN ACCESS EXCLUSIVE MODE").await.expect("lock");
    let stuck_at = Instant::now();
    eventually("the cache turning itself off", Duration::from_secs(5), || !node.cache_usable()).await;
    let off_after = stuck_at.elapsed();
    assert!(
        off_after < fiscus_store::cache::LEASE - fiscus_store::cache::MARGIN / 2,
        "the node must stop trusting its cache before committers stop waiting for it (after {off_after:?})"
    );
    blocker.execute("ROLLBACK").await.expect("rollback");
    eventually("the cache coming back", Duration::from_secs(5), || node.cache_usable()).await;

    node.close().await;
    drop(blocker);
    let _ = conn.execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str()).await;
}
