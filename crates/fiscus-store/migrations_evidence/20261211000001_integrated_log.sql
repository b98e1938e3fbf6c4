-- The transparency log's integrated state in the evidence file beside a SQLite database (see
-- `src/evidence_db.rs`): the same tables as the main database's migrations create for PostgreSQL
-- (20261209000001_transparency_log.sql), without the foreign keys to `workspaces`, which lives in the main file.
CREATE TABLE tlog_leaves (
    workspace_id TEXT NOT NULL,
    leaf_index   BIGINT NOT NULL,
    kind         TEXT NOT NULL,
    record_id    TEXT NOT NULL,
    record_hash  TEXT NOT NULL,
    PRIMARY KEY (workspace_id, leaf_index)
);
CREATE INDEX tlog_leaves_by_record ON tlog_leaves (workspace_id, record_id, leaf_index);

CREATE TABLE tlog_tiles (
    workspace_id TEXT NOT NULL,
    level        BIGINT NOT NULL,
    tile_index   BIGINT NOT NULL,
    hashes       TEXT NOT NULL,
    PRIMARY KEY (workspace_id, level, tile_index)
);

CREATE TABLE tlog_trees (
    workspace_id  TEXT PRIMARY KEY,
    size          BIGINT NOT NULL,
    root_hash     TEXT NOT NULL,
    integrated_at BIGINT NOT NULL
);

CREATE TABLE tlog_checkpoints (
    workspace_id TEXT NOT NULL,
    tree_size    BIGINT NOT NULL,
    root_hash    TEXT NOT NULL,
    note         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, tree_size)
);
