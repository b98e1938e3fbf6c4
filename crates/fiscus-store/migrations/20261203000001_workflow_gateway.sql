-- The workflow A2A gateway: which workflow versions an application's agents may dispatch (a separate,
-- explicit allowlist that admins decide at the console, versioned like a signed client's grant), and the
-- gateway's tasks (one per message; a task's id is the id of the run it started).
--
-- Both are append-only and sealed (`seal_mac`). An allowlist's standing is its latest version; an empty
-- `versions` list withdraws every workflow.

CREATE TABLE workflow_tool_grants (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL,
    application_id TEXT NOT NULL,
    version        BIGINT NOT NULL,
    versions       TEXT NOT NULL,
    decision_hash  TEXT NOT NULL,
    decided_by     TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    seal_mac       TEXT,
    UNIQUE (workspace_id, environment, application_id, version)
);

CREATE TABLE workflow_gateway_tasks (
    id             TEXT PRIMARY KEY REFERENCES workflow_runs (id),
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL,
    application_id TEXT NOT NULL,
    credential_id  TEXT NOT NULL,
    context_id     TEXT NOT NULL,
    message_id     TEXT NOT NULL,
    message_hash   TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    seal_mac       TEXT,
    UNIQUE (workspace_id, environment, application_id, message_id)
);
