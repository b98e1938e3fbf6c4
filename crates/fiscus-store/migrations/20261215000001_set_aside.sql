-- Records a worker set aside (issue 54): a row that failed its seal (or could not be read as what it claims
-- to be) is named here, with why, and every claim that would take it skips it, so one edited row stops
-- neither its own workspace's other work nor anyone else's. Not sealed: it only ever withholds work (a row
-- deleted from here is taken up again and refused again). The console shows a workspace its rows; /metrics
-- counts them by table.
CREATE TABLE set_aside (
    table_name   TEXT NOT NULL,
    record_id    TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    environment  TEXT NOT NULL,
    reason       TEXT NOT NULL,
    set_aside_by TEXT NOT NULL,
    set_aside_at BIGINT NOT NULL,
    PRIMARY KEY (table_name, record_id)
);
CREATE INDEX set_aside_by_workspace ON set_aside (workspace_id, environment, set_aside_at);
