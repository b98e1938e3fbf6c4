//! The shapes of the Financial Actions' payment tables as the seals cover them (counterparties, bank-account
//! versions, payment instructions and files, bank messages, statement entries). Their queries live in
//! `fiscus-actions` (`tables/`); their shapes stay here, beside the migrations that create the tables,
//! because every verifier (`sealed_tables::ALL`) reads them and the store cannot name an area's crate.

use crate::seals::SealedTable;

pub const COUNTERPARTIES: SealedTable = SealedTable {
    table: "counterparties",
    columns: &["id", "workspace_id", "environment", "reference", "body", "content_hash", "created_by", "created_at"],
};

pub const BANK_ACCOUNT_VERSIONS: SealedTable = SealedTable {
    table: "bank_account_versions",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "account_id",
        "version",
        "owner",
        "counterparty_id",
        "body",
        "content_hash",
        "state",
        "created_by",
        "created_at",
        "decided_by",
        "decided_at",
        "decision_note",
    ],
};

pub const PAYMENT_INSTRUCTIONS: SealedTable = SealedTable {
    table: "payment_instructions",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "action_id",
        "debtor_account_id",
        "currency",
        "requested_date",
        "body",
        "content_hash",
        "created_by",
        "created_at",
        "file_id",
    ],
};

pub const PAYMENT_FILES: SealedTable = SealedTable {
    table: "payment_files",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "debtor_account_id",
        "currency",
        "requested_date",
        "body",
        "content_hash",
        "created_by",
        "created_at",
        "state",
        "published_at",
    ],
};

pub const BANK_MESSAGES: SealedTable = SealedTable {
    table: "bank_messages",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "sha256",
        "kind",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const STATEMENT_ENTRIES: SealedTable = SealedTable {
    table: "statement_entries",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "message_id",
        "state",
        "body",
        "content_hash",
        "created_by",
        "created_at",
        "resolved_by",
        "resolved_at",
        "resolution",
    ],
};

/// The versions of a tenant's approval policy (`fiscus_actions::rules::policy`): a version's body is the
/// policy whose hash every requirement cites.
pub const APPROVAL_POLICIES: SealedTable = SealedTable {
    table: "approval_policies",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "version",
        "body",
        "content_hash",
        "state",
        "created_by",
        "created_at",
        "decided_by",
        "decided_at",
        "decision_note",
    ],
};

/// The requirement an action got at proposal, and each tightening of it.
pub const ACTION_REQUIREMENTS: SealedTable = SealedTable {
    table: "action_requirements",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "action_id",
        "policy_id",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

/// The approver groups an operator was in at a decision (keyed by the decision's id).
pub const DECISION_CONTEXTS: SealedTable = SealedTable {
    table: "decision_contexts",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "action_id",
        "operator_id",
        "body",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

/// A batch of decisions one person gave at once at the console.
pub const APPROVAL_BATCHES: SealedTable = SealedTable {
    table: "approval_batches",
    columns: &["id", "workspace_id", "environment", "operator_id", "body", "content_hash", "created_by", "created_at"],
};
