-- Research: runs are compute jobs of kind `research_run`, filed under a project (the column below, a copy of
-- the project named in the job's sealed request, kept for grouping); a snapshot freezes one succeeded run's
-- bundle (pinned request, engine version, outputs and their hashes) under the SHA-256 of the bundle, sealed
-- and never changed. Projects have no table: they are the distinct projects of runs.
ALTER TABLE compute_jobs ADD COLUMN project TEXT;
CREATE INDEX compute_jobs_by_project ON compute_jobs (workspace_id, environment, project);

CREATE TABLE research_snapshots (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL,
    project      TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT,
    -- one snapshot per run
    run_id       TEXT NOT NULL UNIQUE REFERENCES compute_jobs (id),
    bundle       TEXT NOT NULL,
    bundle_hash  TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    seal_mac     TEXT
);
CREATE INDEX research_snapshots_by_project ON research_snapshots (workspace_id, environment, project, id);
