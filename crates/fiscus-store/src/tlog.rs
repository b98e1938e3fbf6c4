//! The transparency log's storage (`fiscus_domain::tlog`): leaves (written with their records, see
//! `audit::log_record`, one `tlog_batches` row per workspace per commit group), the index of integrated
//! leaves by record, the tiles and tree size the integrator keeps, and every checkpoint issued. The leaves
//! are in the database with their records; the rest is the integrated state, read through an
//! [`EvidenceConn`] and written through an [`EvidenceTx`] (on SQLite a file of its own: `evidence_db`).
//!
//! Why batches and an index apart: every keyed write adds two leaves, and a row per leaf with its index by
//! record cost keyed writes on SQLite 29 % of their rate (`bench/evidence.sh`); a group's one row costs the
//! writers almost nothing, and the integrator indexes its leaves in bulk, off their path. On two cores the
//! integrator's index rows were then most of what the log cost the writers, so the index holds as little
//! as it can: audit events are not in it (an event's row names its own leaf for free: `audit::chain` knows
//! it as it inserts it), and for the other leaves it holds positions only (`tlog_positions`: id and leaf
//! index under one key), every leaf found through it being read from the batches and checked to be the
//! record's. Earlier releases' whole-leaf index (`tlog_leaves`) is still read for what it holds.
//! It is long because finding a record's leaves takes those three ways (an event's row, the index, the
//! batches past it), each with its reads, beside the tiles' and checkpoints' few.
//!
//! Leaves, full tiles and checkpoints are never changed once written; the rightmost tile of each level is
//! rewritten wider as the tree grows (a narrower version is its prefix). Every function takes the workspace
//! first, except [`behind`], the integrator's claim, which serves every workspace (a named exception to
//! invariant 2, like the settlement claim).

use crate::dialect::{backend_of, for_update, numbered};
use crate::evidence_db::{EvidenceConn, EvidenceTx};
use crate::{Result, StoreError};
use fiscus_domain::tlog::tiles::Tiles;
use fiscus_domain::tlog::{AUDIT_EVENT, Hash, Leaf, audit_event_seq, from_hex, hex};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, BTreeSet};

/// Whether writes put leaves in the log (on unless `[evidence] log = false`, which exists only to measure
/// what the log costs: `bench/evidence.sh`). One switch per process, since one process serves one database.
static LOGGING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Turns the writing of leaves on or off for this process (see [`logging`]).
pub fn set_logging(on: bool) {
    LOGGING.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether writes put leaves in the log. With it off, nothing written meanwhile can be proved, and `fiscus
/// verify evidence` names every such record.
pub fn logging() -> bool {
    LOGGING.load(std::sync::atomic::Ordering::Relaxed)
}

/// A leaf as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredLeaf {
    pub index: i64,
    pub leaf: Leaf,
}

type LeafRow = (i64, String, String, String);

fn leaf_of(row: LeafRow) -> StoredLeaf {
    StoredLeaf { index: row.0, leaf: Leaf { kind: row.1, id: row.2, record_hash: row.3 } }
}

/// A run of leaves as one `tlog_batches` row holds them: three lines per leaf (kind, id, record hash), which is
/// each leaf's entry without its constant first line.
pub(crate) fn encode_leaves(leaves: &[Leaf]) -> String {
    let mut out =
        String::with_capacity(leaves.iter().map(|l| l.kind.len() + l.id.len() + l.record_hash.len() + 3).sum());
    for leaf in leaves {
        for field in [&leaf.kind, &leaf.id, &leaf.record_hash] {
            out.push_str(field);
            out.push('\n');
        }
    }
    out
}

/// The leaves of a `tlog_batches` row (see [`encode_leaves`]) whose indices are in `wanted`; `Corrupt` unless
/// it holds exactly `count`. Only those are copied out: a proof wants one leaf of a batch that may hold a
/// thousand, and copying them all cost a third of its time.
fn decode_leaves(first: i64, count: i64, text: &str, wanted: std::ops::Range<i64>) -> Result<Vec<StoredLeaf>> {
    let corrupt = || StoreError::Corrupt(format!("tlog_batches.leaves from leaf {first}"));
    let body = text.strip_suffix('\n').ok_or_else(corrupt)?;
    let mut lines = body.split('\n');
    let (lo, hi) = (wanted.start.max(first), wanted.end.min(first.saturating_add(count)));
    // Sized by what the text can hold, never by the stored count alone (a damaged count is `Corrupt`, not
    // an allocation of its size).
    let mut out = Vec::with_capacity(((hi - lo).max(0) as usize).min(text.len() / 6));
    let mut index = first;
    while let Some(kind) = lines.next() {
        let (Some(id), Some(record_hash)) = (lines.next(), lines.next()) else { return Err(corrupt()) };
        if index >= lo && index < hi {
            out.push(StoredLeaf {
                index,
                leaf: Leaf { kind: kind.into(), id: id.into(), record_hash: record_hash.into() },
            });
        }
        index += 1;
    }
    if index - first != count {
        return Err(corrupt());
    }
    Ok(out)
}

/// How many leaves the workspace's log has (committed).
pub async fn size(conn: &mut AnyConnection, workspace_id: &str) -> Result<i64> {
    let row: Option<(i64,)> = sqlx::query_as("SELECT leaves FROM audit_heads WHERE workspace_id = $1")
        .bind(workspace_id)
        .fetch_optional(&mut *conn)
        .await?;
    row.map(|(n,)| n).ok_or(StoreError::NotFound)
}

/// Leaves `[from, from + limit)` in order, as committed (a batch another connection has not committed yet
/// leaves a gap: the caller takes the contiguous run).
pub async fn leaves(conn: &mut AnyConnection, workspace_id: &str, from: i64, limit: i64) -> Result<Vec<StoredLeaf>> {
    let end = from.saturating_add(limit);
    // The batch holding `from` starts at or before it: the latest batch that does.
    let rows: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT first_leaf, leaf_count, leaves FROM tlog_batches WHERE workspace_id = $1 AND first_leaf < $3 \
         AND first_leaf >= COALESCE((SELECT MAX(first_leaf) FROM tlog_batches \
                                     WHERE workspace_id = $1 AND first_leaf <= $2), 0) \
         ORDER BY first_leaf",
    )
    .bind(workspace_id)
    .bind(from)
    .bind(end)
    .fetch_all(&mut *conn)
    .await?;
    let mut out = Vec::new();
    for (first, count, text) in rows {
        out.extend(decode_leaves(first, count, &text, from..end)?);
    }
    Ok(out)
}

/// Leaves `[from, from + limit)` as earlier releases' index by record holds them (`tlog_leaves`, whole
/// leaves), in order (`fiscus verify evidence` compares them with the log's).
pub async fn indexed(ev: &mut EvidenceConn, workspace_id: &str, from: i64, limit: i64) -> Result<Vec<StoredLeaf>> {
    let rows: Vec<LeafRow> = sqlx::query_as(
        "SELECT leaf_index, kind, record_id, record_hash FROM tlog_leaves \
         WHERE workspace_id = $1 AND leaf_index >= $2 AND leaf_index < $3 ORDER BY leaf_index",
    )
    .bind(workspace_id)
    .bind(from)
    .bind(from.saturating_add(limit))
    .fetch_all(ev.conn())
    .await?;
    Ok(rows.into_iter().map(leaf_of).collect())
}

/// The latest leaf of record `record_id` (of `kind`, when given) below `size`.
pub async fn find(
    conn: &mut AnyConnection,
    ev: &mut EvidenceConn,
    workspace_id: &str,
    record_id: &str,
    kind: Option<&str>,
    size: i64,
) -> Result<Option<StoredLeaf>> {
    let found = find_many(conn, ev, workspace_id, &[record_id], size).await?;
    Ok(found
        .get(record_id)
        .and_then(|leaves| leaves.iter().rev().find(|l| kind.is_none_or(|k| l.leaf.kind == k)))
        .cloned())
}

/// Every leaf of `record_ids` below `size`, for proofs, bundles and verification: record id → its leaves,
/// oldest first, each as the log holds it. An audit event's leaf is found by its row, which names its index
/// (see [`carried`]); the other leaves, once integrated, by their positions (`tlog_positions`, or what
/// earlier releases indexed whole in `tlog_leaves`), and beyond the integrated tree by reading the batches
/// past it (a short run while the integrator keeps up).
pub async fn find_many(
    conn: &mut AnyConnection,
    ev: &mut EvidenceConn,
    workspace_id: &str,
    record_ids: &[&str],
    size: i64,
) -> Result<BTreeMap<String, Vec<StoredLeaf>>> {
    let mut out: BTreeMap<String, Vec<StoredLeaf>> = BTreeMap::new();
    let events: Vec<(i64, &str)> =
        record_ids.iter().filter_map(|id| audit_event_seq(id).map(|seq| (seq, *id))).collect();
    let carried = carried(conn, workspace_id, &events, size).await?;
    for leaf in carried {
        out.entry(leaf.leaf.id.clone()).or_default().push(leaf);
    }
    // An event found by its row has no other leaf; every other id is looked for in the index and past it.
    let rest: Vec<&str> = record_ids.iter().copied().filter(|id| !out.contains_key(*id)).collect();
    if rest.is_empty() {
        return Ok(out);
    }
    // The integrated size first: the index holds every leaf below it that it is meant to (written in the
    // same transaction), so the index below it and the batches from it leave no gap whatever the
    // integrator does meanwhile.
    let integrated = tree(ev, workspace_id).await?.size;
    let below = size.min(integrated);
    let wanted: BTreeSet<&str> = rest.iter().copied().collect();
    let mut places = Vec::new();
    for chunk in rest.chunks(500) {
        // What earlier releases indexed, whole.
        let sql = format!(
            "SELECT leaf_index, kind, record_id, record_hash FROM tlog_leaves \
             WHERE workspace_id = $1 AND leaf_index < $2 AND record_id IN ({}) ORDER BY leaf_index",
            numbered(3, chunk.len())
        );
        let mut q = sqlx::query_as::<_, LeafRow>(&sql).bind(workspace_id).bind(below);
        for id in chunk {
            q = q.bind(*id);
        }
        for row in q.fetch_all(ev.conn()).await? {
            let leaf = leaf_of(row);
            out.entry(leaf.leaf.id.clone()).or_default().push(leaf);
        }
        places.extend(positions(ev, workspace_id, chunk, below).await?);
    }
    for leaf in leaves_at(conn, workspace_id, places).await? {
        if wanted.contains(leaf.leaf.id.as_str()) {
            out.entry(leaf.leaf.id.clone()).or_default().push(leaf);
        }
    }
    if size > integrated {
        let mut from = integrated;
        loop {
            let page = leaves(conn, workspace_id, from, PAGE.min(size - from)).await?;
            let Some(last) = page.last() else { break };
            from = last.index + 1;
            for leaf in page {
                if wanted.contains(leaf.leaf.id.as_str()) {
                    out.entry(leaf.leaf.id.clone()).or_default().push(leaf);
                }
            }
            if from >= size {
                break;
            }
        }
    }
    for leaves in out.values_mut() {
        leaves.sort_by_key(|l| l.index);
    }
    Ok(out)
}

/// The leaf indices below `below` the index by record names for `ids` (at most 500): candidates, which the
/// caller reads from the log and keeps only where the leaf is the record's.
async fn positions(ev: &mut EvidenceConn, workspace_id: &str, ids: &[&str], below: i64) -> Result<Vec<i64>> {
    let sql = format!(
        "SELECT leaf_index FROM tlog_positions WHERE workspace_id = $1 AND leaf_index < $2 AND record_id IN ({})",
        numbered(3, ids.len())
    );
    let mut q = sqlx::query_as::<_, (i64,)>(&sql).bind(workspace_id).bind(below);
    for id in ids {
        q = q.bind(*id);
    }
    Ok(q.fetch_all(ev.conn()).await?.into_iter().map(|(i,)| i).collect())
}

/// Which of `leaves` (integrated leaves, as the log holds them) the index by record names where they are:
/// `fiscus verify evidence` requires it of every leaf but the audit events whose rows name theirs.
pub async fn indexed_positions(
    ev: &mut EvidenceConn,
    workspace_id: &str,
    leaves: &[StoredLeaf],
) -> Result<BTreeSet<i64>> {
    let ids: Vec<&str> = leaves.iter().map(|l| l.leaf.id.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
    let at: BTreeSet<i64> = leaves.iter().map(|l| l.index).collect();
    let below = leaves.iter().map(|l| l.index + 1).max().unwrap_or(0);
    let mut out = BTreeSet::new();
    for chunk in ids.chunks(500) {
        out.extend(positions(ev, workspace_id, chunk, below).await?.into_iter().filter(|i| at.contains(i)));
    }
    Ok(out)
}

/// The leaves of audit events (`(seq, log id)`) whose rows name their index below `size`, read from the log
/// at those indices and kept only where the log's leaf there is that event's: a row whose index was edited
/// finds nothing, never another leaf. Events chained with the log on carry their index (`audit::chain`);
/// those chained before, or logged by a backfill, do not, and the index by record holds them.
async fn carried(
    conn: &mut AnyConnection,
    workspace_id: &str,
    events: &[(i64, &str)],
    size: i64,
) -> Result<Vec<StoredLeaf>> {
    let mut places: Vec<i64> = Vec::with_capacity(events.len());
    for chunk in events.chunks(500) {
        let sql = format!(
            "SELECT leaf_index FROM audit_events WHERE workspace_id = $1 AND leaf_index < $2 AND seq IN ({})",
            numbered(3, chunk.len())
        );
        let mut q = sqlx::query_as::<_, (i64,)>(&sql).bind(workspace_id).bind(size);
        for (seq, _) in chunk {
            q = q.bind(*seq);
        }
        places.extend(q.fetch_all(&mut *conn).await?.into_iter().map(|(i,)| i));
    }
    let wanted: BTreeSet<&str> = events.iter().map(|(_, id)| *id).collect();
    Ok(leaves_at(conn, workspace_id, places)
        .await?
        .into_iter()
        .filter(|l| l.leaf.kind == AUDIT_EVENT && wanted.contains(l.leaf.id.as_str()))
        .collect())
}

/// The leaves at `indices` (any order), as the log holds them, reading each run of indices that lie close
/// together in one query (a run's gaps are read and dropped: at most [`BATCH_GAP`] leaves each).
async fn leaves_at(conn: &mut AnyConnection, workspace_id: &str, mut indices: Vec<i64>) -> Result<Vec<StoredLeaf>> {
    indices.sort_unstable();
    indices.dedup();
    let mut out = Vec::with_capacity(indices.len());
    let mut start = 0;
    while start < indices.len() {
        let mut end = start + 1;
        while end < indices.len() && indices[end] - indices[end - 1] <= BATCH_GAP {
            end += 1;
        }
        let (lo, hi) = (indices[start], indices[end - 1]);
        let wanted = &indices[start..end];
        out.extend(
            leaves(conn, workspace_id, lo, hi - lo + 1)
                .await?
                .into_iter()
                .filter(|l| wanted.binary_search(&l.index).is_ok()),
        );
        start = end;
    }
    Ok(out)
}

/// The widest gap between two wanted leaves read in one query by [`leaves_at`] (one full batch).
const BATCH_GAP: i64 = 1024;

/// What of an integrated run the index by record must hold: every leaf but the audit events whose rows name
/// their place in the log (see [`carried`]), which the integrator reads here, with the run, before it saves.
pub async fn to_index(conn: &mut AnyConnection, workspace_id: &str, run: &[StoredLeaf]) -> Result<Vec<StoredLeaf>> {
    let seqs: Vec<i64> =
        run.iter().filter(|l| l.leaf.kind == AUDIT_EVENT).filter_map(|l| audit_event_seq(&l.leaf.id)).collect();
    let (Some(lo), Some(hi)) = (seqs.iter().min(), seqs.iter().max()) else { return Ok(run.to_vec()) };
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT seq, leaf_index FROM audit_events \
         WHERE workspace_id = $1 AND seq >= $2 AND seq <= $3 AND leaf_index IS NOT NULL",
    )
    .bind(workspace_id)
    .bind(lo)
    .bind(hi)
    .fetch_all(&mut *conn)
    .await?;
    let carried: std::collections::HashMap<i64, i64> = rows.into_iter().collect();
    Ok(run
        .iter()
        .filter(|l| {
            l.leaf.kind != AUDIT_EVENT
                || audit_event_seq(&l.leaf.id).is_none_or(|seq| carried.get(&seq) != Some(&l.index))
        })
        .cloned()
        .collect())
}

/// Leaves read per query past the integrated tree.
const PAGE: i64 = 65_536;

/// How far a workspace's tiles reach and the root there (`(0, empty root)` before the first integration).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    pub size: i64,
    pub root: Hash,
}

/// The integrated tree of a workspace.
pub async fn tree(ev: &mut EvidenceConn, workspace_id: &str) -> Result<Tree> {
    let row: Option<(i64, String)> = sqlx::query_as("SELECT size, root_hash FROM tlog_trees WHERE workspace_id = $1")
        .bind(workspace_id)
        .fetch_optional(ev.conn())
        .await?;
    match row {
        None => Ok(Tree { size: 0, root: fiscus_domain::tlog::empty_root() }),
        Some((size, root)) => {
            let root = from_hex(&root)
                .ok_or_else(|| StoreError::Corrupt(format!("tlog_trees.root_hash of {workspace_id}")))?;
            Ok(Tree { size, root })
        }
    }
}

/// Workspaces whose log has leaves beyond their integrated tree: `(workspace, leaves, integrated size)`, at
/// most `limit`, those furthest behind first. Not scoped to a workspace: the integrator serves them all. The
/// heads are in the database and the trees in the integrated state, so the two are joined here.
pub async fn behind(conn: &mut AnyConnection, ev: &mut EvidenceConn, limit: i64) -> Result<Vec<(String, i64, i64)>> {
    let heads: Vec<(String, i64)> =
        sqlx::query_as("SELECT workspace_id, leaves FROM audit_heads WHERE leaves > 0").fetch_all(&mut *conn).await?;
    let trees: std::collections::HashMap<String, i64> =
        sqlx::query_as("SELECT workspace_id, size FROM tlog_trees").fetch_all(ev.conn()).await?.into_iter().collect();
    let mut out: Vec<(String, i64, i64)> = heads
        .into_iter()
        .map(|(w, leaves)| {
            let size = trees.get(&w).copied().unwrap_or(0);
            (w, leaves, size)
        })
        .filter(|(_, leaves, size)| leaves > size)
        .collect();
    out.sort_by(|a, b| (b.1 - b.2).cmp(&(a.1 - a.2)).then_with(|| a.0.cmp(&b.0)));
    out.truncate(limit.max(0) as usize);
    Ok(out)
}

/// Reads the tiles `wanted` names (level, index), each as stored (its widest version): per level one
/// `tile_index IN (…)`, the levels joined by `UNION ALL`, so that every tile is a lookup of the key. (A
/// disjunction of `(level = … AND tile_index = …)` pairs is not: SQLite searched the key by workspace only
/// and tested every tile of it, and at a million leaves that scan was most of an inclusion proof's time.)
pub async fn tiles(ev: &mut EvidenceConn, workspace_id: &str, wanted: &BTreeSet<(u8, u64)>) -> Result<Tiles> {
    let mut out = Tiles::default();
    let keys: Vec<&(u8, u64)> = wanted.iter().collect();
    for chunk in keys.chunks(400) {
        let mut sql = String::new();
        let mut binds: Vec<i64> = Vec::with_capacity(chunk.len() + 8);
        // `chunk` is sorted by level, so each level's run is contiguous.
        for run in chunk.chunk_by(|a, b| a.0 == b.0) {
            if !sql.is_empty() {
                sql.push_str(" UNION ALL ");
            }
            binds.push(i64::from(run[0].0));
            let level = binds.len() + 1;
            let first = binds.len() + 2;
            binds.extend(run.iter().map(|(_, index)| *index as i64));
            sql.push_str(&format!(
                "SELECT level, tile_index, hashes FROM tlog_tiles WHERE workspace_id = $1 AND level = ${level} \
                 AND tile_index IN ({})",
                numbered(first, run.len())
            ));
        }
        let mut q = sqlx::query_as::<_, (i64, i64, String)>(&sql).bind(workspace_id);
        for b in binds {
            q = q.bind(b);
        }
        for (level, index, hashes) in q.fetch_all(ev.conn()).await? {
            out.0.insert((level as u8, index as u64), decode_tile(&hashes)?);
        }
    }
    Ok(out)
}

/// Tile `(level, index)` as stored, if any.
pub async fn tile(ev: &mut EvidenceConn, workspace_id: &str, level: u8, index: u64) -> Result<Option<Vec<Hash>>> {
    let row: Option<(String,)> =
        sqlx::query_as("SELECT hashes FROM tlog_tiles WHERE workspace_id = $1 AND level = $2 AND tile_index = $3")
            .bind(workspace_id)
            .bind(i64::from(level))
            .bind(index as i64)
            .fetch_optional(ev.conn())
            .await?;
    row.map(|(h,)| decode_tile(&h)).transpose()
}

/// A stored tile's hashes from its hex, a byte at a time (a proof reads three tiles of up to 16 KiB of hex:
/// parsing each pair as a string cost more than the proof's hashing).
fn decode_tile(text: &str) -> Result<Vec<Hash>> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    let corrupt = || StoreError::Corrupt("tlog_tiles.hashes".into());
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(64) {
        return Err(corrupt());
    }
    let mut out = Vec::with_capacity(bytes.len() / 64);
    for chunk in bytes.chunks_exact(64) {
        let mut hash = [0u8; 32];
        for (i, pair) in chunk.chunks_exact(2).enumerate() {
            hash[i] = (nibble(pair[0]).ok_or_else(corrupt)? << 4) | nibble(pair[1]).ok_or_else(corrupt)?;
        }
        out.push(hash);
    }
    Ok(out)
}

/// Records an integration: the leaves integrated that the index by record holds (`indexed`, see
/// [`to_index`]), the tiles that changed
/// (each at its new width) and the tree's new size and root, if the tree is still at `from` (another node
/// may have integrated meanwhile: then nothing is written and `false` returned).
pub async fn save(
    tx: &mut EvidenceTx,
    workspace_id: &str,
    from: i64,
    to: &Tree,
    changed: &BTreeMap<(u8, u64), Vec<Hash>>,
    indexed: &[StoredLeaf],
    now: i64,
) -> Result<bool> {
    let lock = for_update(backend_of(tx.conn()));
    let current: Option<(i64,)> = sqlx::query_as(&format!("SELECT size FROM tlog_trees WHERE workspace_id = $1{lock}"))
        .bind(workspace_id)
        .fetch_optional(tx.conn())
        .await?;
    if current.map_or(0, |(s,)| s) != from {
        return Ok(false);
    }
    // Whole-leaf rows past `from` (earlier releases' index) can only be left by a log rebuilt by hand; the
    // index follows the tiles. So can positions, which a reader checks against the log anyway, but which
    // would collide with the ones written now: a log integrated again from nothing starts from no positions
    // (rebuilding it from any other size is not supported: the write fails on the key, and nothing changes).
    sqlx::query("DELETE FROM tlog_leaves WHERE workspace_id = $1 AND leaf_index >= $2")
        .bind(workspace_id)
        .bind(from)
        .execute(tx.conn())
        .await?;
    if current.is_none() {
        sqlx::query("DELETE FROM tlog_positions WHERE workspace_id = $1").bind(workspace_id).execute(tx.conn()).await?;
    }
    index(tx, workspace_id, indexed).await?;
    for ((level, index), hashes) in changed {
        let text: String = hashes.iter().map(hex).collect();
        sqlx::query(
            "INSERT INTO tlog_tiles (workspace_id, level, tile_index, hashes) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (workspace_id, level, tile_index) DO UPDATE SET hashes = excluded.hashes",
        )
        .bind(workspace_id)
        .bind(i64::from(*level))
        .bind(*index as i64)
        .bind(text)
        .execute(tx.conn())
        .await?;
    }
    let root = hex(&to.root);
    if current.is_some() {
        sqlx::query("UPDATE tlog_trees SET size = $1, root_hash = $2, integrated_at = $3 WHERE workspace_id = $4")
            .bind(to.size)
            .bind(&root)
            .bind(now)
            .bind(workspace_id)
            .execute(tx.conn())
            .await?;
    } else {
        // A second node inserting the first row at once fails on the key: its pass is retried later.
        sqlx::query("INSERT INTO tlog_trees (workspace_id, size, root_hash, integrated_at) VALUES ($1, $2, $3, $4)")
            .bind(workspace_id)
            .bind(to.size)
            .bind(&root)
            .bind(now)
            .execute(tx.conn())
            .await?;
    }
    Ok(true)
}

/// A checkpoint as issued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredCheckpoint {
    pub tree_size: i64,
    pub root: Hash,
    /// The signed note as served (the log's signature and any cosignatures).
    pub note: String,
    pub created_at: i64,
}

type CheckpointRow = (i64, String, String, i64);

fn checkpoint_of(row: CheckpointRow) -> Result<StoredCheckpoint> {
    let root = from_hex(&row.1).ok_or_else(|| StoreError::Corrupt("tlog_checkpoints.root_hash".into()))?;
    Ok(StoredCheckpoint { tree_size: row.0, root, note: row.2, created_at: row.3 })
}

/// Keeps a checkpoint; `false` if one of that size exists already (it is kept, never replaced).
pub async fn insert_checkpoint(tx: &mut EvidenceTx, workspace_id: &str, c: &StoredCheckpoint) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO tlog_checkpoints (workspace_id, tree_size, root_hash, note, created_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (workspace_id, tree_size) DO NOTHING",
    )
    .bind(workspace_id)
    .bind(c.tree_size)
    .bind(hex(&c.root))
    .bind(&c.note)
    .bind(c.created_at)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Replaces a kept checkpoint's note by the same note with more signatures (a witness's cosignature); the
/// caller checked that the log's signed text is unchanged.
pub async fn cosign_checkpoint(tx: &mut EvidenceTx, workspace_id: &str, tree_size: i64, note: &str) -> Result<()> {
    sqlx::query("UPDATE tlog_checkpoints SET note = $1 WHERE workspace_id = $2 AND tree_size = $3")
        .bind(note)
        .bind(workspace_id)
        .bind(tree_size)
        .execute(tx.conn())
        .await?;
    Ok(())
}

const CHECKPOINT_COLUMNS: &str = "tree_size, root_hash, note, created_at";

/// The latest checkpoint, if any was issued.
pub async fn latest_checkpoint(ev: &mut EvidenceConn, workspace_id: &str) -> Result<Option<StoredCheckpoint>> {
    let row: Option<CheckpointRow> = sqlx::query_as(&format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM tlog_checkpoints WHERE workspace_id = $1 ORDER BY tree_size DESC LIMIT 1"
    ))
    .bind(workspace_id)
    .fetch_optional(ev.conn())
    .await?;
    row.map(checkpoint_of).transpose()
}

/// The checkpoint of exactly `tree_size`, if one was issued.
pub async fn checkpoint(ev: &mut EvidenceConn, workspace_id: &str, tree_size: i64) -> Result<Option<StoredCheckpoint>> {
    let row: Option<CheckpointRow> = sqlx::query_as(&format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM tlog_checkpoints WHERE workspace_id = $1 AND tree_size = $2"
    ))
    .bind(workspace_id)
    .bind(tree_size)
    .fetch_optional(ev.conn())
    .await?;
    row.map(checkpoint_of).transpose()
}

/// Checkpoints newest first, below `before` (a tree size) when given, at most `limit`.
pub async fn checkpoints(
    ev: &mut EvidenceConn,
    workspace_id: &str,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<StoredCheckpoint>> {
    let rows: Vec<CheckpointRow> = sqlx::query_as(&format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM tlog_checkpoints WHERE workspace_id = $1 AND tree_size < $2 \
         ORDER BY tree_size DESC LIMIT $3"
    ))
    .bind(workspace_id)
    .bind(before.unwrap_or(i64::MAX))
    .bind(limit)
    .fetch_all(ev.conn())
    .await?;
    rows.into_iter().map(checkpoint_of).collect()
}

/// Adds integrated leaves to the index by record (their positions), in one statement whose one parameter is
/// the positions as a JSON array the database takes apart. Rows of parameters cost more: SQLite finds each
/// bound parameter's number by a linear search of the statement's names, so binding is quadratic in a
/// statement's parameters, and a run of a thousand leaves cost ~9 us a leaf in 64-row statements. No `ON
/// CONFLICT`: PostgreSQL's speculative insertion cost more than the row itself (12.2 against 7.8 us a leaf
/// integrated, `bench/evidence.sh` part 1b), and a position is written once, by the pass that moves the
/// tree past it (see [`save`]).
async fn index(tx: &mut EvidenceTx, workspace_id: &str, leaves: &[StoredLeaf]) -> Result<()> {
    if leaves.is_empty() {
        return Ok(());
    }
    let rows: Vec<(&str, i64)> = leaves.iter().map(|l| (l.leaf.id.as_str(), l.index)).collect();
    let json = serde_json::to_string(&rows).map_err(|e| StoreError::Corrupt(format!("a position as JSON: {e}")))?;
    let sql = match backend_of(tx.conn()) {
        crate::Backend::Sqlite => {
            "INSERT INTO tlog_positions (workspace_id, record_id, leaf_index) \
             SELECT $1, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each($2)"
        }
        crate::Backend::Postgres => {
            "INSERT INTO tlog_positions (workspace_id, record_id, leaf_index) \
             SELECT $1, e.v->>0, (e.v->>1)::bigint FROM jsonb_array_elements($2::jsonb) AS e(v)"
        }
    };
    sqlx::query(sql).bind(workspace_id).bind(json).execute(tx.conn()).await?;
    Ok(())
}
