//! The transparency log's integrator, signer and prover (`fiscus_domain::tlog` says what the log is).
//!
//! Leaves are written with their records (`fiscus_store::audit`). Here, afterwards and without touching the
//! heads writers lock: the integrator reads committed leaves, extends the tiles and records the new tree
//! size ([`integrate`]); the signer issues a C2SP checkpoint of the integrated tree, on a schedule ([`run_once`])
//! or when asked ([`checkpoint_now`]), and keeps every one; the prover answers inclusion and consistency
//! proofs from the tiles, reading only those a proof needs (one query).
//!
//! The signing key is Ed25519, derived from the server key (so every node signs with the same key and no
//! key is stored in the database); its verifier key is public ([`verifier_key`]).

use crate::services::Services;
use fiscus_domain::api::evidence::{BundledRecordView, EvidenceBundleView, LogCheckpointView};
use fiscus_domain::tlog::note::{Checkpoint, NoteSigner, NoteVerifier};
use fiscus_domain::tlog::tiles::{self, Tiles};
use fiscus_domain::tlog::{self as tlog, Hash, Leaf, TreeError};
use fiscus_store::tlog::{StoredCheckpoint, StoredLeaf, Tree};
use fiscus_store::{StoreError, tlog as store};
use hmac::{Hmac, Mac};
use std::collections::{BTreeMap, BTreeSet};

/// Leaves integrated per transaction, at most: four level-0 tiles, their index rows and the parents' edge.
/// On SQLite the integrator's transaction holds the one writer, so it is kept to a few milliseconds whatever
/// the backlog: keyed writes wait behind it (a transaction of a second's leaves under load held them ~90 ms).
const TX_LEAVES: i64 = 1024;

/// Leaves the worker integrates per workspace per pass, at most, so that a workspace with a backlog of
/// millions never holds the others' logs back; and leaves read per query when the log is re-hashed.
const BATCH: i64 = 65_536;

/// What the evidence functions can refuse.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// A tree size beyond what is integrated.
    #[error("the log has {integrated} integrated leaves; {asked} were asked for")]
    Beyond { asked: i64, integrated: i64 },
}

/// The log's signing key, derived from the server key.
pub fn signer(services: &Services) -> NoteSigner {
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(&services.server_key).expect("HMAC takes any key");
    mac.update(b"fiscus-transparency-log-v1");
    NoteSigner::new(&services.settings.log_name(), mac.finalize().into_bytes().into())
}

/// The published verifier key (`<name>+<key id>+<key>`, C2SP `signed-note`).
pub fn verifier_key(services: &Services) -> String {
    signer(services).verifier().encode()
}

/// The verifier of this deployment's checkpoints.
pub fn verifier(services: &Services) -> NoteVerifier {
    signer(services).verifier()
}

/// A workspace log's origin line.
pub fn origin(services: &Services, workspace_id: &str) -> String {
    format!("{}/{workspace_id}", services.settings.log_name())
}

/// Extends the workspace's tiles over every committed leaf; returns the integrated tree. Another node doing
/// the same at once costs only a retry: the tree row is checked unchanged before the tiles are written.
pub async fn integrate(services: &Services, workspace_id: &str) -> Result<Tree, EvidenceError> {
    integrate_up_to(services, workspace_id, i64::MAX).await
}

/// [`integrate`], at most `most` leaves (in transactions of [`TX_LEAVES`]): the worker takes [`BATCH`] per
/// workspace per pass, so a workspace with a backlog of millions never holds the others' logs back.
async fn integrate_up_to(services: &Services, workspace_id: &str, most: i64) -> Result<Tree, EvidenceError> {
    // The target is set once: chasing leaves written meanwhile would turn a pass into a stream of tiny
    // transactions under load (each a commit the writers wait behind).
    let mut target = None;
    loop {
        let mut conn = services.store.read().await?;
        let tree = store::tree(&mut conn, workspace_id).await?;
        let target = match target {
            Some(t) => t,
            None => *target.insert(store::size(&mut conn, workspace_id).await?.min(tree.size.saturating_add(most))),
        };
        if target <= tree.size {
            return Ok(tree);
        }
        // Ending on a level-0 tile's edge when the backlog allows, so each full tile is written once.
        let take = (TX_LEAVES - tree.size % 256).min(target - tree.size);
        let new = store::leaves(&mut conn, workspace_id, tree.size, take).await?;
        // Leaves are committed in index order within a workspace (the head hands indices out under its
        // lock), but a reader may see a later group before an earlier one's commit is visible on another
        // connection: integrate only the contiguous run.
        let contiguous = new.iter().enumerate().take_while(|(i, l)| l.index == tree.size + *i as i64).count();
        if contiguous == 0 {
            return Ok(tree);
        }
        let hashes: Vec<Hash> = new[..contiguous].iter().map(|l| l.leaf.hash()).collect();
        let size = tree.size as u64;
        let edge: BTreeSet<(u8, u64)> = tiles::edge(size).into_iter().map(|(l, i, _)| (l, i)).collect();
        let mut working = store::tiles(&mut conn, workspace_id, &edge).await?;
        for (level, index, width) in tiles::edge(size) {
            if let Some(t) = working.0.get_mut(&(level, index)) {
                t.truncate(width as usize);
            }
        }
        let changed = working.append(size, &hashes)?;
        let new_size = size + hashes.len() as u64;
        let root = root_from(&mut conn, workspace_id, &mut working, new_size).await?;
        let changed: BTreeMap<(u8, u64), Vec<Hash>> = changed.into_iter().map(|k| (k, working.0[&k].clone())).collect();
        drop(conn);
        let to = Tree { size: new_size as i64, root };
        let mut tx = services.store.begin().await?;
        let saved = store::save(
            &mut tx,
            workspace_id,
            tree.size,
            &to,
            &changed,
            &new[..contiguous],
            fiscus_domain::clock::now_micros(),
        )
        .await;
        match saved {
            Ok(true) => tx.commit().await?,
            // Another node integrated meanwhile: read again.
            Ok(false) => drop(tx),
            Err(StoreError::Conflict(_)) => drop(tx),
            Err(e) => return Err(e.into()),
        }
    }
}

/// The root of the first `size` leaves from `tiles`, fetching any tile it needs that is not there.
async fn root_from(
    conn: &mut fiscus_store::Connection,
    workspace_id: &str,
    working: &mut Tiles,
    size: u64,
) -> Result<Hash, EvidenceError> {
    let wanted = tiles::needed(&tlog::plan(|p| tlog::root(p, size))?);
    let missing: BTreeSet<(u8, u64)> = wanted.keys().filter(|k| !working.0.contains_key(k)).copied().collect();
    if !missing.is_empty() {
        let fetched = store::tiles(conn, workspace_id, &missing).await?;
        working.0.extend(fetched.0);
    }
    Ok(tlog::root(working, size)?)
}

/// Signs and keeps a checkpoint of the integrated tree if it grew since the last one; returns the latest.
async fn sign_if_grown(
    services: &Services,
    workspace_id: &str,
    tree: &Tree,
) -> Result<Option<StoredCheckpoint>, EvidenceError> {
    let mut conn = services.store.read().await?;
    let latest = store::latest_checkpoint(&mut conn, workspace_id).await?;
    drop(conn);
    if latest.as_ref().is_some_and(|c| c.tree_size >= tree.size) || tree.size == 0 {
        // A checkpoint a witness has not cosigned yet (it was down, or did not know the log yet) is offered
        // to it again; the witness answers from the size it has (409, then once more).
        return Ok(match latest {
            Some(c) if uncosigned(services, &c.note) => Some(witnessed(services, workspace_id, c, 0).await),
            other => other,
        });
    }
    let body = Checkpoint { origin: origin(services, workspace_id), size: tree.size as u64, root: tree.root }.body();
    let checkpoint = StoredCheckpoint {
        tree_size: tree.size,
        root: tree.root,
        note: signer(services).sign(&body),
        created_at: fiscus_domain::clock::now_micros(),
    };
    let mut tx = services.store.begin().await?;
    let inserted = store::insert_checkpoint(&mut tx, workspace_id, &checkpoint).await?;
    tx.commit().await?;
    let previous = latest.map(|c| c.tree_size).unwrap_or(0);
    if !inserted {
        // Another node (or this node's worker) signed the same size at once: the same body under the same
        // key, kept once; offered to a witness that has not cosigned it yet.
        let mut conn = services.store.read().await?;
        let kept = store::checkpoint(&mut conn, workspace_id, tree.size).await?;
        drop(conn);
        return Ok(match kept {
            Some(c) if uncosigned(services, &c.note) => Some(witnessed(services, workspace_id, c, previous).await),
            other => other,
        });
    }
    Ok(Some(witnessed(services, workspace_id, checkpoint, previous).await))
}

/// Whether a configured witness's cosignature is missing from `note`.
fn uncosigned(services: &Services, note: &str) -> bool {
    services.settings.evidence.witnesses.iter().any(|w| !has_cosignature(w, note))
}

fn has_cosignature(w: &crate::settings::Witness, note: &str) -> bool {
    NoteVerifier::parse(&w.key).ok().and_then(|k| k.cosigned_at(note)).is_some()
}

/// Asks every configured witness to cosign a new checkpoint (C2SP `tlog-witness` `add-checkpoint`, with the
/// consistency proof from the size the witness last cosigned), checks each cosignature with the witness's
/// key and keeps the valid ones on the stored note. A witness that is down, refuses or answers something
/// that does not verify costs only its cosignature (logged): the checkpoint stands signed by the log.
async fn witnessed(services: &Services, workspace_id: &str, c: StoredCheckpoint, previous: i64) -> StoredCheckpoint {
    if services.settings.evidence.witnesses.is_empty() {
        return c;
    }
    let mut note = c.note.clone();
    let body = Checkpoint { origin: origin(services, workspace_id), size: c.tree_size as u64, root: c.root }.body();
    for w in &services.settings.evidence.witnesses {
        if has_cosignature(w, &note) {
            continue;
        }
        match cosignature(services, workspace_id, &c, previous, w).await {
            Ok(line) => {
                let candidate = format!("{note}{line}");
                let verified = NoteVerifier::parse(&w.key).ok().and_then(|k| k.cosigned_at(&candidate));
                if verified.is_some()
                    && fiscus_domain::tlog::note::Note::parse(&candidate).is_ok_and(|n| n.text == body)
                {
                    note = candidate;
                } else {
                    tracing::warn!(witness = %w.url, "a witness answered a cosignature that does not verify; not kept");
                }
            }
            Err(e) => tracing::warn!(witness = %w.url, error = %e, "a witness did not cosign a checkpoint"),
        }
    }
    if note == c.note {
        return c;
    }
    let saved = async {
        let mut tx = services.store.begin().await?;
        store::cosign_checkpoint(&mut tx, workspace_id, c.tree_size, &note).await?;
        tx.commit().await
    };
    match saved.await {
        Ok(()) => StoredCheckpoint { note, ..c },
        Err(e) => {
            tracing::warn!(error = %e, "a checkpoint's cosignatures could not be kept");
            c
        }
    }
}

/// One witness's cosignature lines for checkpoint `c`: `old <size>`, the consistency proof from that size,
/// a blank line and the note; on 409 the witness says which size it has, and the request is made once more
/// from there.
async fn cosignature(
    services: &Services,
    workspace_id: &str,
    c: &StoredCheckpoint,
    previous: i64,
    w: &crate::settings::Witness,
) -> anyhow::Result<String> {
    let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(5)).build()?;
    let url = format!("{}/add-checkpoint", w.url.trim_end_matches('/'));
    let mut old = previous.min(c.tree_size);
    for _ in 0..2 {
        let (proof, _, _) = consistency(services, workspace_id, old, c.tree_size).await?;
        let mut request = format!("old {old}\n");
        for h in &proof {
            request.push_str(&tlog::b64(h));
            request.push('\n');
        }
        request.push('\n');
        request.push_str(&c.note);
        let response = client.post(&url).body(request).send().await?;
        let status = response.status();
        let text = response.text().await?;
        if status == reqwest::StatusCode::CONFLICT {
            old = text.trim().parse().map_err(|_| anyhow::anyhow!("a 409 without the witness's size"))?;
            anyhow::ensure!(old <= c.tree_size, "the witness has a larger tree ({old}) than this checkpoint");
            continue;
        }
        anyhow::ensure!(status.is_success(), "the witness answered {status}: {}", text.trim());
        return Ok(text);
    }
    anyhow::bail!("the witness's size kept moving")
}

/// Integrates every committed leaf and signs a checkpoint of it (or returns the one already signed at that
/// size). `None` only for a log with no leaf at all.
pub async fn checkpoint_now(
    services: &Services,
    workspace_id: &str,
) -> Result<Option<StoredCheckpoint>, EvidenceError> {
    let tree = integrate(services, workspace_id).await?;
    sign_if_grown(services, workspace_id, &tree).await
}

/// One pass of the evidence worker: integrates every workspace whose log grew, and signs a checkpoint for
/// those whose last one is older than the interval. Returns how many workspaces it integrated.
pub async fn run_once(services: &Services) -> Result<usize, EvidenceError> {
    backfill(services).await?;
    let mut conn = services.store.read().await?;
    let behind = store::behind(&mut conn, 100).await?;
    drop(conn);
    let interval =
        services.settings.evidence.checkpoint_interval_seconds as i64 * fiscus_domain::clock::MICROS_PER_SECOND;
    let now = fiscus_domain::clock::now_micros();
    for (workspace_id, _, _) in &behind {
        // One workspace's trouble (a damaged tile, a leaf missing) is logged and never holds back the others.
        let tree = match integrate_up_to(services, workspace_id, BATCH).await {
            Ok(tree) => tree,
            Err(e) => {
                tracing::warn!(workspace = %workspace_id, error = %e, "a workspace's log could not be integrated");
                continue;
            }
        };
        let mut conn = services.store.read().await?;
        let latest = store::latest_checkpoint(&mut conn, workspace_id).await?;
        drop(conn);
        if latest.is_none_or(|c| now - c.created_at >= interval) {
            sign_if_grown(services, workspace_id, &tree).await?;
        }
    }
    Ok(behind.len())
}

/// The tiles a computation reads, fetched in one query.
async fn tiles_for<T>(
    services: &Services,
    workspace_id: &str,
    compute: impl Fn(&mut tlog::Plan) -> Result<T, TreeError>,
) -> Result<Tiles, EvidenceError> {
    let wanted: BTreeSet<(u8, u64)> = tiles::needed(&tlog::plan(compute)?).into_keys().collect();
    let mut conn = services.store.read().await?;
    Ok(store::tiles(&mut conn, workspace_id, &wanted).await?)
}

/// The integrated size, refusing a tree size beyond it.
async fn within(services: &Services, workspace_id: &str, size: i64) -> Result<Tree, EvidenceError> {
    let mut conn = services.store.read().await?;
    let tree = store::tree(&mut conn, workspace_id).await?;
    if size > tree.size || size < 0 {
        return Err(EvidenceError::Beyond { asked: size, integrated: tree.size });
    }
    Ok(tree)
}

/// The inclusion proof of leaf `index` in the tree of `size` leaves, and that tree's root. `signed`: the
/// root of a checkpoint of that size, which then needs neither computing nor the integrated size read (a
/// checkpoint is only ever signed over integrated leaves; a proof from damaged tiles fails against it, in
/// the client's hands, rather than being made to match).
pub async fn inclusion(
    services: &Services,
    workspace_id: &str,
    index: i64,
    size: i64,
    signed: Option<Hash>,
) -> Result<(Vec<Hash>, Hash), EvidenceError> {
    let (m, n) = (index as u64, size as u64);
    if let Some(root) = signed {
        let mut tiles = tiles_for(services, workspace_id, |p| tlog::inclusion_proof(p, m, n)).await?;
        return Ok((tlog::inclusion_proof(&mut tiles, m, n)?, root));
    }
    within(services, workspace_id, size).await?;
    let mut tiles = tiles_for(services, workspace_id, |p| {
        tlog::inclusion_proof(p, m, n)?;
        tlog::root(p, n)
    })
    .await?;
    let proof = tlog::inclusion_proof(&mut tiles, m, n)?;
    let root = tlog::root(&mut tiles, n)?;
    Ok((proof, root))
}

/// The consistency proof from the tree of `first` leaves to the tree of `second`, and both roots.
pub async fn consistency(
    services: &Services,
    workspace_id: &str,
    first: i64,
    second: i64,
) -> Result<(Vec<Hash>, Hash, Hash), EvidenceError> {
    within(services, workspace_id, second).await?;
    if first > second || first < 0 {
        return Err(TreeError::Shrinks { first: first.max(0) as u64, second: second as u64 }.into());
    }
    let (m, n) = (first as u64, second as u64);
    let mut tiles = tiles_for(services, workspace_id, |p| {
        tlog::consistency_proof(p, m, n)?;
        tlog::root(p, m)?;
        tlog::root(p, n)
    })
    .await?;
    Ok((tlog::consistency_proof(&mut tiles, m, n)?, tlog::root(&mut tiles, m)?, tlog::root(&mut tiles, n)?))
}

/// The latest leaf of a record below `size`.
pub async fn leaf_of(
    services: &Services,
    workspace_id: &str,
    record_id: &str,
    kind: Option<&str>,
    size: i64,
) -> Result<Option<StoredLeaf>, EvidenceError> {
    let mut conn = services.store.read().await?;
    Ok(store::find(&mut conn, workspace_id, record_id, kind, size).await?)
}

/// The inclusion proofs of many leaves in the tree of `size` leaves, reading every tile they need in one
/// query (a bundle's proofs share most of their tiles), and that tree's root.
pub async fn inclusions(
    services: &Services,
    workspace_id: &str,
    indices: &[i64],
    size: i64,
) -> Result<(Vec<Vec<Hash>>, Hash), EvidenceError> {
    within(services, workspace_id, size).await?;
    let n = size as u64;
    let mut wanted: BTreeSet<(u8, u64)> = tiles::needed(&tlog::plan(|p| tlog::root(p, n))?).into_keys().collect();
    for &m in indices {
        wanted.extend(tiles::needed(&tlog::plan(|p| tlog::inclusion_proof(p, m as u64, n))?).into_keys());
    }
    let mut conn = services.store.read().await?;
    let mut tiles = store::tiles(&mut conn, workspace_id, &wanted).await?;
    drop(conn);
    let proofs = indices.iter().map(|&m| tlog::inclusion_proof(&mut tiles, m as u64, n)).collect::<Result<_, _>>()?;
    Ok((proofs, tlog::root(&mut tiles, n)?))
}

/// One record of a bundle: what it is, its canonical bytes (whose SHA-256 is `record_hash`), and its leaf's
/// place and inclusion proof.
#[derive(Clone, Debug)]
pub struct BundledRecord {
    pub kind: String,
    pub id: String,
    pub content: String,
    pub record_hash: String,
    pub leaf_index: i64,
    pub proof: Vec<Hash>,
}

/// Every record about one subject, each with its inclusion proof against one signed checkpoint.
#[derive(Clone, Debug)]
pub struct Bundle {
    pub checkpoint: StoredCheckpoint,
    pub records: Vec<BundledRecord>,
}

/// The evidence bundle of a subject: the sealed row of `subject` keyed `id`, every sealed row whose column
/// `link` is `id` (see `fiscus_store::sealed_tables::linked`), and the audit events about `id`, each with its
/// inclusion proof against a checkpoint that covers them all (signed now if the latest does not). Seals are
/// checked as the rows are read; a row whose current content has no leaf (written outside Fiscus) is
/// refused as tampered, never bundled with a proof of something else.
pub async fn bundle(
    services: &Services,
    workspace_id: &str,
    subject: &fiscus_store::seals::SealedTable,
    link: &str,
    id: &str,
) -> Result<Bundle, EvidenceError> {
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let rows = fiscus_store::sealed_tables::linked(&mut conn, key, workspace_id, subject, link, id).await?;
    if !rows.iter().any(|(table, _)| *table == subject.table) {
        return Err(StoreError::NotFound.into());
    }
    let events = fiscus_store::audit::events_about(&mut conn, workspace_id, id, 10_000).await?;
    drop(conn);
    let mut pending: Vec<(Leaf, String)> = Vec::with_capacity(rows.len() + events.len());
    for (table, columns) in &rows {
        let (content, record_hash) = tlog::row_content(columns);
        let id = columns.first().map(|(_, v)| match v {
            fiscus_domain::integrity::Stored::Text(t) => t.clone(),
            other => format!("{other:?}"),
        });
        pending.push((Leaf { kind: table.to_string(), id: id.unwrap_or_default(), record_hash }, content));
    }
    for e in &events {
        let content = fiscus_domain::jcs::canonicalize(&e.event.payload())
            .map_err(|err| StoreError::Corrupt(format!("audit event {}: {err}", e.event.seq)))?;
        pending.push((Leaf::audit_event(e.event.seq, &e.hash), content));
    }
    let checkpoint = checkpoint_now(services, workspace_id).await?.ok_or(StoreError::NotFound)?;
    let size = checkpoint.tree_size;
    let ids: Vec<&str> = pending.iter().map(|(l, _)| l.id.as_str()).collect();
    let mut conn = services.store.read().await?;
    let leaves = store::find_many(&mut conn, workspace_id, &ids, size).await?;
    drop(conn);
    let mut indices = Vec::with_capacity(pending.len());
    for (leaf, _) in &pending {
        let found = leaves
            .get(&leaf.id)
            .and_then(|ls| ls.iter().rev().find(|l| l.leaf.kind == leaf.kind))
            .filter(|l| l.leaf.record_hash == leaf.record_hash)
            .ok_or_else(|| {
                StoreError::Tampered(format!("{} {} is not in its log as it is stored", leaf.kind, leaf.id))
            })?;
        indices.push(found.index);
    }
    let (proofs, root) = inclusions(services, workspace_id, &indices, size).await?;
    if root != checkpoint.root {
        return Err(StoreError::Tampered(format!("the log's tiles do not give checkpoint {size}'s root")).into());
    }
    let records = pending
        .into_iter()
        .zip(indices)
        .zip(proofs)
        .map(|(((leaf, content), leaf_index), proof)| BundledRecord {
            kind: leaf.kind,
            id: leaf.id,
            content,
            record_hash: leaf.record_hash,
            leaf_index,
            proof,
        })
        .collect();
    Ok(Bundle { checkpoint, records })
}

/// A checkpoint as the API shows it.
pub fn checkpoint_view(services: &Services, workspace_id: &str, c: StoredCheckpoint) -> LogCheckpointView {
    LogCheckpointView {
        object: "checkpoint".into(),
        id: format!("ckp_{}", c.tree_size),
        origin: origin(services, workspace_id),
        tree_size: c.tree_size,
        root_hash: tlog::b64(&c.root),
        note: c.note,
        created_at: fiscus_domain::clock::rfc3339(c.created_at),
    }
}

/// A bundle as the API shows it.
pub fn bundle_view(services: &Services, workspace_id: &str, kind: &str, id: &str, b: Bundle) -> EvidenceBundleView {
    EvidenceBundleView {
        object: "evidence_bundle".into(),
        subject_kind: kind.into(),
        subject_id: id.into(),
        checkpoint: checkpoint_view(services, workspace_id, b.checkpoint),
        verifier_key: verifier_key(services),
        records: b
            .records
            .into_iter()
            .map(|r| BundledRecordView {
                kind: r.kind,
                id: r.id,
                content: r.content,
                record_hash: r.record_hash,
                leaf_index: r.leaf_index,
                hashes: r.proof.iter().map(tlog::b64).collect(),
            })
            .collect(),
    }
}

/// What `fiscus verify evidence` found in one workspace's log.
#[derive(Clone, Debug, Default)]
pub struct LogReport {
    /// Sealed rows and audit events whose leaf was looked for.
    pub records: u64,
    pub leaves: i64,
    pub checkpoints: usize,
    pub failures: Vec<String>,
}

/// Checks a workspace's log from the inside: every sealed row and audit event has its leaf naming its
/// current content; the leaves, hashed again from the first, give every kept checkpoint's root and the
/// integrated tree's; and every kept checkpoint is signed by this deployment's key for this log. It cannot
/// see a rewrite the key holder made consistently (leaves, tiles and checkpoints together): only a checkpoint
/// kept outside can (`fiscus_domain::tlog::offline`).
pub async fn verify_log(services: &Services, workspace_id: &str) -> Result<LogReport, EvidenceError> {
    let mut report = LogReport::default();
    let mut conn = services.store.read().await?;
    let (records, unlogged) = fiscus_store::sealed_tables::unlogged(&mut conn, workspace_id).await?;
    report.records = records;
    for u in unlogged {
        report.failures.push(format!("{} {}: not in the log as it is stored", u.kind, u.id));
    }
    let mut checkpoints = Vec::new();
    let mut before = None;
    loop {
        let page = store::checkpoints(&mut conn, workspace_id, before, 1000).await?;
        let Some(last) = page.last() else { break };
        before = Some(last.tree_size);
        checkpoints.extend(page);
    }
    checkpoints.reverse();
    report.checkpoints = checkpoints.len();
    let verifier = verifier(services);
    let origin = origin(services, workspace_id);
    for c in &checkpoints {
        match fiscus_domain::tlog::note::open_checkpoint(&verifier, &c.note) {
            Ok(signed) if signed.origin == origin && signed.size == c.tree_size as u64 && signed.root == c.root => {}
            Ok(_) => {
                report.failures.push(format!("checkpoint {}: its note says another size, root or log", c.tree_size))
            }
            Err(e) => report.failures.push(format!("checkpoint {}: {e}", c.tree_size)),
        }
    }
    let tree = store::tree(&mut conn, workspace_id).await?;
    let mut due: Vec<(i64, Hash, String)> =
        checkpoints.iter().map(|c| (c.tree_size, c.root, format!("checkpoint {}", c.tree_size))).collect();
    due.push((tree.size, tree.root, format!("the integrated tree ({})", tree.size)));
    due.sort_by_key(|(size, _, _)| *size);
    let mut tiles = Tiles::default();
    let mut size = 0i64;
    let mut due = due.into_iter().peekable();
    loop {
        while let Some((at, root, what)) = due.next_if(|(at, _, _)| *at == size) {
            if tlog::root(&mut tiles, at as u64)? != root {
                report.failures.push(format!(
                    "{what}: the leaves no longer give its root (a leaf was changed or removed after it was signed)"
                ));
            }
        }
        let Some((next, _, _)) = due.peek() else { break };
        // Hashed up to the next size to check, never past it.
        let page = store::leaves(&mut conn, workspace_id, size, BATCH.min(next - size)).await?;
        if page.is_empty() || page[0].index != size {
            for (_, _, what) in due {
                report.failures.push(format!("{what}: leaves from {size} are missing"));
            }
            break;
        }
        let contiguous = page.iter().enumerate().take_while(|(i, l)| l.index == size + *i as i64).count();
        // The index by record (what proofs and bundles look leaves up in) says what the leaves say.
        let indexed = contiguous.min((tree.size - size).max(0) as usize);
        if indexed > 0 {
            let index = store::indexed(&mut conn, workspace_id, size, indexed as i64).await?;
            for (i, leaf) in page[..indexed].iter().enumerate() {
                if index.get(i) != Some(leaf) {
                    report
                        .failures
                        .push(format!("leaf {}: the index by record does not say what the log says", leaf.index));
                }
            }
        }
        let hashes: Vec<Hash> = page[..contiguous].iter().map(|l| l.leaf.hash()).collect();
        tiles.append(size as u64, &hashes)?;
        size += contiguous as i64;
    }
    report.leaves = store::size(&mut conn, workspace_id).await?;
    Ok(report)
}

/// Logs what workspaces wrote before the log existed (`fiscus_store::sealed_tables::backfill_log`), one
/// workspace per transaction; returns how many leaves were added.
pub async fn backfill(services: &Services) -> Result<u64, EvidenceError> {
    // With the log off (a measurement), every workspace looks as if it predated the log.
    if !fiscus_store::tlog::logging() {
        return Ok(0);
    }
    let mut conn = services.store.read().await?;
    let workspaces = fiscus_store::sealed_tables::predating_the_log(&mut conn).await?;
    drop(conn);
    let mut added = 0;
    for workspace_id in workspaces {
        let mut tx = services.store.begin().await?;
        let n = fiscus_store::sealed_tables::backfill_log(&mut tx, &workspace_id).await?;
        tx.commit().await?;
        if n > 0 {
            tracing::info!(workspace = %workspace_id, leaves = n, "records written before the transparency log are in it now");
        }
        added += n;
    }
    Ok(added)
}
