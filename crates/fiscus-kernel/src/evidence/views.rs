//! The transparency log's views: checkpoints and evidence bundles (`fiscus_domain::tlog` is the log).

use serde::{Deserialize, Serialize};

/// A signed checkpoint of a workspace's log.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LogCheckpointView {
    #[schema(example = "checkpoint")]
    pub object: String,
    /// `ckp_<tree size>`: a workspace's log has at most one checkpoint per size.
    #[schema(example = "ckp_1042")]
    pub id: String,
    /// The log's origin line: `<log name>/<workspace id>`.
    #[schema(example = "fiscus.localhost/wsp_01KBT9Z8Q4M2N6P0R3S5V7X9YB")]
    pub origin: String,
    #[schema(example = 1042)]
    pub tree_size: i64,
    /// The root hash, standard base64 of its 32 bytes (as in the note).
    #[schema(example = "7ZkpyAD0rO+8JjAcp4LZ3m7F0Ktq3hQY2zyFo6HXuqo=")]
    pub root_hash: String,
    /// The checkpoint as a C2SP signed note (`tlog-checkpoint`), exactly as signed: verify it with the key
    /// of `GET /evidence/key`. Witnesses' cosignatures follow the log's signature.
    #[schema(
        example = "fiscus.localhost/wsp_01KBT9Z8Q4M2N6P0R3S5V7X9YB\n1042\n7ZkpyAD0rO+8JjAcp4LZ3m7F0Ktq3hQY2zyFo6HXuqo=\n\n— fiscus.localhost Az3grlgt…\n"
    )]
    pub note: String,
    pub created_at: String,
}

/// One record of an evidence bundle and its proof.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BundledRecordView {
    /// The table the record is stored in, or `audit_event`.
    #[schema(example = "action_decisions")]
    pub kind: String,
    #[schema(example = "dec_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub id: String,
    /// The record's canonical bytes (RFC 8785 JSON): a sealed row's sealed columns as stored, or an audit
    /// event's payload. Hash this string's UTF-8 bytes to get `record_hash`.
    pub content: String,
    /// `sha256:` of `content`.
    pub record_hash: String,
    pub leaf_index: i64,
    /// The inclusion path of the leaf `fiscus-evidence/v1\n<kind>\n<id>\n<record_hash>\n` in the
    /// checkpoint's tree (standard base64, leaf side first).
    pub hashes: Vec<String>,
}

/// Everything sealed about one subject, each record proved against one signed checkpoint.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EvidenceBundleView {
    #[schema(example = "evidence_bundle")]
    pub object: String,
    /// The subject's kind (`actions`, `lqm_publications`) and id.
    #[schema(example = "actions")]
    pub subject_kind: String,
    #[schema(example = "act_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub subject_id: String,
    pub checkpoint: LogCheckpointView,
    /// The log's verifier key as this deployment states it; a verifier should use the copy it obtained out
    /// of band (`/.well-known/fiscus-evidence-key`), not this one.
    pub verifier_key: String,
    pub records: Vec<BundledRecordView>,
}
