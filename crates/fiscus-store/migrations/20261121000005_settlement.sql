-- Execution through connectors: work items a worker claims (several nodes never take the same item), and
-- the settlement records connectors report, which reconciliation matches against actions.
CREATE TABLE settlement_jobs (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL,
    action_id    TEXT NOT NULL UNIQUE REFERENCES actions (id),
    connector    TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'done')),
    claimed_by   TEXT,
    claimed_at   BIGINT,
    attempts     BIGINT NOT NULL DEFAULT 0,
    available_at BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    finished_at  BIGINT
);
CREATE INDEX settlement_jobs_due ON settlement_jobs (state, available_at, id);

CREATE TABLE settlement_records (
    id                   TEXT PRIMARY KEY,
    workspace_id         TEXT NOT NULL REFERENCES workspaces (id),
    environment          TEXT NOT NULL,
    action_id            TEXT NOT NULL REFERENCES actions (id),
    kind                 TEXT NOT NULL CHECK (kind IN ('settled', 'failed', 'returned')),
    connector            TEXT NOT NULL,
    connector_reference  TEXT NOT NULL,
    reference            TEXT NOT NULL,
    amount_minor         BIGINT NOT NULL,
    currency             TEXT NOT NULL,
    reconciliation       TEXT NOT NULL CHECK (reconciliation IN ('matched', 'mismatch', 'not_applicable')),
    mismatches           TEXT NOT NULL,
    record_hash          TEXT NOT NULL,
    processed_by         TEXT NOT NULL,
    received_at          BIGINT NOT NULL,
    UNIQUE (action_id, kind)
);
