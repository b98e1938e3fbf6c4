//! `fiscus verify`: recomputes each workspace's audit chain from the stored rows (hashes, links and keyed
//! MACs, page by page), requires it to reach its anchors (the event its log's latest signed checkpoint
//! covers, shared by every node, and this node's file if it keeps one), checks every sealed
//! business row against its keyed seal, and recomputes every action's public envelope hash from its row.

use fiscus_domain::audit::{Anchor, ChainBreak, ChainVerifier, check_anchor};
use fiscus_store::Store;
use fiscus_store::sealed_tables::Unsealed;
use std::collections::BTreeMap;

pub struct ChainReport {
    pub workspace_id: String,
    pub events: i64,
    pub result: Result<(), ChainBreak>,
}

const PAGE: i64 = 1000;

/// Verifies one workspace's chain; `anchor` is its head as anchored outside the database, if any.
pub fn verify_workspace<'a>(
    store: &'a Store,
    workspace_id: &'a str,
    anchor: Option<&'a Anchor>,
) -> fiscus_store::Boxed<'a, anyhow::Result<ChainReport>> {
    Box::pin(async move {
        let mut conn = store.read().await?;
        let (head_seq, head_hash, head_mac) = fiscus_store::audit::head(&mut conn, workspace_id).await?;
        let mut verifier = ChainVerifier::new(store.seal_key().clone());
        let report = |verifier: &ChainVerifier, result| ChainReport {
            workspace_id: workspace_id.into(),
            events: verifier.verified(),
            result,
        };
        let mut hash_at_anchor: Option<String> = None;
        loop {
            let page = fiscus_store::audit::events_after(&mut conn, workspace_id, verifier.verified(), PAGE).await?;
            if page.is_empty() {
                break;
            }
            for stored in &page {
                if let Err(b) = verifier.push(&stored.event, &stored.hash, stored.mac.as_deref()) {
                    return Ok(report(&verifier, Err(b)));
                }
                if anchor.is_some_and(|a| a.seq == stored.event.seq) {
                    hash_at_anchor = Some(stored.hash.clone());
                }
            }
        }
        let mut result = verifier.finish(workspace_id, head_seq, &head_hash, head_mac.as_deref()).map(|_| ());
        if let (Ok(()), Some(anchor)) = (&result, anchor) {
            result = check_anchor(anchor, verifier.verified(), hash_at_anchor.as_deref());
        }
        Ok(report(&verifier, result))
    })
}

/// Verifies one workspace's chain against both of its anchors: the head this node anchored in its file
/// (`node`, if any) and the anchor every node shares, the newest audit event its log's latest signed
/// checkpoint covers. The second needs nothing of the node it runs on, so a node started yesterday, or the CLI
/// on an administrator's machine, catches a chain cut back below what a checkpoint covered.
pub fn verify_anchored<'a>(
    services: &'a crate::Services,
    workspace_id: &'a str,
    node: Option<&'a Anchor>,
) -> fiscus_store::Boxed<'a, anyhow::Result<ChainReport>> {
    Box::pin(async move {
        let mut report = verify_workspace(&services.store, workspace_id, node).await?;
        if report.result.is_err() {
            return Ok(report);
        }
        report.result = match checkpoint_anchor(services, workspace_id).await? {
            None => Ok(()),
            Some(Err(broken)) => Err(broken),
            Some(Ok(LogAnchor { tree_size, event })) => {
                let mut conn = services.store.read().await?;
                let held = fiscus_store::audit::hash_at(&mut conn, workspace_id, event.seq).await?;
                check_anchor(&event, report.events, held.as_deref()).map_err(|_| ChainBreak::BehindCheckpoint {
                    tree_size,
                    anchored_seq: event.seq,
                    last_seq: report.events,
                })
            }
        };
        Ok(report)
    })
}

/// The anchor every node shares: the size of the log's latest signed checkpoint and the newest audit event
/// among the leaves it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogAnchor {
    pub tree_size: i64,
    pub event: Anchor,
}

/// Leaves read at a time while looking back from a checkpoint for its last audit event (nearly every write
/// logs an event beside its rows, so the first page almost always holds one).
const LOOK_BACK: i64 = 256;

/// The shared anchor of a workspace's chain: its log's latest kept checkpoint (signature checked) and the
/// newest audit event among the leaves it covers, as the log names it (`aud_<seq>` and the event's chain
/// hash). `None` when no checkpoint was signed yet or it covers no event. Events and leaves are numbered
/// together under the workspace's head lock, so every event before that one is covered too; and the leaves
/// are what the checkpoint's root commits to (`fiscus verify evidence` hashes them again), so they cannot be
/// cut back with the events unless the checkpoints go too, which outsiders and witnesses keeping them see.
pub fn checkpoint_anchor<'a>(
    services: &'a crate::Services,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, anyhow::Result<Option<Result<LogAnchor, ChainBreak>>>> {
    Box::pin(async move {
        let mut ev = services.store.evidence_read().await?;
        let Some(latest) = fiscus_store::tlog::latest_checkpoint(&mut ev, workspace_id).await? else {
            return Ok(None);
        };
        drop(ev);
        let tree_size = latest.tree_size;
        if crate::evidence::check_kept(services, workspace_id, &latest).is_err() {
            return Ok(Some(Err(ChainBreak::CheckpointNotAuthenticated { tree_size })));
        }
        let mut conn = services.store.read().await?;
        let mut end = tree_size;
        while end > 0 {
            let from = (end - LOOK_BACK).max(0);
            let page = fiscus_store::tlog::leaves(&mut conn, workspace_id, from, end - from).await?;
            let whole = page.len() as i64 == end - from && page.iter().zip(from..).all(|(l, at)| l.index == at);
            if !whole {
                return Ok(Some(Err(ChainBreak::CheckpointLeavesMissing { tree_size })));
            }
            let last_event = page.iter().rev().find(|l| l.leaf.kind == fiscus_domain::tlog::AUDIT_EVENT);
            if let Some(leaf) = last_event {
                let Some(seq) = fiscus_domain::tlog::audit_event_seq(&leaf.leaf.id) else {
                    anyhow::bail!(
                        "leaf {} of {workspace_id}'s log names no audit event: `{}`",
                        leaf.index,
                        leaf.leaf.id
                    );
                };
                let event = Anchor { seq, hash: leaf.leaf.record_hash.clone() };
                return Ok(Some(Ok(LogAnchor { tree_size, event })));
            }
            end = from;
        }
        Ok(None)
    })
}

/// The anchors this node keeps (none yet on a fresh deployment).
pub fn anchors(settings: &crate::Settings, store: &Store) -> anyhow::Result<BTreeMap<String, Anchor>> {
    Ok(crate::anchor::read(&settings.audit_anchor_path(), store.seal_key())?.unwrap_or_default())
}

/// Checks every sealed business row of a workspace; returns how many were read and those that fail.
pub fn verify_records<'a>(
    store: &'a Store,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, anyhow::Result<(u64, Vec<Unsealed>)>> {
    Box::pin(async move {
        let mut conn = store.read().await?;
        Ok(fiscus_store::sealed_tables::verify_workspace(&mut conn, store.seal_key(), workspace_id).await?)
    })
}

pub fn describe(b: &ChainBreak) -> String {
    match b {
        ChainBreak::ContentAltered { seq } => {
            format!("event {seq} was altered: its stored hash does not match its content")
        }
        ChainBreak::LinkBroken { seq } => {
            format!("event {seq} does not link to its predecessor's hash (an earlier event was altered or removed)")
        }
        ChainBreak::SequenceGap { expected, found } => {
            format!("expected event {expected}, found {found} (events removed or inserted)")
        }
        ChainBreak::HeadMismatch { head_seq, last_seq } => {
            format!("the head says {head_seq} events but the chain ends at {last_seq}")
        }
        ChainBreak::NotAuthenticated { seq } => {
            format!("event {seq} does not carry a valid MAC: it was written or rewritten without the server key")
        }
        ChainBreak::HeadNotAuthenticated { head_seq } => {
            format!("the head (event {head_seq}) does not carry a valid MAC: it was moved without the server key")
        }
        ChainBreak::BehindAnchor { anchored_seq, last_seq } => format!(
            "the chain ends at event {last_seq} but event {anchored_seq} was anchored outside the database: events were removed or replaced"
        ),
        ChainBreak::BehindCheckpoint { tree_size, anchored_seq, last_seq } => format!(
            "the chain ends at event {last_seq} but the log's signed checkpoint of {tree_size} leaves covers event {anchored_seq}: events were removed or replaced"
        ),
        ChainBreak::CheckpointNotAuthenticated { tree_size } => format!(
            "the log's latest checkpoint ({tree_size} leaves) is not signed by this deployment's key for this log: it was written or changed outside Fiscus"
        ),
        ChainBreak::CheckpointLeavesMissing { tree_size } => {
            format!("leaves below the log's latest checkpoint ({tree_size} leaves) are missing: the log was cut back")
        }
    }
}

pub fn describe_unsealed(u: &Unsealed) -> String {
    if u.missing {
        format!("{} {} carries no seal MAC", u.table, u.id)
    } else {
        format!("{} {} does not match its seal: it was changed outside Fiscus", u.table, u.id)
    }
}

/// Recomputes every dataset's content hash from its stored rows and checks its seal; returns how many
/// were checked and the numbers of those that fail.
pub fn verify_datasets<'a>(
    store: &'a Store,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, anyhow::Result<(u64, Vec<i64>)>> {
    Box::pin(async move {
        let mut conn = store.read().await?;
        let datasets = fiscus_data_core::tables::datasets::all(&mut conn, store.seal_key(), workspace_id).await?;
        let mut failing = Vec::new();
        for d in &datasets {
            match fiscus_data_core::tables::datasets::verify(&mut conn, store.seal_key(), workspace_id, d).await {
                Ok(()) => {}
                Err(fiscus_store::StoreError::Tampered(_)) => failing.push(d.number),
                Err(e) => return Err(e.into()),
            }
        }
        Ok((datasets.len() as u64, failing))
    })
}
