-- Financial Actions: immutable envelopes with their hash, append-only check versions, human decisions,
-- state history, and the transactional outbox of lifecycle events.

CREATE TABLE actions (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    environment      TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    kind             TEXT NOT NULL,
    amount_minor     BIGINT NOT NULL CHECK (amount_minor > 0),
    currency         TEXT NOT NULL,
    counterparty     TEXT NOT NULL,
    connector        TEXT NOT NULL,
    execution_mode   TEXT NOT NULL CHECK (execution_mode IN ('human_approved', 'machine_delegated')),
    delegation_id    TEXT,
    risk_tier        TEXT NOT NULL CHECK (risk_tier IN ('T1', 'T2')),
    reference        TEXT NOT NULL,
    required_checks  TEXT NOT NULL,
    metadata         TEXT NOT NULL,
    envelope_hash    TEXT NOT NULL,
    control_state    TEXT NOT NULL,
    origin           TEXT NOT NULL CHECK (origin IN ('application', 'external_agent', 'operator')),
    proposed_by_kind TEXT NOT NULL,
    proposed_by_id   TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX actions_by_tenant ON actions (workspace_id, environment, id);
CREATE INDEX actions_by_state ON actions (workspace_id, environment, control_state, id);

CREATE TABLE action_checks (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    action_id        TEXT NOT NULL REFERENCES actions (id),
    check_key        TEXT NOT NULL,
    version          BIGINT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'warning', 'pending')),
    source_type      TEXT NOT NULL,
    source_reference TEXT NOT NULL,
    source_hash      TEXT NOT NULL,
    metrics          TEXT NOT NULL,
    metadata         TEXT NOT NULL,
    check_hash       TEXT NOT NULL,
    recorded_by      TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    UNIQUE (action_id, check_key, version)
);

CREATE TABLE action_decisions (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    action_id      TEXT NOT NULL REFERENCES actions (id),
    operator_id    TEXT NOT NULL,
    role           TEXT NOT NULL,
    decision       TEXT NOT NULL CHECK (decision IN ('approve', 'deny')),
    envelope_hash  TEXT NOT NULL,
    check_set_hash TEXT NOT NULL,
    evidence_hash  TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    invalidated_at BIGINT
);
CREATE INDEX action_decisions_by_action ON action_decisions (action_id, created_at);

CREATE TABLE action_history (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    action_id    TEXT NOT NULL REFERENCES actions (id),
    from_state   TEXT,
    to_state     TEXT NOT NULL,
    event        TEXT NOT NULL,
    actor_kind   TEXT NOT NULL,
    actor_id     TEXT NOT NULL,
    detail       TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX action_history_by_action ON action_history (action_id, id);

CREATE TABLE outbox (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL,
    event_type   TEXT NOT NULL,
    subject_id   TEXT NOT NULL,
    payload      TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    delivered_at BIGINT
);
CREATE INDEX outbox_undelivered ON outbox (delivered_at, id);
