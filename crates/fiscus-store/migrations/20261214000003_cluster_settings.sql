-- The settings every node on this database must share (issue 35): the first node to start records each,
-- and every later start compares its own and refuses to start on a difference (`fiscus_store::cluster`).
-- No tenant data. After a deliberate change (every node stopped), `fiscus admin cluster accept-settings`
-- records the new values.
CREATE TABLE cluster_settings (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    recorded_by TEXT NOT NULL,
    recorded_at BIGINT NOT NULL
);
