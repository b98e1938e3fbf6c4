-- Autonomy assessment evidence: sealed, append-only, classified into the seed's eight domains.
CREATE TABLE autonomy_evidence (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    environment      TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    domain           TEXT NOT NULL,
    title            TEXT NOT NULL,
    summary          TEXT,
    source_type      TEXT NOT NULL,
    source_reference TEXT NOT NULL,
    source_hash      TEXT NOT NULL,
    observed_at      BIGINT NOT NULL,
    metadata         TEXT NOT NULL,
    evidence_hash    TEXT NOT NULL,
    recorded_by      TEXT NOT NULL,
    created_at       BIGINT NOT NULL
);
CREATE INDEX autonomy_evidence_by_tenant ON autonomy_evidence (workspace_id, environment, id);
