-- Webhook delivery. The outbox is fanned out into one delivery per event and subscribed endpoint; each
-- attempt is logged; each endpoint has one queue row that a worker on any node claims exclusively, so an
-- endpoint's events go out one at a time, in event order, and a crashed worker's claim goes stale and is
-- taken over (the events it had not recorded are sent again, with the same webhook-id).
-- These tables are written only by the delivery worker from rows it has just read in the same transaction,
-- so they carry no foreign keys (each costs a trigger per row on PostgreSQL).
CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    workspace_id    TEXT NOT NULL,
    environment     TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    endpoint_id     TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    -- pending: to be sent (again) at next_attempt_at; succeeded: a 2xx was received; failed: the retry
    -- schedule ran out or the receiver answered 410; abandoned: the endpoint was disabled or revoked first.
    state           TEXT NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed', 'abandoned')),
    attempts        BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    last_status     BIGINT,
    last_error      TEXT,
    created_at      BIGINT NOT NULL,
    finished_at     BIGINT,
    UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint_id, state, event_id);

-- The delivery log: one row per attempt (status or error, latency, and when the next attempt is due).
CREATE TABLE webhook_attempts (
    id              TEXT PRIMARY KEY,
    workspace_id    TEXT NOT NULL,
    environment     TEXT NOT NULL,
    delivery_id     TEXT NOT NULL,
    endpoint_id     TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    attempt         BIGINT NOT NULL,
    status          BIGINT,
    error           TEXT,
    latency_micros  BIGINT NOT NULL,
    next_attempt_at BIGINT,
    worker          TEXT NOT NULL,
    created_at      BIGINT NOT NULL
);
CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, id);

-- One row per endpoint with deliveries: when its head is due, and which worker holds it.
CREATE TABLE webhook_queues (
    endpoint_id  TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    environment  TEXT NOT NULL,
    next_due_at  BIGINT,
    claimed_by   TEXT,
    claimed_at   BIGINT
);
CREATE INDEX webhook_queues_due ON webhook_queues (next_due_at);
