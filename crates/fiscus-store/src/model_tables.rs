//! The shapes of the models' tables (compute jobs and results; LQMs, their contracts, training, supply chain
//! and QLMs; research snapshots) as the seals cover them. Their queries live with their area (`tables/`);
//! their shapes stay here, beside the migrations that create the tables, because every verifier
//! (`sealed_tables::ALL`) reads them and the store cannot name an area's crate. A stopping node's compute
//! claims are handed back with every other queue's (`hand_back`).

use crate::seals::SealedTable;

pub const COMPUTE_JOBS_SEALED: SealedTable = SealedTable {
    table: "compute_jobs",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "kind",
        "request",
        "request_hash",
        "engine_version",
        "credits",
        "created_by",
        "created_at",
    ],
};

pub const COMPUTE_RESULTS_SEALED: SealedTable = SealedTable {
    table: "compute_results",
    columns: &["id", "workspace_id", "job_id", "output", "output_hash", "result_hash", "created_at"],
};

pub const MODELS_SEALED: SealedTable = SealedTable {
    table: "lqm_models",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "name",
        "task_family",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const CONTRACTS_SEALED: SealedTable = SealedTable {
    table: "lqm_contracts",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "model_id",
        "dataset_number",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

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

pub const REQUESTS_SEALED: SealedTable = SealedTable {
    table: "lqm_retraining_requests",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "model_id",
        "contract_id",
        "body",
        "content_hash",
        "state",
        "created_by",
        "created_at",
        "decided_by",
        "decided_at",
        "decision_note",
        "checkpoint_id",
    ],
};

pub const SUBMISSIONS_SEALED: SealedTable = SealedTable {
    table: "lqm_retraining_submissions",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "request_id",
        "decision",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const CHECKPOINTS_SEALED: SealedTable = SealedTable {
    table: "lqm_checkpoints",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "model_id",
        "request_id",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const EVALUATIONS_SEALED: SealedTable = SealedTable {
    table: "lqm_evaluations",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "checkpoint_id",
        "verdict",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const SNAPSHOTS_SEALED: SealedTable = SealedTable {
    table: "research_snapshots",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "project",
        "name",
        "description",
        "run_id",
        "bundle",
        "bundle_hash",
        "created_by",
        "created_at",
    ],
};
