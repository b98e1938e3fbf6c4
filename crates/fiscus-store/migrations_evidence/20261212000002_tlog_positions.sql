-- Where a record's leaves are, by its id (see the main database's 20261212000002_tlog_positions.sql, which
-- is this table on PostgreSQL). One b-tree: the key is the row.
CREATE TABLE tlog_positions (
    workspace_id TEXT NOT NULL,
    record_id    TEXT NOT NULL,
    leaf_index   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, record_id, leaf_index)
) WITHOUT ROWID;
