//! Audit chain anchors kept outside the database.
//!
//! The keyed MACs stop a database writer from forging or rewriting events, but not from cutting the tail off
//! a chain and putting back a head row saved earlier: every remaining event and that old head are genuine.
//! So every node regularly writes each workspace's head (sequence number and hash) to a file beside its
//! data, MACed with the integrity key, and `fiscus verify audit` requires every chain to still reach its
//! anchored event. The writer itself only moves an anchor forward along the same chain: a chain that no
//! longer reaches its anchor keeps the old anchor and is reported, so a truncation is not anchored over.

use anyhow::Context;
use fiscus_domain::audit::Anchor;
use fiscus_domain::integrity::{SealKey, matches};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use crate::services::Services;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
struct Head {
    seq: i64,
    hash: String,
}

#[derive(Serialize, Deserialize)]
struct AnchorFile {
    /// Workspace id → anchored head; a `BTreeMap`, so the serialised form (which the MAC covers) is stable.
    heads: BTreeMap<String, Head>,
    mac: String,
}

fn mac_of(key: &SealKey, heads: &BTreeMap<String, Head>) -> anyhow::Result<String> {
    Ok(key.anchor(&serde_json::to_string(heads)?))
}

/// Reads the anchors at `path`: `None` if there is no file yet; an error if it is unreadable or its MAC
/// does not match (an anchor file edited by hand proves nothing and is refused).
pub fn read(path: &Path, key: &SealKey) -> anyhow::Result<Option<BTreeMap<String, Anchor>>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let file: AnchorFile = serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    anyhow::ensure!(
        matches(Some(&file.mac), &mac_of(key, &file.heads)?),
        "the anchor file {} does not carry a valid MAC (edited, or written under another server key)",
        path.display()
    );
    Ok(Some(file.heads.into_iter().map(|(ws, h)| (ws, Anchor { seq: h.seq, hash: h.hash })).collect()))
}

/// Moves the anchors forward to the current heads and writes them (atomically: a new file renamed over the
/// old one). Returns the workspaces whose chain no longer reaches its anchor, which keep their old anchor.
pub async fn refresh(services: &Services) -> anyhow::Result<Vec<String>> {
    let path = services.settings.audit_anchor_path();
    let key = services.store.seal_key();
    let previous = read(&path, key)?.unwrap_or_default();
    let mut conn = services.store.read().await?;
    let mut heads = BTreeMap::new();
    let mut broken = Vec::new();
    for (workspace_id, seq, hash) in fiscus_store::audit::all_heads(&mut conn).await? {
        let next = Head { seq, hash };
        let kept = match previous.get(&workspace_id) {
            Some(anchor) if anchor.seq > 0 && (anchor.seq, anchor.hash.as_str()) != (seq, next.hash.as_str()) => {
                let at = fiscus_store::audit::hash_at(&mut conn, &workspace_id, anchor.seq).await?;
                if anchor.seq > seq || at.as_deref() != Some(anchor.hash.as_str()) {
                    broken.push(workspace_id.clone());
                    Head { seq: anchor.seq, hash: anchor.hash.clone() }
                } else {
                    next
                }
            }
            _ => next,
        };
        heads.insert(workspace_id, kept);
    }
    drop(conn);
    // Workspaces that vanished from the database keep their anchor: deleting a workspace's head is a
    // truncation too.
    for (workspace_id, anchor) in previous {
        if let std::collections::btree_map::Entry::Vacant(slot) = heads.entry(workspace_id) {
            broken.push(slot.key().clone());
            slot.insert(Head { seq: anchor.seq, hash: anchor.hash });
        }
    }
    let file = AnchorFile { mac: mac_of(key, &heads)?, heads };
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    let bytes = serde_json::to_vec_pretty(&file)?;
    tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&temp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
        }
        std::fs::rename(&temp, &path).with_context(|| format!("replacing {}", path.display()))?;
        Ok(())
    })
    .await??;
    Ok(broken)
}
