-- Workflows: versioned definitions (DAGs of typed steps), durable runs with a step-by-step history, and
-- validation campaigns.
--
-- Every row belongs to one tenant (workspace and environment) and is sealed (`seal_mac`); a record's
-- content is canonical JSON (`body`) with its SHA-256 (`content_hash`). A run's `state`, `evidence_hash`
-- and `ended_at` move, and the row is re-sealed when they do; `due_at`, `claimed_by` and `claimed_at` are
-- the worker queue's bookkeeping and not sealed (a worker only ever acts on what the sealed history says).

CREATE TABLE workflows (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    name          TEXT NOT NULL,
    library_key   TEXT,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (workspace_id, environment, name)
);
CREATE INDEX workflows_by_tenant ON workflows (workspace_id, environment, id);

CREATE TABLE workflow_versions (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    workflow_id   TEXT NOT NULL REFERENCES workflows (id),
    version       BIGINT NOT NULL,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (workflow_id, version)
);
CREATE INDEX workflow_versions_by_tenant ON workflow_versions (workspace_id, environment, id);

CREATE TABLE workflow_runs (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    workflow_id   TEXT NOT NULL REFERENCES workflows (id),
    version_id    TEXT NOT NULL REFERENCES workflow_versions (id),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'waiting', 'awaiting_review', 'completed',
                                                 'failed', 'cancelled')),
    evidence_hash TEXT,
    ended_at      BIGINT,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    due_at        BIGINT,
    claimed_by    TEXT,
    claimed_at    BIGINT
);
CREATE INDEX workflow_runs_by_tenant ON workflow_runs (workspace_id, environment, id);
CREATE INDEX workflow_runs_by_state ON workflow_runs (state, due_at);

-- A step's outcome is recorded once per run (the runtime's guarantee that no step's effect lands twice).
CREATE TABLE workflow_run_steps (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    run_id        TEXT NOT NULL REFERENCES workflow_runs (id),
    step_id       TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    outcome       TEXT NOT NULL CHECK (outcome IN ('completed', 'failed', 'rejected')),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (run_id, step_id),
    UNIQUE (run_id, seq)
);

CREATE TABLE workflow_campaigns (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    version_id    TEXT NOT NULL REFERENCES workflow_versions (id),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT
);
CREATE INDEX workflow_campaigns_by_tenant ON workflow_campaigns (workspace_id, environment, id);

-- A proof of value: what a workflow's runs did, against the manual baseline the caller stated.
CREATE TABLE workflow_proofs (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    workflow_id   TEXT NOT NULL REFERENCES workflows (id),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT
);
CREATE INDEX workflow_proofs_by_tenant ON workflow_proofs (workspace_id, environment, id);
