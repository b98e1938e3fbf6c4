//! The shapes of the data plane's sealed tables (datasets, their quality reports, lineage exports) as the
//! seals cover them. Their queries live with the data plane's tables (`fiscus-data-core`, `tables/`); their
//! shapes stay here, beside the migrations that create the tables, because every verifier
//! (`sealed_tables::ALL`) reads them and the store cannot name an area's crate.

use crate::seals::SealedTable;

pub const DATASETS_SEALED: SealedTable = SealedTable {
    table: "datasets",
    columns: &[
        "id",
        "number",
        "workspace_id",
        "kind",
        "name",
        "version",
        "source",
        "licence",
        "provenance",
        "file_name",
        "file_sha256",
        "row_count",
        "skipped_count",
        "period_start",
        "period_end",
        "importer_version",
        "mapping",
        "content_hash",
        "imported_by",
        "created_at",
    ],
};

/// A dataset's quality report, sealed: bound to its dataset's id and number.
pub const DATASET_QUALITY_SEALED: SealedTable =
    SealedTable { table: "dataset_quality", columns: &["dataset_id", "workspace_id", "dataset_number", "report"] };

pub const LINEAGE_EXPORTS_SEALED: SealedTable = SealedTable {
    table: "lineage_exports",
    columns: &["id", "workspace_id", "created_by", "event_count", "document", "document_hash", "created_at"],
};
