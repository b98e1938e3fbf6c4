-- Decisions a credential submitted on a retraining request over the API. They decide nothing: a person
-- decides at the console (and sees them there). Append-only and sealed like every LQM record.
CREATE TABLE lqm_retraining_submissions (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    request_id    TEXT NOT NULL REFERENCES lqm_retraining_requests (id),
    decision      TEXT NOT NULL CHECK (decision IN ('approve', 'reject', 'cancel')),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT
);

CREATE INDEX lqm_retraining_submissions_request ON lqm_retraining_submissions (workspace_id, request_id, created_at);
