-- The transparency log (issue 33): per workspace, an RFC 9162 Merkle tree whose leaves are every audit event
-- and every sealed row, each named by a short entry (`fiscus_domain::tlog::Leaf`).
--
-- A leaf takes its index in the transaction that writes its record, from the workspace's head (the audit
-- chain's head row, which that transaction locks anyway), so the log's order is the order of commits and a
-- leaf exists exactly when its record does. Tiles and checkpoints are made afterwards by the integrator,
-- from committed leaves, without holding the head.
ALTER TABLE audit_heads ADD COLUMN leaves BIGINT NOT NULL DEFAULT 0;

CREATE TABLE tlog_leaves (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    leaf_index   BIGINT NOT NULL,
    kind         TEXT NOT NULL,
    record_id    TEXT NOT NULL,
    record_hash  TEXT NOT NULL,
    PRIMARY KEY (workspace_id, leaf_index)
);
CREATE INDEX tlog_leaves_by_record ON tlog_leaves (workspace_id, record_id, leaf_index);

-- The tree as C2SP tlog-tiles: each tile's widest version (a narrower one is its prefix), hashes as hex.
CREATE TABLE tlog_tiles (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    level        BIGINT NOT NULL,
    tile_index   BIGINT NOT NULL,
    hashes       TEXT NOT NULL,
    PRIMARY KEY (workspace_id, level, tile_index)
);

-- How far the tiles reach, per workspace, and the root there.
CREATE TABLE tlog_trees (
    workspace_id  TEXT PRIMARY KEY REFERENCES workspaces (id),
    size          BIGINT NOT NULL,
    root_hash     TEXT NOT NULL,
    integrated_at BIGINT NOT NULL
);

-- Every checkpoint issued, as served (a C2SP signed note), with the witnesses' cosignatures added as they
-- come. One per tree size: a second note of a size already signed would be a fork.
CREATE TABLE tlog_checkpoints (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    tree_size    BIGINT NOT NULL,
    root_hash    TEXT NOT NULL,
    note         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, tree_size)
);
