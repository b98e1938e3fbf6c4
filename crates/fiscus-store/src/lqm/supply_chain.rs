//! Evidence packets, publications (the hash-linked supply chain) and promotions. Their repositories come
//! with the operations that write them; the tables are sealed from the start.

use crate::seals::SealedTable;

pub const EVIDENCE_PACKETS_SEALED: SealedTable = SealedTable {
    table: "lqm_evidence_packets",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "checkpoint_id",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const PUBLICATIONS_SEALED: SealedTable = SealedTable {
    table: "lqm_publications",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "model_id",
        "checkpoint_id",
        "revision",
        "previous_head",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const PROMOTIONS_SEALED: SealedTable = SealedTable {
    table: "lqm_promotions",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "model_id",
        "checkpoint_id",
        "body",
        "content_hash",
        "state",
        "created_by",
        "created_at",
        "decided_by",
        "decided_at",
        "decision_note",
        "ended_by",
        "ended_at",
    ],
};

pub const QLMS_SEALED: SealedTable = SealedTable {
    table: "qlms",
    columns: &["id", "workspace_id", "environment", "name", "body", "content_hash", "created_by", "created_at"],
};

pub const QLM_VERSIONS_SEALED: SealedTable = SealedTable {
    table: "qlm_versions",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "qlm_id",
        "version",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const QLM_RUNS_SEALED: SealedTable = SealedTable {
    table: "qlm_runs",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "qlm_id",
        "version",
        "kind",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};
