-- Production access is turned on only by two distinct admins: the first request stands until a second
-- admin confirms it (or anyone withdraws it by turning access off).
CREATE TABLE production_access_requests (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    requested_by TEXT NOT NULL,
    confirmed_by TEXT,
    state        TEXT NOT NULL CHECK (state IN ('open', 'confirmed', 'withdrawn')),
    created_at   BIGINT NOT NULL,
    decided_at   BIGINT
);
CREATE INDEX production_access_open ON production_access_requests (workspace_id, state);
