-- Counterparties and bank accounts as governed master data (issue 32). Each change of an account's details
-- is a new sealed version, pending until a person approves it at the console; at most one version of an
-- account is pending and at most one active at any time (the partial unique indexes hold it whatever the
-- code does).
CREATE TABLE counterparties (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    reference     TEXT,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT
);

CREATE UNIQUE INDEX counterparties_reference ON counterparties (workspace_id, environment, reference)
    WHERE reference IS NOT NULL;

CREATE TABLE bank_account_versions (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    environment      TEXT NOT NULL,
    account_id       TEXT NOT NULL,
    version          BIGINT NOT NULL,
    owner            TEXT NOT NULL CHECK (owner IN ('own', 'counterparty')),
    counterparty_id  TEXT REFERENCES counterparties (id),
    body             TEXT NOT NULL,
    content_hash     TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('pending', 'active', 'rejected', 'superseded')),
    created_by       TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    decided_by       TEXT,
    decided_at       BIGINT,
    decision_note    TEXT,
    seal_mac         TEXT,
    UNIQUE (account_id, version)
);

CREATE UNIQUE INDEX bank_account_versions_one_pending ON bank_account_versions (account_id) WHERE state = 'pending';
CREATE UNIQUE INDEX bank_account_versions_one_active ON bank_account_versions (account_id) WHERE state = 'active';
CREATE INDEX bank_account_versions_tenant ON bank_account_versions (workspace_id, environment, state, id);
CREATE INDEX bank_account_versions_counterparty ON bank_account_versions (workspace_id, counterparty_id);
