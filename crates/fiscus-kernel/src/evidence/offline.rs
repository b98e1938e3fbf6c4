//! An outsider's checks, which need nothing of Fiscus but the log's verifier key and files: an evidence
//! bundle, a checkpoint, and the growth from a checkpoint kept to a later one (what `fiscus verify evidence
//! --key …` runs, and `clients/verify_evidence.py` runs in Python).

use super::views::EvidenceBundleView;
use fiscus_domain::evidence::seal_bytes;
use fiscus_domain::tlog::note::{Checkpoint, NoteVerifier, open_checkpoint};
use fiscus_domain::tlog::{Hash, Leaf, from_b64, verify_consistency, verify_inclusion};

/// Checks every record of a bundle: its content hashes to its record hash, names the record it claims, and
/// its leaf is in the tree of the bundle's checkpoint, whose signature is checked with `key`. Returns the
/// checkpoint and how many records were proved.
pub fn verify_bundle(key: &NoteVerifier, bundle: &EvidenceBundleView) -> Result<(Checkpoint, usize), String> {
    let checkpoint = open_checkpoint(key, &bundle.checkpoint.note).map_err(|e| e.to_string())?;
    for r in &bundle.records {
        let record_hash = seal_bytes(r.content.as_bytes());
        if record_hash != r.record_hash {
            return Err(format!("{} {}: its content does not hash to its record hash", r.kind, r.id));
        }
        let fields: serde_json::Value =
            serde_json::from_str(&r.content).map_err(|_| format!("{} {}: its content is not JSON", r.kind, r.id))?;
        let names = if r.kind == fiscus_domain::tlog::AUDIT_EVENT {
            fields["seq"].as_i64().map(fiscus_domain::tlog::audit_event_id).as_deref() == Some(r.id.as_str())
        } else {
            fields.get("id").or_else(|| fields.get("uid")).and_then(|v| v.as_str()) == Some(r.id.as_str())
        };
        if !names {
            return Err(format!("{} {}: the content is another record's", r.kind, r.id));
        }
        let leaf = Leaf { kind: r.kind.clone(), id: r.id.clone(), record_hash };
        let path = hashes(&r.hashes)?;
        let index = u64::try_from(r.leaf_index).map_err(|_| format!("{}: a negative leaf index", r.id))?;
        verify_inclusion(&leaf.hash(), index, checkpoint.size, &path, &checkpoint.root)
            .map_err(|e| format!("{} {}: {e}", r.kind, r.id))?;
    }
    Ok((checkpoint, bundle.records.len()))
}

/// Checks that the checkpoint `later` extends the checkpoint `kept` (both signed by `key`), given the
/// consistency proof between their sizes when they differ. Two checkpoints of one size with different roots
/// are a fork; a later checkpoint smaller than the one kept is a rollback.
pub fn verify_growth(
    key: &NoteVerifier,
    kept: &str,
    later: &str,
    proof: &[String],
) -> Result<(Checkpoint, Checkpoint), String> {
    let old = open_checkpoint(key, kept).map_err(|e| format!("the kept checkpoint: {e}"))?;
    let new = open_checkpoint(key, later).map_err(|e| format!("the later checkpoint: {e}"))?;
    if old.origin != new.origin {
        return Err("the checkpoints are of different logs".into());
    }
    if new.size < old.size {
        return Err(format!(
            "the later checkpoint ({}) is smaller than the one kept ({}): the log was rolled back",
            new.size, old.size
        ));
    }
    if new.size == old.size && new.root != old.root {
        return Err(format!("FORK: two signed checkpoints of size {} with different roots", new.size));
    }
    verify_consistency(old.size, new.size, &old.root, &new.root, &hashes(proof)?).map_err(|e| {
        format!("the later log does not extend the one kept ({e}): a past record was rewritten or removed")
    })?;
    Ok((old, new))
}

fn hashes(text: &[String]) -> Result<Vec<Hash>, String> {
    text.iter().map(|h| from_b64(h).ok_or_else(|| format!("{h} is not a base64 SHA-256 hash"))).collect()
}
