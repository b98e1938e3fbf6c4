-- The index by record, narrowed to what it must say (issue 33, by measurement): where a record's leaves are.
-- `tlog_leaves` kept each integrated leaf whole (kind, id, record hash) under two keys, by place and by record,
-- and on two cores the integrator's inserts into it were most of what the log cost keyed writes. A position
-- is a record's id and a leaf index, under one key (ids begin with their time, so new ones land together at
-- the key's end rather than on random pages); the leaf itself is read from the log there (`tlog_batches`)
-- and kept only if it is that record's, so a position that is stale or was edited finds nothing, never
-- another record's leaf. No foreign key: everything here is derived from the leaves, and checking one per
-- row was part of the cost.
--
-- On SQLite the integrated state is in the evidence file (`migrations_evidence/`); this copy in the main
-- file stays empty. `tlog_leaves` keeps what earlier releases indexed, read as before.
CREATE TABLE tlog_positions (
    workspace_id TEXT NOT NULL,
    record_id    TEXT NOT NULL,
    leaf_index   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, record_id, leaf_index)
);
