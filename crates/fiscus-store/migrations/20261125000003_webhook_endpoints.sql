-- Webhook endpoints registered on the agent gateway. The signing secret is stored encrypted (AEAD under a
-- key derived from the server key, with the endpoint id as associated data). A sandbox endpoint is active at
-- once; a production endpoint waits for an operator's approval at the console before anything is delivered.
CREATE TABLE webhook_endpoints (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    application_id TEXT NOT NULL,
    url            TEXT NOT NULL,
    description    TEXT NOT NULL,
    -- Space-separated event types; `*` for every type.
    event_types    TEXT NOT NULL,
    secret_sealed  TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('active', 'pending_approval', 'disabled', 'revoked')),
    status_reason  TEXT,
    created_by     TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    seal_mac       TEXT
);
CREATE INDEX webhook_endpoints_by_tenant ON webhook_endpoints (workspace_id, environment, id);
