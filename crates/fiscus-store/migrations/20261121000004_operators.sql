-- The human governance plane: operators of a workspace and their console sessions.
CREATE TABLE operators (
    id                    TEXT PRIMARY KEY,
    workspace_id          TEXT NOT NULL REFERENCES workspaces (id),
    email                 TEXT NOT NULL,
    role                  TEXT NOT NULL CHECK (role IN ('admin', 'approver', 'auditor')),
    status                TEXT NOT NULL CHECK (status IN ('invited', 'active', 'removed')),
    password_hash         TEXT,
    totp_secret           TEXT,
    totp_confirmed        BIGINT NOT NULL DEFAULT 0,
    totp_last_step        BIGINT,
    enrollment_token_hash TEXT UNIQUE,
    enrollment_expires_at BIGINT,
    failed_attempts       BIGINT NOT NULL DEFAULT 0,
    locked_until          BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    UNIQUE (workspace_id, email)
);

CREATE TABLE console_sessions (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    operator_id  TEXT NOT NULL REFERENCES operators (id),
    token_hash   TEXT NOT NULL UNIQUE,
    csrf_token   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    revoked_at   BIGINT
);
