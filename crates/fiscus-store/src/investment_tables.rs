//! The shapes of the investment tables (investment records, theme universes, model portfolios and their
//! operations, collateral) as the seals cover them. Their queries live with their area (`tables/`); their shapes
//! stay here, beside the migrations that create the tables, because every verifier (`sealed_tables::ALL`) reads
//! them and the store cannot name an area's crate.

use crate::seals::SealedTable;

pub const INVESTMENT_RECORDS_SEALED: SealedTable = SealedTable {
    table: "investment_records",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "kind",
        "portfolio_id",
        "request",
        "output",
        "content_hash",
        "created_by",
        "created_at",
    ],
};

pub const UNIVERSES_SEALED: SealedTable = SealedTable {
    table: "investment_universes",
    columns: &[
        "uid",
        "workspace_id",
        "id",
        "name",
        "theme",
        "source",
        "status",
        "members_hash",
        "created_by",
        "created_at",
        "handed_off_at",
    ],
};

pub const MODEL_PORTFOLIOS_SEALED: SealedTable = SealedTable {
    table: "model_portfolios",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "universe_id",
        "name",
        "weighting",
        "member_limit",
        "benchmark_symbol",
        "holdings",
        "content_hash",
        "state",
        "created_by",
        "created_at",
        "decided_by",
        "decided_at",
        "decision_note",
    ],
};

pub const OPERATIONS_SEALED: SealedTable = SealedTable {
    table: "governed_ai_operations",
    columns: &[
        "id",
        "workspace_id",
        "environment",
        "portfolio_id",
        "model_portfolio_id",
        "model_portfolio_hash",
        "objective",
        "agent",
        "status",
        "created_by",
        "created_at",
    ],
};

pub const COLLATERAL_SEALED: SealedTable = SealedTable {
    table: "collateral_policies",
    columns: &["id", "workspace_id", "version", "rules", "rules_hash", "created_by", "created_at"],
};
