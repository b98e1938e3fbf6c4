//! Where the log's integrated state lives: on SQLite a file of its own beside the database, which an
//! earlier release's database is moved into once; on PostgreSQL the database itself.

use crate::helpers::*;
use fiscus_store::evidence_db::storage_of_the_log;
use fiscus_store::{Backend, Store, tlog};

/// Rows as an earlier release wrote them into the main file: a tree, a tile, a checkpoint and an index row.
async fn write_earlier_release_s_log(db: &Store, ws: &str) {
    let pool = db.pool();
    for sql in [
        format!(
            "INSERT INTO tlog_trees (workspace_id, size, root_hash, integrated_at) VALUES ('{ws}', 1, '{}', 1)",
            "ab".repeat(32)
        ),
        format!(
            "INSERT INTO tlog_tiles (workspace_id, level, tile_index, hashes) VALUES ('{ws}', 0, 0, '{}')",
            "ab".repeat(32)
        ),
        format!(
            "INSERT INTO tlog_checkpoints (workspace_id, tree_size, root_hash, note, created_at) \
             VALUES ('{ws}', 1, '{}', 'a signed note', 2)",
            "ab".repeat(32)
        ),
        format!(
            "INSERT INTO tlog_leaves (workspace_id, leaf_index, kind, record_id, record_hash) \
             VALUES ('{ws}', 0, 'actions', 'act_1', 'sha256:00')"
        ),
    ] {
        sqlx::query(&sql).execute(pool).await.expect("an earlier release's row");
    }
}

#[tokio::test]
async fn an_earlier_release_s_integrated_log_moves_into_the_evidence_file_once_and_only_there() {
    let db = fresh_store().await;
    if db.backend() != Backend::Sqlite {
        return;
    }
    let ws = workspace(&db).await;
    write_earlier_release_s_log(&db, &ws).await;
    // The evidence file of a database that predates it: gone, as it never existed.
    db.store.close().await;
    let evidence = fiscus_store::evidence_url(&db.url).expect("an evidence file");
    let path = evidence.trim_start_matches("sqlite://").split('?').next().expect("a path").to_string();
    assert!(path.ends_with("store-evidence.db"), "{path}");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }

    let reopened = Store::connect(&db.url, 2, seal_key()).await.expect("reopen");
    reopened.migrate().await.expect("migrate");
    let mut ev = reopened.evidence_read().await.expect("evidence");
    assert_eq!(tlog::tree(&mut ev, &ws).await.expect("tree").size, 1);
    let kept = tlog::latest_checkpoint(&mut ev, &ws).await.expect("checkpoint").expect("kept");
    assert_eq!((kept.tree_size, kept.note.as_str()), (1, "a signed note"));
    assert_eq!(tlog::indexed(&mut ev, &ws, 0, 10).await.expect("index").len(), 1);
    assert_eq!(tlog::tile(&mut ev, &ws, 0, 0).await.expect("tile").map(|t| t.len()), Some(1));
    drop(ev);
    // Nothing is left in the main file to be read by mistake, and a second start moves nothing again.
    for table in ["tlog_trees", "tlog_tiles", "tlog_checkpoints", "tlog_leaves"] {
        let (n,): (i64,) =
            sqlx::query_as(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(reopened.pool()).await.expect("count");
        assert_eq!(n, 0, "{table} in the main file");
    }
    reopened.migrate().await.expect("migrate again");
    let mut ev = reopened.evidence_read().await.expect("evidence");
    assert_eq!(tlog::checkpoints(&mut ev, &ws, None, 10).await.expect("checkpoints").len(), 1);
}

#[tokio::test]
async fn the_integrated_state_is_the_database_itself_on_postgresql_and_a_file_of_its_own_on_sqlite() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    write_earlier_release_s_log(&db, &ws).await;
    let mut ev = db.evidence_read().await.expect("evidence");
    let seen = tlog::tree(&mut ev, &ws).await.expect("tree").size;
    match db.backend() {
        // Written into the database, read as the integrated state.
        Backend::Postgres => assert_eq!(seen, 1),
        // Written into the main file after the start moved what it held: not the integrated state.
        Backend::Sqlite => assert_eq!(seen, 0),
    }
}

#[tokio::test]
async fn on_postgresql_the_log_s_hashes_are_stored_uncompressed_and_a_second_start_changes_nothing() {
    let db = fresh_store().await;
    if db.backend() != Backend::Postgres {
        return;
    }
    assert_eq!(storage_of_the_log(db.pool()).await.expect("storage"), ["e", "e"]);
    db.migrate().await.expect("a second start");
    assert_eq!(storage_of_the_log(db.pool()).await.expect("storage"), ["e", "e"]);
}

#[tokio::test]
async fn a_start_that_cannot_have_the_storage_lock_soon_leaves_the_setting_for_the_next_start() {
    let db = fresh_store().await;
    if db.backend() != Backend::Postgres {
        return;
    }
    for sql in [
        "ALTER TABLE tlog_batches ALTER COLUMN leaves SET STORAGE EXTENDED",
        "ALTER TABLE tlog_tiles ALTER COLUMN hashes SET STORAGE EXTENDED",
    ] {
        sqlx::query(sql).execute(db.pool()).await.expect("as an earlier release left it");
    }
    // A reader of the tiles in an open transaction: the change to them waits for it, then gives up.
    let mut reader = db.pool().begin().await.expect("begin");
    sqlx::query("SELECT COUNT(*) FROM tlog_tiles").execute(&mut *reader).await.expect("read");
    let started = std::time::Instant::now();
    db.migrate().await.expect("the start goes on");
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "waited {:?}", started.elapsed());
    assert_eq!(storage_of_the_log(db.pool()).await.expect("storage"), ["e", "x"]);
    reader.commit().await.expect("end the read");
    db.migrate().await.expect("the next start");
    assert_eq!(storage_of_the_log(db.pool()).await.expect("storage"), ["e", "e"]);
}

#[tokio::test]
async fn tiles_of_several_levels_read_back_at_once_each_by_its_key_and_only_those_asked() {
    use std::collections::{BTreeMap, BTreeSet};
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let hash = |level: u8, index: u64, i: u64| {
        let mut h = [0u8; 32];
        h[0] = level;
        h[1..9].copy_from_slice(&index.to_be_bytes());
        h[9..17].copy_from_slice(&i.to_be_bytes());
        h
    };
    // Tiles at three levels, several at each: what a tree of more than 65,536 leaves has.
    let mut changed = BTreeMap::new();
    for level in 0..3u8 {
        for index in 0..5u64 {
            changed.insert((level, index), (0..(index + 1)).map(|i| hash(level, index, i)).collect::<Vec<_>>());
        }
    }
    let root = tlog::Tree { size: 5, root: [7u8; 32] };
    let mut tx = db.evidence_begin().await.expect("begin");
    assert!(tlog::save(&mut tx, &ws, 0, &root, &changed, &[], 1).await.expect("save"));
    tx.commit().await.expect("commit");

    let wanted: BTreeSet<(u8, u64)> = [(0, 4), (0, 1), (1, 0), (1, 3), (2, 2), (2, 9), (3, 0)].into_iter().collect();
    let mut ev = db.evidence_read().await.expect("evidence");
    let read = tlog::tiles(&mut ev, &ws, &wanted).await.expect("tiles");
    let expected: BTreeMap<(u8, u64), Vec<[u8; 32]>> =
        changed.into_iter().filter(|(key, _)| wanted.contains(key)).collect();
    assert_eq!(read.0, expected);
    // Many at one level, more than one statement holds.
    let many: BTreeSet<(u8, u64)> = (0..1000u64).map(|i| (0, i % 5 + (i / 5) * 10)).collect();
    let read = tlog::tiles(&mut ev, &ws, &many).await.expect("tiles");
    assert_eq!(read.0.keys().copied().collect::<Vec<_>>(), vec![(0, 0), (0, 1), (0, 2), (0, 3), (0, 4)]);
}
