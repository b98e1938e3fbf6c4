-- Client calls of client intelligence: calls, their recordings (each upload a new version), consent records
-- and transcripts (each a new version). Every row belongs to one tenant and is sealed (`seal_mac`); a
-- record's content is canonical JSON (`body`) with its SHA-256 (`content_hash`).
--
-- A recording's audio is kept in `audio`, outside the seal: the sealed body holds its SHA-256, which every
-- read checks, so altered audio is refused as surely as an altered row.

CREATE TABLE client_calls (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT
);
CREATE INDEX client_calls_by_tenant ON client_calls (workspace_id, environment, id);

CREATE TABLE call_recordings (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    call_id       TEXT NOT NULL REFERENCES client_calls (id),
    version       BIGINT NOT NULL,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    audio         BYTEA,
    UNIQUE (call_id, version)
);
CREATE INDEX call_recordings_by_tenant ON call_recordings (workspace_id, environment, call_id);

CREATE TABLE call_consents (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    call_id       TEXT NOT NULL REFERENCES client_calls (id),
    seq           BIGINT NOT NULL,
    basis         TEXT NOT NULL CHECK (basis IN ('captured', 'not_required', 'withdrawn')),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (call_id, seq)
);
CREATE INDEX call_consents_by_tenant ON call_consents (workspace_id, environment, call_id);

CREATE TABLE call_transcripts (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    call_id       TEXT NOT NULL REFERENCES client_calls (id),
    version       BIGINT NOT NULL,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (call_id, version)
);
CREATE INDEX call_transcripts_by_tenant ON call_transcripts (workspace_id, environment, call_id);
