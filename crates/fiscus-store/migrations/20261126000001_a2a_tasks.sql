-- A2A tasks: one per message an agent sent to the A2A endpoint, naming one skill (a generated tool). The call
-- completes before the answer, so every task is stored in its terminal state, with the message as sent and
-- the operation's answer (what GetTask returns), and sealed like the other evidence rows. A retried message
-- (the same application and messageId) returns the first task instead of calling the tool again.
CREATE TABLE a2a_tasks (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    application_id TEXT NOT NULL,
    credential_id  TEXT NOT NULL,
    context_id     TEXT NOT NULL,
    message_id     TEXT NOT NULL,
    skill          TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('completed', 'failed')),
    http_status    BIGINT NOT NULL,
    request_hash   TEXT NOT NULL,
    response_hash  TEXT NOT NULL,
    message        TEXT NOT NULL,
    result         TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    seal_mac       TEXT,
    UNIQUE (workspace_id, environment, application_id, message_id)
);
CREATE INDEX a2a_tasks_by_application ON a2a_tasks (workspace_id, environment, application_id, id);
CREATE INDEX a2a_tasks_by_context ON a2a_tasks (workspace_id, environment, application_id, context_id, id);
