//! The log checked from the inside (`fiscus verify evidence`): every record has its leaf, the leaves give
//! every kept checkpoint's root, and every checkpoint is signed by this deployment's key.

use super::{BATCH, EvidenceError};
use crate::services::Services;
use fiscus_domain::tlog::tiles::Tiles;
use fiscus_domain::tlog::{self as tlog, Hash};
use fiscus_store::tlog::{self as store, StoredLeaf};
use std::collections::BTreeMap;

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
pub fn verify_log<'a>(
    services: &'a Services,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, Result<LogReport, EvidenceError>> {
    Box::pin(async move {
        let mut report = LogReport::default();
        let mut conn = services.store.read().await?;
        let mut ev = services.store.evidence_read().await?;
        let (records, unlogged) = fiscus_store::sealed_tables::unlogged(&mut conn, &mut ev, workspace_id).await?;
        report.records = records;
        for u in unlogged {
            report.failures.push(format!("{} {}: not in the log as it is stored", u.kind, u.id));
        }
        let mut checkpoints = Vec::new();
        let mut before = None;
        loop {
            let page = store::checkpoints(&mut ev, workspace_id, before, 1000).await?;
            let Some(last) = page.last() else { break };
            before = Some(last.tree_size);
            checkpoints.extend(page);
        }
        checkpoints.reverse();
        report.checkpoints = checkpoints.len();
        for c in &checkpoints {
            if let Err(why) = super::check_kept(services, workspace_id, c) {
                report.failures.push(format!("checkpoint {}: {why}", c.tree_size));
            }
        }
        let tree = store::tree(&mut ev, workspace_id).await?;
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
            // The index by record (what proofs and bundles look leaves up in) names where every integrated
            // leaf is, but audit events (whose rows may name their leaf instead: an event found neither way
            // is reported by `fiscus_store::sealed_tables::unlogged`); what earlier releases indexed whole
            // says what the leaves say.
            let indexed = contiguous.min((tree.size - size).max(0) as usize);
            if indexed > 0 {
                let whole: BTreeMap<i64, StoredLeaf> = store::indexed(&mut ev, workspace_id, size, indexed as i64)
                    .await?
                    .into_iter()
                    .map(|l| (l.index, l))
                    .collect();
                let named = store::indexed_positions(&mut ev, workspace_id, &page[..indexed]).await?;
                for leaf in &page[..indexed] {
                    let failure = match whole.get(&leaf.index) {
                        Some(held) if held != leaf => Some("the index by record does not say what the log says"),
                        Some(_) => None,
                        None if leaf.leaf.kind == tlog::AUDIT_EVENT || named.contains(&leaf.index) => None,
                        None => Some("the index by record does not name it"),
                    };
                    if let Some(failure) = failure {
                        report.failures.push(format!("leaf {}: {failure}", leaf.index));
                    }
                }
            }
            let hashes: Vec<Hash> = page[..contiguous].iter().map(|l| l.leaf.hash()).collect();
            tiles.append(size as u64, &hashes)?;
            size += contiguous as i64;
        }
        report.leaves = store::size(&mut conn, workspace_id).await?;
        Ok(report)
    })
}
