-- Signed execution clients of the agent-execution gateway: an Ed25519 public key under an application
-- (RFC 9421 request signatures), the sealed, versioned decisions of people at the console that grant or
-- revoke it (the latest is the client's standing; nothing else writes them), and the nonces its signatures
-- used (each accepted once while its signature could still be fresh).
CREATE TABLE execution_clients (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    application_id TEXT NOT NULL REFERENCES applications (id),
    name           TEXT NOT NULL,
    public_key     TEXT NOT NULL,
    created_by     TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    seal_mac       TEXT
);
CREATE INDEX execution_clients_by_tenant ON execution_clients (workspace_id, environment, id);

CREATE TABLE execution_client_decisions (
    id                    TEXT PRIMARY KEY,
    workspace_id          TEXT NOT NULL REFERENCES workspaces (id),
    client_id             TEXT NOT NULL REFERENCES execution_clients (id),
    version               BIGINT NOT NULL CHECK (version > 0),
    decision              TEXT NOT NULL CHECK (decision IN ('grant', 'revoke')),
    -- Space-separated catalogue operation ids and action kinds (empty for a revocation).
    operations            TEXT NOT NULL,
    action_kinds          TEXT NOT NULL,
    environment           TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    expires_at            BIGINT,
    rate_limit_per_minute BIGINT NOT NULL,
    monthly_quota         BIGINT NOT NULL,
    decision_hash         TEXT NOT NULL,
    decided_by            TEXT NOT NULL,
    created_at            BIGINT NOT NULL,
    seal_mac              TEXT,
    -- Two operators deciding on the same version: one wins, the other is told it changed meanwhile.
    UNIQUE (client_id, version)
);

CREATE TABLE signature_nonces (
    client_id  TEXT NOT NULL,
    nonce      TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (client_id, nonce)
);
CREATE INDEX signature_nonces_by_expiry ON signature_nonces (expires_at);
