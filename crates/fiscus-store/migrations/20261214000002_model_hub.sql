-- The model hub's artifacts in the database (issue 35): content-addressed by workspace and the SHA-256 of
-- their bytes, written in the publication's transaction, so any node verifies what any node published.
-- They were files in one node's data directory (`<data_dir>/model-hub/sha256/…`); a node adopts the files it
-- still has at its start (`fiscus_models::lqm::hub::adopt`), each checked against its name.
CREATE TABLE model_artifacts (
    workspace_id TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    content      BYTEA NOT NULL,
    PRIMARY KEY (workspace_id, sha256)
);
