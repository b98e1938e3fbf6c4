//! The integrator and the signer: committed leaves into tiles, the integrated tree into signed checkpoints
//! (every one kept), each new checkpoint offered to the configured witnesses, and the records written before
//! the log existed logged once.

use super::{BATCH, EvidenceError, TX_LEAVES, consistency, origin, signer};
use crate::services::Services;
use fiscus_domain::tlog::note::{Checkpoint, NoteVerifier};
use fiscus_domain::tlog::tiles::{self, Tiles};
use fiscus_domain::tlog::{self as tlog, Hash};
use fiscus_store::tlog::{StoredCheckpoint, Tree};
use fiscus_store::{StoreError, tlog as store};
use std::collections::{BTreeMap, BTreeSet};

/// Extends the workspace's tiles over every committed leaf; returns the integrated tree. Another node doing
/// the same at once costs only a retry: the tree row is checked unchanged before the tiles are written.
pub fn integrate<'a>(
    services: &'a Services,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, Result<Tree, EvidenceError>> {
    Box::pin(async move { integrate_up_to(services, workspace_id, i64::MAX).await })
}

/// [`integrate`], at most `most` leaves (in transactions of [`TX_LEAVES`]): the worker takes [`BATCH`] per
/// workspace per pass, so a workspace with a backlog of millions never holds the others' logs back.
async fn integrate_up_to(services: &Services, workspace_id: &str, most: i64) -> Result<Tree, EvidenceError> {
    // The target is set once: chasing leaves written meanwhile would turn a pass into a stream of tiny
    // transactions under load (each a commit the writers wait behind).
    let mut target = None;
    loop {
        let mut conn = services.store.read().await?;
        let mut ev = services.store.evidence_read().await?;
        let tree = store::tree(&mut ev, workspace_id).await?;
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
        let mut working = store::tiles(&mut ev, workspace_id, &edge).await?;
        for (level, index, width) in tiles::edge(size) {
            if let Some(t) = working.0.get_mut(&(level, index)) {
                t.truncate(width as usize);
            }
        }
        let changed = working.append(size, &hashes)?;
        let new_size = size + hashes.len() as u64;
        let root = root_from(&mut ev, workspace_id, &mut working, new_size).await?;
        let changed: BTreeMap<(u8, u64), Vec<Hash>> = changed.into_iter().map(|k| (k, working.0[&k].clone())).collect();
        let indexed = store::to_index(&mut conn, workspace_id, &new[..contiguous]).await?;
        drop((conn, ev));
        let to = Tree { size: new_size as i64, root };
        let mut tx = services.store.evidence_begin().await?;
        let saved =
            store::save(&mut tx, workspace_id, tree.size, &to, &changed, &indexed, fiscus_domain::clock::now_micros())
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
    ev: &mut fiscus_store::EvidenceConn,
    workspace_id: &str,
    working: &mut Tiles,
    size: u64,
) -> Result<Hash, EvidenceError> {
    let wanted = tiles::needed(&tlog::plan(|p| tlog::root(p, size))?);
    let missing: BTreeSet<(u8, u64)> = wanted.keys().filter(|k| !working.0.contains_key(k)).copied().collect();
    if !missing.is_empty() {
        let fetched = store::tiles(ev, workspace_id, &missing).await?;
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
    let mut ev = services.store.evidence_read().await?;
    let latest = store::latest_checkpoint(&mut ev, workspace_id).await?;
    drop(ev);
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
    let mut tx = services.store.evidence_begin().await?;
    let inserted = store::insert_checkpoint(&mut tx, workspace_id, &checkpoint).await?;
    tx.commit().await?;
    let previous = latest.map(|c| c.tree_size).unwrap_or(0);
    if !inserted {
        // Another node (or this node's worker) signed the same size at once: the same body under the same
        // key, kept once; offered to a witness that has not cosigned it yet.
        let mut ev = services.store.evidence_read().await?;
        let kept = store::checkpoint(&mut ev, workspace_id, tree.size).await?;
        drop(ev);
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
        let mut tx = services.store.evidence_begin().await?;
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

/// The most of a witness's answer read: cosignature lines are about a hundred bytes each (C2SP tlog-witness).
const MAX_WITNESS_ANSWER: usize = 16 * 1024;

/// At most the first 200 characters of a third party's words, for a log line.
fn quoted(text: &str) -> String {
    let t = text.trim();
    match t.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t.to_string(),
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
    // A witness is a third party: it is asked without following redirects or a proxy, and what it answers is
    // read no further than a cosignature needs (issue 54).
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()?;
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
        let bytes = crate::outbound::read_at_most(response, MAX_WITNESS_ANSWER).await?;
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("the witness answered {status} in bytes that are not UTF-8"))?;
        if status == reqwest::StatusCode::CONFLICT {
            old = text.trim().parse().map_err(|_| anyhow::anyhow!("a 409 without the witness's size"))?;
            anyhow::ensure!(old <= c.tree_size, "the witness has a larger tree ({old}) than this checkpoint");
            continue;
        }
        anyhow::ensure!(status.is_success(), "the witness answered {status}: {}", quoted(&text));
        return Ok(text);
    }
    anyhow::bail!("the witness's size kept moving")
}

/// Integrates every committed leaf and signs a checkpoint of it (or returns the one already signed at that
/// size). `None` only for a log with no leaf at all.
pub fn checkpoint_now<'a>(
    services: &'a Services,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, Result<Option<StoredCheckpoint>, EvidenceError>> {
    Box::pin(async move {
        let tree = integrate(services, workspace_id).await?;
        sign_if_grown(services, workspace_id, &tree).await
    })
}

/// One pass of the evidence worker: integrates every workspace whose log grew, and signs a checkpoint for
/// those whose last one is older than the interval. Returns how many workspaces it integrated.
pub async fn run_once(services: &Services) -> Result<usize, EvidenceError> {
    let backfilled = backfill(services).await?;
    let mut conn = services.store.read().await?;
    let mut ev = services.store.evidence_read().await?;
    let behind = store::behind(&mut conn, &mut ev, 100).await?;
    drop((conn, ev));
    let interval =
        services.settings.evidence.checkpoint_interval_seconds as i64 * fiscus_domain::clock::MICROS_PER_SECOND;
    let now = fiscus_domain::clock::now_micros();
    let mut integrated = usize::from(backfilled > 0);
    for (workspace_id, _, _) in &behind {
        // One workspace's trouble (a damaged tile, a leaf missing) is logged and never holds back the others;
        // nor is it counted as work done, so a log that keeps failing is retried at the idle pace.
        let tree = match integrate_up_to(services, workspace_id, BATCH).await {
            Ok(tree) => {
                integrated += 1;
                tree
            }
            Err(e) => {
                tracing::warn!(workspace = %workspace_id, error = %e, "a workspace's log could not be integrated");
                continue;
            }
        };
        let signed = async {
            let mut ev = services.store.evidence_read().await?;
            let latest = store::latest_checkpoint(&mut ev, workspace_id).await?;
            drop(ev);
            if latest.is_none_or(|c| now - c.created_at >= interval) {
                sign_if_grown(services, workspace_id, &tree).await?;
            }
            Ok::<(), EvidenceError>(())
        };
        if let Err(e) = signed.await {
            tracing::warn!(workspace = %workspace_id, error = %e, "a workspace's checkpoint could not be signed");
        }
    }
    Ok(integrated)
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
        let logged = async {
            let mut tx = services.store.begin().await?;
            let n = fiscus_store::sealed_tables::backfill_log(&mut tx, &workspace_id).await?;
            tx.commit().await?;
            Ok::<u64, StoreError>(n)
        };
        // A workspace whose old records fail their seals is not logged (nothing is logged under a seal that
        // does not hold), said once, and holds back no other workspace's log (issue 54).
        let n = match logged.await {
            Ok(n) => n,
            Err(e @ (StoreError::Tampered(_) | StoreError::Corrupt(_))) => {
                crate::once::warn_once(&format!("log backfill {workspace_id}"), &e.to_string());
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if n > 0 {
            tracing::info!(workspace = %workspace_id, leaves = n, "records written before the transparency log are in it now");
        }
        added += n;
    }
    Ok(added)
}
