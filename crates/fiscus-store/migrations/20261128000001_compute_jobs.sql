-- Compute jobs: an optimisation, simulation or backtest asked for over the API. The request (with the
-- dataset versions it reads), the engine version, the seed and the credits it cost are sealed when the job
-- is created; its state, progress and claim change as a worker runs it (claimed with FOR UPDATE SKIP LOCKED
-- on PostgreSQL, a silent claim retaken after a while). The result is a sealed row of its own.
CREATE TABLE compute_jobs (
    id                  TEXT PRIMARY KEY,
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id),
    environment         TEXT NOT NULL,
    -- optimization, simulation, backtest, model_run, … (`fiscus_domain::compute::JobKind`; an unknown one is
    -- refused when read)
    kind                TEXT NOT NULL,
    request             TEXT NOT NULL,
    request_hash        TEXT NOT NULL,
    engine_version      TEXT NOT NULL,
    credits             BIGINT NOT NULL,
    created_by          TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    seal_mac            TEXT,
    state               TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    progress            BIGINT NOT NULL DEFAULT 0,
    cancel_requested_at BIGINT,
    claimed_by          TEXT,
    claimed_at          BIGINT,
    attempts            BIGINT NOT NULL DEFAULT 0,
    started_at          BIGINT,
    finished_at         BIGINT,
    error_code          TEXT,
    error_detail        TEXT
);
CREATE INDEX compute_jobs_by_tenant ON compute_jobs (workspace_id, environment, id);
CREATE INDEX compute_jobs_due ON compute_jobs (state, id);

CREATE TABLE compute_results (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    job_id       TEXT NOT NULL UNIQUE REFERENCES compute_jobs (id),
    output       TEXT NOT NULL,
    output_hash  TEXT NOT NULL,
    -- sha256 over the request hash, the engine version and the output hash: what a result is evidence of.
    result_hash  TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    seal_mac     TEXT
);
