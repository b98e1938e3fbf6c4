-- Paying through banks with ISO 20022 files (issue 32). Every row is a sealed record (`sealed_records`).
--
-- A payment instruction is what executing a payment through the `iso20022` connector hands over: the
-- action, the amount, and the approved bank details it is bound to (the versions and hashes its checks
-- cite). `file_id` is set once, when the bank file worker assigns it to a file; a payment is in exactly one
-- file because the assignment is guarded on `file_id IS NULL` and sealed.
CREATE TABLE payment_instructions (
    id                 TEXT PRIMARY KEY,
    workspace_id       TEXT NOT NULL REFERENCES workspaces (id),
    environment        TEXT NOT NULL,
    action_id          TEXT NOT NULL UNIQUE REFERENCES actions (id),
    debtor_account_id  TEXT NOT NULL,
    currency           TEXT NOT NULL,
    requested_date     TEXT NOT NULL,
    body               TEXT NOT NULL,
    content_hash       TEXT NOT NULL,
    created_by         TEXT NOT NULL,
    created_at         BIGINT NOT NULL,
    file_id            TEXT,
    seal_mac           TEXT
);

CREATE INDEX payment_instructions_unfiled ON payment_instructions (requested_date, workspace_id, environment, debtor_account_id, currency, id)
    WHERE file_id IS NULL;
CREATE INDEX payment_instructions_file ON payment_instructions (file_id);

-- A `pain.001` file: its bytes (`content`, whose SHA-256 the sealed body carries) and where its publication
-- stands: `recorded` (committed with its payments, not yet on disk), `staged` (written and synced in the
-- staging directory), `published` (renamed into the outbound directory).
CREATE TABLE payment_files (
    id                 TEXT PRIMARY KEY,
    workspace_id       TEXT NOT NULL REFERENCES workspaces (id),
    environment        TEXT NOT NULL,
    debtor_account_id  TEXT NOT NULL,
    currency           TEXT NOT NULL,
    requested_date     TEXT NOT NULL,
    body               TEXT NOT NULL,
    content_hash       TEXT NOT NULL,
    created_by         TEXT NOT NULL,
    created_at         BIGINT NOT NULL,
    state              TEXT NOT NULL CHECK (state IN ('recorded', 'staged', 'published')),
    published_at       BIGINT,
    -- Written in the row's own transaction, right after it (the sealed columns are inserted first).
    content            TEXT,
    seal_mac           TEXT
);

CREATE INDEX payment_files_tenant ON payment_files (workspace_id, environment, id);
CREATE INDEX payment_files_unpublished ON payment_files (state) WHERE state <> 'published';

-- A message from the bank (`pain.002`, `camt.053`, `camt.054`), once per tenant whatever the number of
-- imports (`sha256`), with what it did in its body.
CREATE TABLE bank_messages (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL,
    sha256         TEXT NOT NULL,
    kind           TEXT NOT NULL,
    body           TEXT NOT NULL,
    content_hash   TEXT NOT NULL,
    created_by     TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    content        TEXT,
    seal_mac       TEXT,
    UNIQUE (workspace_id, environment, sha256)
);

CREATE INDEX bank_messages_tenant ON bank_messages (workspace_id, environment, id);

-- A booked statement entry that matched no payment: listed for a person, who resolves it.
CREATE TABLE statement_entries (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL,
    message_id     TEXT NOT NULL REFERENCES bank_messages (id),
    state          TEXT NOT NULL CHECK (state IN ('unmatched', 'resolved')),
    body           TEXT NOT NULL,
    content_hash   TEXT NOT NULL,
    created_by     TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    resolved_by    TEXT,
    resolved_at    BIGINT,
    resolution     TEXT,
    seal_mac       TEXT
);

CREATE INDEX statement_entries_tenant ON statement_entries (workspace_id, environment, state, id);
