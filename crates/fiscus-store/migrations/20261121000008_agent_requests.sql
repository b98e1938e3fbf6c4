-- Request evidence of the agent-execution gateway: every call, accepted or refused, sealed.
CREATE TABLE agent_requests (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL,
    application_id TEXT NOT NULL,
    credential_id  TEXT NOT NULL,
    operation      TEXT NOT NULL,
    method         TEXT NOT NULL,
    path           TEXT NOT NULL,
    status         BIGINT NOT NULL,
    request_hash   TEXT NOT NULL,
    response_hash  TEXT NOT NULL,
    evidence_hash  TEXT NOT NULL,
    request_id     TEXT NOT NULL,
    created_at     BIGINT NOT NULL
);
CREATE INDEX agent_requests_by_tenant ON agent_requests (workspace_id, environment, id);
