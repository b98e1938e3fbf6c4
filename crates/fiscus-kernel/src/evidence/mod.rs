//! The transparency log's integrator, signer and prover (`fiscus_domain::tlog` says what the log is).
//!
//! Leaves are written with their records (`fiscus_store::audit`). Here, afterwards and without touching the
//! heads writers lock: the integrator reads committed leaves, extends the tiles and records the new tree
//! size ([`integrate`]); the signer issues a C2SP checkpoint of the integrated tree, on a schedule ([`run_once`])
//! or when asked ([`checkpoint_now`]), keeps every one and offers it to the configured witnesses
//! (`integrate.rs`); the prover answers inclusion and consistency proofs and bundles from the tiles, reading
//! only those a proof needs (`prove.rs`); [`verify_log`] checks the whole log from the inside (`verify.rs`).
//!
//! The signing key is Ed25519, derived from the server key (so every node signs with the same key and no
//! key is stored in the database); its verifier key is public ([`verifier_key`]).

mod integrate;
pub mod offline;
mod prove;
mod verify;
pub mod views;

pub use integrate::{backfill, checkpoint_now, integrate, run_once};
pub use prove::{Bundle, BundledRecord, bundle, checked_tile, consistency, inclusion, inclusions, leaf_of};
pub use verify::{LogReport, verify_log};

use crate::services::Services;
use fiscus_domain::tlog::note::{NoteSigner, NoteVerifier};
use fiscus_domain::tlog::{self as tlog, TreeError};
use fiscus_store::StoreError;
use fiscus_store::tlog::StoredCheckpoint;
use hmac::{Hmac, Mac};
use views::{BundledRecordView, EvidenceBundleView, LogCheckpointView};

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

/// Whether a kept checkpoint is this deployment's signed note for this workspace's log, of the size and root
/// it is kept under; the refusal in words otherwise. Every check of a kept checkpoint (`fiscus verify
/// evidence`, the audit chain's shared anchor) goes through here.
pub fn check_kept(services: &Services, workspace_id: &str, c: &StoredCheckpoint) -> Result<(), String> {
    let signed = tlog::note::open_checkpoint(&verifier(services), &c.note).map_err(|e| e.to_string())?;
    if signed.origin == origin(services, workspace_id) && signed.size == c.tree_size as u64 && signed.root == c.root {
        Ok(())
    } else {
        Err("its note says another size, root or log".into())
    }
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
