-- Agent Spaces: spaces promoted into a workspace, their versions, operators' decisions about them, runs
-- (each with its execution: in the request or on the queue) and every tool call a run made.
--
-- Every row belongs to one tenant and is sealed (`seal_mac`); a record's content is canonical JSON (`body`)
-- with its SHA-256 (`content_hash`). A run's `state`, `answer`, `output_hash`, `started_at` and `ended_at`
-- move, and the row is re-sealed when they do; `due_at`, `claimed_by` and `claimed_at` are the queue's
-- bookkeeping and not sealed.

CREATE TABLE agent_spaces (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    key           TEXT NOT NULL,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (workspace_id, environment, key)
);
CREATE INDEX agent_spaces_by_tenant ON agent_spaces (workspace_id, environment, id);

CREATE TABLE agent_space_versions (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    space_id      TEXT NOT NULL REFERENCES agent_spaces (id),
    version       BIGINT NOT NULL,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (space_id, version)
);
CREATE INDEX agent_space_versions_by_tenant ON agent_space_versions (workspace_id, environment, id);

CREATE TABLE agent_space_decisions (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    space_id      TEXT NOT NULL REFERENCES agent_spaces (id),
    seq           BIGINT NOT NULL,
    decision      TEXT NOT NULL CHECK (decision IN ('promote', 'suspend')),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (space_id, seq)
);
CREATE INDEX agent_space_decisions_by_tenant ON agent_space_decisions (workspace_id, environment, id);

CREATE TABLE agent_runs (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    space_id      TEXT NOT NULL REFERENCES agent_spaces (id),
    version_id    TEXT NOT NULL REFERENCES agent_space_versions (id),
    execution_id  TEXT NOT NULL UNIQUE,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed')),
    answer        TEXT,
    output_hash   TEXT,
    started_at    BIGINT,
    ended_at      BIGINT,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    due_at        BIGINT,
    claimed_by    TEXT,
    claimed_at    BIGINT
);
CREATE INDEX agent_runs_by_tenant ON agent_runs (workspace_id, environment, id);
CREATE INDEX agent_runs_by_state ON agent_runs (state, due_at);

CREATE TABLE agent_run_calls (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    run_id        TEXT NOT NULL REFERENCES agent_runs (id),
    seq           BIGINT NOT NULL,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (run_id, seq)
);
CREATE INDEX agent_run_calls_by_tenant ON agent_run_calls (workspace_id, environment, run_id);
