-- Leaves written in batches (issue 33, by measurement). A commit group used to insert one `tlog_leaves` row per
-- leaf, two per keyed write (the record's and its event's), each three b-tree inserts on the path every
-- writer of a workspace serialises on: keyed writes on SQLite ran at 0.71x of the same writes without the
-- log. Now a group inserts one row per workspace (up to 1,024 leaves a row), `tlog_batches`: its leaves, from
-- `first_leaf`, as lines (kind, id and record hash per leaf: the entry without its constant first line;
-- kinds and ids never hold a newline, see `fiscus_domain::tlog::Leaf::entry`).
--
-- `tlog_leaves` stays as the index of leaves by record, which only proofs and bundles read: the integrator
-- fills it in bulk, in the transaction that extends the tiles, so it holds exactly the integrated leaves.
CREATE TABLE tlog_batches (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    first_leaf   BIGINT NOT NULL,
    leaf_count   BIGINT NOT NULL,
    leaves       TEXT NOT NULL,
    PRIMARY KEY (workspace_id, first_leaf)
);

-- Every leaf written before this, a batch of one (the newline inside the literals is the separator, written
-- so because the two backends name the character differently).
INSERT INTO tlog_batches (workspace_id, first_leaf, leaf_count, leaves)
SELECT workspace_id, leaf_index, 1, kind || '
' || record_id || '
' || record_hash || '
'
FROM tlog_leaves;

-- The index holds integrated leaves only; the integrator adds the rest as it reaches them.
DELETE FROM tlog_leaves
WHERE leaf_index >= COALESCE((SELECT t.size FROM tlog_trees t WHERE t.workspace_id = tlog_leaves.workspace_id), 0);
