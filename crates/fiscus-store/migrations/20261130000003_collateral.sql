-- Collateral policies: a workspace's eligibility and haircut rules, versioned 1, 2, … and sealed; the newest
-- version is in force. Every collateral snapshot (an investment record) names the version and rules hash
-- it applied.
CREATE TABLE collateral_policies (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    version      BIGINT NOT NULL,
    rules        TEXT NOT NULL,
    rules_hash   TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    seal_mac     TEXT,
    UNIQUE (workspace_id, version)
);
