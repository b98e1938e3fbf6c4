-- Sealed lineage exports: an OpenLineage document (RunEvents) of how the workspace's datasets were imported
-- and flow into features, as it stood when the export was made.
CREATE TABLE lineage_exports (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    created_by    TEXT NOT NULL,
    event_count   BIGINT NOT NULL,
    document      TEXT NOT NULL,
    document_hash TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT
);
CREATE INDEX lineage_exports_by_workspace ON lineage_exports (workspace_id, id);
