-- Hash-only audit rows of tool calls through the agent protocols (MCP, A2A): which credential called which
-- tool, the hashes of the arguments and of the answer, and the outcome. No payloads.
CREATE TABLE tool_invocations (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    application_id TEXT NOT NULL,
    credential_id  TEXT NOT NULL,
    protocol       TEXT NOT NULL CHECK (protocol IN ('mcp', 'a2a')),
    tool           TEXT NOT NULL,
    request_hash   TEXT NOT NULL,
    response_hash  TEXT NOT NULL,
    status         BIGINT NOT NULL,
    outcome        TEXT NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'refused')),
    request_id     TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    seal_mac       TEXT
);
CREATE INDEX tool_invocations_by_credential ON tool_invocations (workspace_id, environment, credential_id, id);
