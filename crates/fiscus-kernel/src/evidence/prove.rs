//! The prover: inclusion and consistency proofs from the tiles (reading only those a proof needs, in one
//! query), and evidence bundles (every record about one subject, each proved against one checkpoint).

use super::{EvidenceError, checkpoint_now};
use crate::services::Services;
use fiscus_domain::tlog::tiles::{self, Tiles};
use fiscus_domain::tlog::{self as tlog, Hash, Leaf, TreeError};
use fiscus_store::tlog::{StoredCheckpoint, StoredLeaf, Tree};
use fiscus_store::{StoreError, tlog as store};
use std::collections::BTreeSet;

/// The tiles a computation reads, fetched in one query.
async fn tiles_for<T>(
    services: &Services,
    workspace_id: &str,
    compute: impl Fn(&mut tlog::Plan) -> Result<T, TreeError>,
) -> Result<Tiles, EvidenceError> {
    let wanted: BTreeSet<(u8, u64)> = tiles::needed(&tlog::plan(compute)?).into_keys().collect();
    let mut ev = services.store.evidence_read().await?;
    Ok(store::tiles(&mut ev, workspace_id, &wanted).await?)
}

/// The integrated size, refusing a tree size beyond it.
async fn within(services: &Services, workspace_id: &str, size: i64) -> Result<Tree, EvidenceError> {
    let mut ev = services.store.evidence_read().await?;
    let tree = store::tree(&mut ev, workspace_id).await?;
    if size > tree.size || size < 0 {
        return Err(EvidenceError::Beyond { asked: size, integrated: tree.size });
    }
    Ok(tree)
}

/// The inclusion proof of leaf `index` in the tree of `size` leaves, and that tree's root. `signed`: the
/// root of a checkpoint of that size, which then needs neither computing nor the integrated size read (a
/// checkpoint is only ever signed over integrated leaves; a proof from damaged tiles fails against it, in
/// the client's hands, rather than being made to match).
pub fn inclusion<'a>(
    services: &'a Services,
    workspace_id: &'a str,
    index: i64,
    size: i64,
    signed: Option<Hash>,
) -> fiscus_store::Boxed<'a, Result<(Vec<Hash>, Hash), EvidenceError>> {
    Box::pin(async move {
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
    })
}

/// A tile's bytes as C2SP `tlog-tiles` serves them (`level` `None`: the entry bundle), read from the store and
/// checked before they leave: the latest checkpoint is this deployment's signed note (`check_kept`), the tile
/// lies within it, and the tree's root computed over the tile's hashes (an entry bundle's leaf hashes) is
/// the checkpoint's signed root. A tile or leaf edited in the database is refused (`Tampered`, answered 500
/// `integrity_failure` and logged as an alarm), never served under a checkpoint it no longer matches
/// (issue 54). `Ok(None)`: no such tile within the latest checkpoint.
pub fn checked_tile<'a>(
    services: &'a Services,
    workspace_id: &'a str,
    level: Option<u8>,
    index: u64,
    width: u64,
) -> fiscus_store::Boxed<'a, Result<Option<Vec<u8>>, EvidenceError>> {
    Box::pin(async move {
        let mut ev = services.store.evidence_read().await?;
        let Some(checkpoint) = store::latest_checkpoint(&mut ev, workspace_id).await? else { return Ok(None) };
        drop(ev);
        super::check_kept(services, workspace_id, &checkpoint)
            .map_err(|why| StoreError::Tampered(format!("the log's latest checkpoint: {why}")))?;
        let size = checkpoint.tree_size as u64;
        // The tile must lie within the checkpoint at the width asked: what it holds then never changes.
        // (Checked arithmetic: a tile path may name an index no tree reaches.)
        let height = 8 * u32::from(level.unwrap_or(0));
        let Some(first) = index.checked_mul(tiles::WIDTH) else { return Ok(None) };
        let reach = size.checked_shr(height).unwrap_or(0);
        if width == 0 || first.checked_add(width).is_none_or(|end| end > reach) {
            return Ok(None);
        }
        let (served, body): (Vec<Hash>, Vec<u8>) = match level {
            Some(l) => {
                let mut ev = services.store.evidence_read().await?;
                let Some(hashes) = store::tile(&mut ev, workspace_id, l, index).await? else { return Ok(None) };
                if (hashes.len() as u64) < width {
                    return Ok(None);
                }
                let shown = hashes[..width as usize].to_vec();
                let body = shown.concat();
                (shown, body)
            }
            None => {
                let mut conn = services.store.read().await?;
                let leaves = store::leaves(&mut conn, workspace_id, first as i64, width as i64).await?;
                if (leaves.len() as u64) < width {
                    return Ok(None);
                }
                let mut body = Vec::new();
                for l in &leaves {
                    let entry = Leaf::entry(&l.leaf);
                    body.extend_from_slice(&(entry.len() as u16).to_be_bytes());
                    body.extend_from_slice(entry.as_bytes());
                }
                (leaves.iter().map(|l| l.leaf.hash()).collect(), body)
            }
        };
        let mut others =
            tiles_for(services, workspace_id, |p| tlog::root_over(p, size, height, first, &served)).await?;
        if tlog::root_over(&mut others, size, height, first, &served)? != checkpoint.root {
            let what = match level {
                Some(l) => format!("tlog tile {l}/{index} of {workspace_id}"),
                None => format!("tlog entries {index} of {workspace_id}"),
            };
            return Err(StoreError::Tampered(format!("{what} does not give checkpoint {size}'s signed root")).into());
        }
        Ok(Some(body))
    })
}

/// A consistency proof's hashes, the first tree's root and the second's.
pub type Consistency = (Vec<Hash>, Hash, Hash);

/// Many leaves' inclusion proofs (in the order asked) and the tree's root.
pub type Inclusions = (Vec<Vec<Hash>>, Hash);

/// The consistency proof from the tree of `first` leaves to the tree of `second`, and both roots.
pub fn consistency<'a>(
    services: &'a Services,
    workspace_id: &'a str,
    first: i64,
    second: i64,
) -> fiscus_store::Boxed<'a, Result<Consistency, EvidenceError>> {
    Box::pin(async move {
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
    })
}

/// The latest leaf of a record below `size`.
pub fn leaf_of<'a>(
    services: &'a Services,
    workspace_id: &'a str,
    record_id: &'a str,
    kind: Option<&'a str>,
    size: i64,
) -> fiscus_store::Boxed<'a, Result<Option<StoredLeaf>, EvidenceError>> {
    Box::pin(async move {
        let mut conn = services.store.read().await?;
        let mut ev = services.store.evidence_read().await?;
        Ok(store::find(&mut conn, &mut ev, workspace_id, record_id, kind, size).await?)
    })
}

/// The inclusion proofs of many leaves in the tree of `size` leaves, reading every tile they need in one
/// query (a bundle's proofs share most of their tiles), and that tree's root.
pub fn inclusions<'a>(
    services: &'a Services,
    workspace_id: &'a str,
    indices: &'a [i64],
    size: i64,
) -> fiscus_store::Boxed<'a, Result<Inclusions, EvidenceError>> {
    Box::pin(async move {
        within(services, workspace_id, size).await?;
        let n = size as u64;
        let mut wanted: BTreeSet<(u8, u64)> = tiles::needed(&tlog::plan(|p| tlog::root(p, n))?).into_keys().collect();
        for &m in indices {
            wanted.extend(tiles::needed(&tlog::plan(|p| tlog::inclusion_proof(p, m as u64, n))?).into_keys());
        }
        let mut ev = services.store.evidence_read().await?;
        let mut tiles = store::tiles(&mut ev, workspace_id, &wanted).await?;
        drop(ev);
        let proofs =
            indices.iter().map(|&m| tlog::inclusion_proof(&mut tiles, m as u64, n)).collect::<Result<_, _>>()?;
        Ok((proofs, tlog::root(&mut tiles, n)?))
    })
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
pub fn bundle<'a>(
    services: &'a Services,
    workspace_id: &'a str,
    subject: &'a fiscus_store::seals::SealedTable,
    link: &'a str,
    id: &'a str,
) -> fiscus_store::Boxed<'a, Result<Bundle, EvidenceError>> {
    Box::pin(async move {
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
        let mut ev = services.store.evidence_read().await?;
        let leaves = store::find_many(&mut conn, &mut ev, workspace_id, &ids, size).await?;
        drop((conn, ev));
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
    })
}
