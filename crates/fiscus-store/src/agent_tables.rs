//! The shapes of the agents' tables as the seals cover them (A2A tasks aside: voice calls with their recordings,
//! consents and transcripts; the workflow gateway's grants and tasks; workflows and their versions, runs, steps,
//! campaigns and proofs; agent spaces with their versions, decisions, runs and calls), and the queues of runs the
//! workers claim (which a stopping node hands back, `hand_back`). Their queries live with their area
//! (`fiscus-agents`, `tables/`); their shapes stay here, beside the migrations that create the tables, because
//! every verifier (`sealed_tables::ALL`) and the hand-back read them and the store cannot name an area's crate.

use crate::run_claims::RunQueue;
use crate::seals::SealedTable;

pub const CALLS_SEALED: SealedTable = SealedTable {
    table: "client_calls",
    columns: &["id", "workspace_id", "environment", "body", "content_hash", "created_by", "created_at"],
};

pub const RECORDINGS_SEALED: SealedTable = SealedTable {
    table: "call_recordings",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "call_id",
        "version",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const CONSENTS_SEALED: SealedTable = SealedTable {
    table: "call_consents",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "call_id",
        "seq",
        "basis",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const TRANSCRIPTS_SEALED: SealedTable = SealedTable {
    table: "call_transcripts",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "call_id",
        "version",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const GRANTS_SEALED: SealedTable = SealedTable {
    table: "workflow_tool_grants",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "application_id",
        "version",
        "versions",
        "decision_hash",
        "decided_by",
        "created_at",
    ],
};

pub const TASKS_SEALED: SealedTable = SealedTable {
    table: "workflow_gateway_tasks",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "application_id",
        "credential_id",
        "context_id",
        "message_id",
        "message_hash",
        "created_at",
    ],
};

pub const WORKFLOWS_SEALED: SealedTable = SealedTable {
    table: "workflows",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "name",
        "library_key",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const WORKFLOW_VERSIONS_SEALED: SealedTable = SealedTable {
    table: "workflow_versions",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "workflow_id",
        "version",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const WORKFLOW_RUNS_SEALED: SealedTable = SealedTable {
    table: "workflow_runs",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "workflow_id",
        "version_id",
        "body",
        "content_hash",
        "state",
        "evidence_hash",
        "ended_at",
        "created_by",
        "created_at",
    ],
};

pub const WORKFLOW_STEPS_SEALED: SealedTable = SealedTable {
    table: "workflow_run_steps",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "run_id",
        "step_id",
        "seq",
        "outcome",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const CAMPAIGNS_SEALED: SealedTable = SealedTable {
    table: "workflow_campaigns",
    columns: &["id", "workspace_id", "environment", "version_id", "body", "content_hash", "created_by", "created_at"],
};

pub const PROOFS_SEALED: SealedTable = SealedTable {
    table: "workflow_proofs",
    columns: &["id", "workspace_id", "environment", "workflow_id", "body", "content_hash", "created_by", "created_at"],
};

pub const SPACES_SEALED: SealedTable = SealedTable {
    table: "agent_spaces",
    columns: &["id", "workspace_id", "environment", "key", "body", "content_hash", "created_by", "created_at"],
};

pub const SPACE_VERSIONS_SEALED: SealedTable = SealedTable {
    table: "agent_space_versions",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "space_id",
        "version",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const SPACE_DECISIONS_SEALED: SealedTable = SealedTable {
    table: "agent_space_decisions",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "space_id",
        "seq",
        "decision",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const SPACE_RUNS_SEALED: SealedTable = SealedTable {
    table: "agent_runs",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "space_id",
        "version_id",
        "execution_id",
        "body",
        "content_hash",
        "state",
        "answer",
        "output_hash",
        "started_at",
        "ended_at",
        "created_by",
        "created_at",
    ],
};

pub const SPACE_CALLS_SEALED: SealedTable = SealedTable {
    table: "agent_run_calls",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "run_id",
        "seq",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

/// The workflow_runs the workers claim: runs that are due (queued, running, or waiting with their timer elapsed).
pub const WORKFLOW_RUNS: RunQueue = RunQueue { table: "workflow_runs", claimable: "('queued', 'running', 'waiting')" };

/// The agent_runs the workers claim: queued or running runs.
pub const AGENT_RUNS: RunQueue = RunQueue { table: "agent_runs", claimable: "('queued', 'running')" };
