-- Platform foundation: tenancy, applications and credentials, idempotency, audit chain, usage, credits.
-- Timestamps are BIGINT microseconds since the Unix epoch (UTC); booleans are BIGINT 0/1 so that the same
-- queries and decoders serve SQLite and PostgreSQL.

CREATE TABLE workspaces (
    id                TEXT PRIMARY KEY,
    name              TEXT NOT NULL,
    entitlement       TEXT NOT NULL,
    production_access BIGINT NOT NULL DEFAULT 0 CHECK (production_access IN (0, 1)),
    is_demo           BIGINT NOT NULL DEFAULT 0 CHECK (is_demo IN (0, 1)),
    created_at        BIGINT NOT NULL
);

CREATE TABLE applications (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    name          TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('active', 'suspended', 'revoked')),
    scopes        TEXT NOT NULL,
    service_class TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX applications_by_workspace ON applications (workspace_id, id);

CREATE TABLE api_keys (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    application_id TEXT NOT NULL REFERENCES applications (id),
    lookup         TEXT NOT NULL UNIQUE,
    secret_hash    TEXT NOT NULL,
    hint           TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('active', 'rotated', 'revoked')),
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT,
    revoked_at     BIGINT
);
CREATE INDEX api_keys_by_application ON api_keys (workspace_id, application_id, id);

CREATE TABLE oauth_clients (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    application_id TEXT NOT NULL REFERENCES applications (id),
    secret_hash    TEXT NOT NULL,
    secret_hint    TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('active', 'revoked')),
    created_at     BIGINT NOT NULL,
    rotated_at     BIGINT
);
CREATE INDEX oauth_clients_by_application ON oauth_clients (workspace_id, application_id, id);

CREATE TABLE oauth_tokens (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    application_id TEXT NOT NULL REFERENCES applications (id),
    client_id      TEXT NOT NULL REFERENCES oauth_clients (id),
    lookup         TEXT NOT NULL UNIQUE,
    secret_hash    TEXT NOT NULL,
    scopes         TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    revoked_at     BIGINT
);
CREATE INDEX oauth_tokens_by_client ON oauth_tokens (client_id, revoked_at);

CREATE TABLE idempotency_keys (
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    application_id   TEXT NOT NULL REFERENCES applications (id),
    idem_key         TEXT NOT NULL,
    method           TEXT NOT NULL,
    path             TEXT NOT NULL,
    fingerprint      TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('in_flight', 'completed')),
    response_status  BIGINT,
    response_headers TEXT,
    response_body    TEXT,
    lock_token       TEXT NOT NULL,
    locked_at        BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    expires_at       BIGINT NOT NULL,
    PRIMARY KEY (application_id, idem_key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

CREATE TABLE audit_heads (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces (id),
    seq          BIGINT NOT NULL,
    hash         TEXT NOT NULL
);

CREATE TABLE audit_events (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    seq          BIGINT NOT NULL,
    prev_hash    TEXT NOT NULL,
    hash         TEXT NOT NULL,
    occurred_at  BIGINT NOT NULL,
    environment  TEXT,
    actor_kind   TEXT NOT NULL,
    actor_id     TEXT NOT NULL,
    action       TEXT NOT NULL,
    request_id   TEXT,
    subject      TEXT,
    details      TEXT NOT NULL,
    PRIMARY KEY (workspace_id, seq)
);

CREATE TABLE usage_counters (
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL,
    application_id TEXT NOT NULL,
    credential_id  TEXT NOT NULL,
    operation      TEXT NOT NULL,
    day            TEXT NOT NULL,
    requests       BIGINT NOT NULL,
    errors         BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, credential_id, operation, day)
);

CREATE TABLE credit_ledger (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    kind         TEXT NOT NULL CHECK (kind IN ('grant', 'consumption')),
    credits      BIGINT NOT NULL CHECK (credits >= 0),
    reason       TEXT NOT NULL,
    reference    TEXT,
    created_at   BIGINT NOT NULL
);
CREATE INDEX credit_ledger_by_workspace ON credit_ledger (workspace_id, environment, id);
