-- A dataset's quality report (issue 34): what its rows hold that a computation will meet (gaps against the
-- frequency's calendar, zero and negative values, stale runs, outliers), written in the import's transaction
-- as JSON (`fiscus_domain::data::quality::QualityReport`). Derived from the sealed rows, so it is not sealed
-- itself: it can be recomputed from them at any time. Datasets imported before it have no row here.
CREATE TABLE dataset_quality (
    workspace_id   TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    report         TEXT NOT NULL,
    PRIMARY KEY (workspace_id, dataset_number)
);
