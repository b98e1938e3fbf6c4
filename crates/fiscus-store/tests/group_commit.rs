//! Group commit (`Store::begin` with the writer lane): concurrent writers share one durable commit, a failing
//! member loses only its own changes, a dropped member does not wedge the lane, and every acknowledged row is
//! there after reopening the database. Runs on SQLite, and on PostgreSQL too when
//! `FISCUS_TEST_DATABASE_URL` is set.

use fiscus_domain::integrity::SealKey;
use fiscus_store::Store;
use std::sync::Arc;
use std::time::Duration;

/// A database to test on: a fresh SQLite file, or a fresh table in the PostgreSQL test database.
struct Db {
    url: String,
    table: String,
    _dir: Option<tempfile::TempDir>,
}

impl Db {
    fn sqlite() -> Db {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("gc.db").display());
        Db { url, table: "gc_rows".into(), _dir: Some(dir) }
    }

    fn postgres() -> Option<Db> {
        let url = std::env::var("FISCUS_TEST_DATABASE_URL").ok()?;
        let table = format!("gc_rows_{}", fiscus_domain::ids::new_id("t").to_ascii_lowercase());
        Some(Db { url, table, _dir: None })
    }

    fn all() -> Vec<Db> {
        let mut dbs = vec![Db::sqlite()];
        dbs.extend(Db::postgres());
        dbs
    }

    async fn store(&self) -> Store {
        let store = Store::connect(&self.url, 8, SealKey::derive(b"group commit test key")).await.expect("connect");
        sqlx::query(&format!("CREATE TABLE IF NOT EXISTS {} (id TEXT PRIMARY KEY, v BIGINT NOT NULL)", self.table))
            .execute(store.pool())
            .await
            .expect("table");
        store
    }

    async fn ids(&self, store: &Store) -> Vec<String> {
        let rows: Vec<(String,)> = sqlx::query_as(&format!("SELECT id FROM {} ORDER BY id", self.table))
            .fetch_all(store.pool())
            .await
            .expect("select");
        rows.into_iter().map(|(id,)| id).collect()
    }

    async fn drop_table(&self, store: &Store) {
        if self._dir.is_none() {
            let _ = sqlx::query(&format!("DROP TABLE {}", self.table)).execute(store.pool()).await;
        }
    }
}

async fn insert(table: &str, tx: &mut fiscus_store::WriteTx, id: &str) -> Result<(), sqlx::Error> {
    sqlx::query(&format!("INSERT INTO {table} (id, v) VALUES ($1, 1)")).bind(id).execute(tx.conn()).await?;
    Ok(())
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish: the lane is wedged"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_queued_behind_one_commit_together_and_survive_reopening() {
    for db in Db::all() {
        let store = db.store().await;
        let before = store.group_commit_stats();
        // The first writer holds the lane while twenty more queue behind it; they all join its group.
        let mut first = store.begin().await.expect("begin");
        insert(&db.table, &mut first, "w00").await.expect("insert");
        let mut tasks = Vec::new();
        for i in 1..=20 {
            let (store, table) = (store.clone(), db.table.clone());
            tasks.push(tokio::spawn(async move {
                let mut tx = store.begin().await.expect("begin");
                insert(&table, &mut tx, &format!("w{i:02}")).await.expect("insert");
                tx.commit().await.expect("commit");
            }));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        within("the first commit", first.commit()).await.expect("commit");
        for t in tasks {
            within("a member's commit", t).await.expect("task");
        }
        let after = store.group_commit_stats();
        let members = after.0 - before.0;
        let commits = after.1 - before.1;
        assert_eq!(members, 21, "{}", db.url);
        assert!(commits < members, "{commits} commits for {members} members: nothing was grouped");
        store.close().await;

        // Acknowledged means durable: a fresh connection to the database finds every row.
        let reopened = db.store().await;
        let ids = db.ids(&reopened).await;
        assert_eq!(ids.len(), 21, "{ids:?}");
        db.drop_table(&reopened).await;
        reopened.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_member_rolls_back_only_its_own_changes() {
    for db in Db::all() {
        let store = db.store().await;
        let mut first = store.begin().await.expect("begin");
        insert(&db.table, &mut first, "a").await.expect("insert");
        // `b` inserts a row, then fails (a duplicate key) and gives up: its row must not survive.
        let failing = {
            let (store, table) = (store.clone(), db.table.clone());
            tokio::spawn(async move {
                let mut tx = store.begin().await.expect("begin");
                insert(&table, &mut tx, "b").await.expect("insert");
                insert(&table, &mut tx, "b").await.expect_err("a duplicate must fail");
                drop(tx);
            })
        };
        let ok = {
            let (store, table) = (store.clone(), db.table.clone());
            tokio::spawn(async move {
                let mut tx = store.begin().await.expect("begin");
                insert(&table, &mut tx, "c").await.expect("insert");
                tx.commit().await.expect("commit");
            })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        within("the first commit", first.commit()).await.expect("commit");
        within("the failing member", failing).await.expect("task");
        within("the member after it", ok).await.expect("task");
        assert_eq!(db.ids(&store).await, vec!["a".to_string(), "c".to_string()], "{}", db.url);
        db.drop_table(&store).await;
        store.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dropped_member_does_not_wedge_the_lane_or_its_group() {
    for db in Db::all() {
        let store = db.store().await;
        // Dropped alone, with nobody waiting: the next writer proceeds and the row is gone.
        let mut tx = store.begin().await.expect("begin");
        insert(&db.table, &mut tx, "dropped").await.expect("insert");
        drop(tx);
        let mut tx = within("a writer after a drop", store.begin()).await.expect("begin");
        insert(&db.table, &mut tx, "kept").await.expect("insert");
        within("its commit", tx.commit()).await.expect("commit");

        // A member that committed and waits for its group while the only other member, queued behind it, is
        // dropped half-way: the group must still be committed and the waiting member acknowledged.
        let mut first = store.begin().await.expect("begin");
        insert(&db.table, &mut first, "grouped").await.expect("insert");
        let abandoned = {
            let (store, table) = (store.clone(), db.table.clone());
            tokio::spawn(async move {
                let mut tx = store.begin().await.expect("begin");
                insert(&table, &mut tx, "abandoned").await.expect("insert");
                // Never committed: the task ends and drops it.
            })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        within("a member whose group-mate was dropped", first.commit()).await.expect("commit");
        within("the abandoned member", abandoned).await.expect("task");

        // A writer cancelled while queued for the lane leaves nothing behind either.
        let holder = store.begin().await.expect("begin");
        let queued = {
            let store = store.clone();
            tokio::spawn(async move { store.begin().await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        queued.abort();
        let _ = queued.await;
        within("a commit after a cancelled waiter", holder.commit()).await.expect("commit");

        let mut tx = within("a writer at the end", store.begin()).await.expect("begin");
        insert(&db.table, &mut tx, "last").await.expect("insert");
        within("its commit", tx.commit()).await.expect("commit");
        assert_eq!(
            db.ids(&store).await,
            vec!["grouped".to_string(), "kept".to_string(), "last".to_string()],
            "{}",
            db.url
        );
        db.drop_table(&store).await;
        store.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_concurrent_writers_each_get_their_own_outcome() {
    for db in Db::all() {
        let store = db.store().await;
        let db = Arc::new(db);
        let mut tasks = Vec::new();
        for i in 0..200 {
            let (store, table) = (store.clone(), db.table.clone());
            tasks.push(tokio::spawn(async move {
                let mut tx = store.begin().await.expect("begin");
                insert(&table, &mut tx, &format!("r{i:03}")).await.expect("insert");
                if i % 7 == 0 {
                    // Every seventh gives up; the others must not notice.
                    return false;
                }
                tx.commit().await.expect("commit");
                true
            }));
        }
        let mut committed = 0;
        for t in tasks {
            if within("a writer", t).await.expect("task") {
                committed += 1;
            }
        }
        let ids = db.ids(&store).await;
        assert_eq!(ids.len(), committed, "{}", db.url);
        assert!(ids.iter().all(|id| id[1..].parse::<u32>().expect("number") % 7 != 0));
        db.drop_table(&store).await;
        store.close().await;
    }
}
