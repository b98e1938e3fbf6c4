//! Lineage exports in OpenLineage's JSON event format (RunEvent, spec 2-0-2), so lineage tools (Marquez,
//! DataHub, OpenMetadata…) can read how the workspace's data came to be: one `COMPLETE` run per dataset
//! import (input: the file, by name and SHA-256; output: the dataset, versioned by its content hash), and
//! one per prices dataset for the features computed from it. The export is sealed and kept.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_data_core::rules::Kind;
use fiscus_data_core::rules::features::FEATURES;
use fiscus_data_core::tables::datasets::Dataset;
use fiscus_data_core::tables::lineage::LineageExport;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::error_code::ErrorCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;

const SPEC: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent";
const VERSION_FACET: &str =
    "https://openlineage.io/spec/facets/1-0-1/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet";
const SOURCE_FACET: &str =
    "https://openlineage.io/spec/facets/1-0-1/DatasourceDatasetFacet.json#/$defs/DatasourceDatasetFacet";
const JOB_TYPE_FACET: &str = "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet";
const PRODUCER: &str = concat!("urn:fiscus:server:", env!("CARGO_PKG_VERSION"));

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LineageExportRequest {
    /// Only these datasets (by integer id) and what flows from them; every dataset of the workspace when
    /// omitted.
    #[schema(max_items = 1000, example = json!([2, 7]))]
    pub datasets: Option<Vec<i64>>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct LineageExportView {
    /// Always `lineage_export`.
    pub object: &'static str,
    #[schema(example = "lex_01M876Y0Q8E1VN7S3GZ4WDXK2P")]
    pub id: String,
    /// `openlineage-2-0-2`: `events` are OpenLineage RunEvents.
    pub format: &'static str,
    pub created_by: String,
    pub created_at: String,
    pub event_count: i64,
    /// `sha256:` of the RFC 8785 form of `events`.
    pub document_hash: String,
    #[schema(value_type = Vec<Object>)]
    pub events: Value,
}

fn view(e: &LineageExport) -> LineageExportView {
    LineageExportView {
        object: "lineage_export",
        id: e.id.clone(),
        format: "openlineage-2-0-2",
        created_by: e.created_by.label(),
        created_at: rfc3339(e.created_at),
        event_count: e.event_count,
        document_hash: e.document_hash.clone(),
        events: serde_json::from_str(&e.document).unwrap_or(Value::Array(Vec::new())),
    }
}

/// A UUID (as OpenLineage's `runId` requires) derived from a stable name, so the same run always has the
/// same id across exports: the first 16 bytes of SHA-256, marked version 8 (RFC 9562, custom) and variant 1.
fn run_id(name: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(name.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(b).hyphenated().to_string()
}

fn dataset_node(namespace: &str, d: &Dataset) -> Value {
    json!({
        "namespace": namespace,
        "name": format!("datasets/{}", d.number),
        "facets": {
            "version": { "_producer": PRODUCER, "_schemaURL": VERSION_FACET, "datasetVersion": d.content_hash },
            "dataSource": { "_producer": PRODUCER, "_schemaURL": SOURCE_FACET, "name": d.source, "uri": format!("{namespace}/datasets/{}", d.number) },
        }
    })
}

fn job_type(kind: &str) -> Value {
    json!({ "_producer": PRODUCER, "_schemaURL": JOB_TYPE_FACET, "processingType": "BATCH", "integration": "FISCUS", "jobType": kind })
}

/// The RunEvents of the given datasets (imports) and of the features computed from their prices.
pub fn events(workspace_id: &str, datasets: &[Dataset]) -> Vec<Value> {
    let namespace = format!("fiscus://{workspace_id}");
    let mut out = Vec::new();
    for d in datasets {
        let job = format!("import.{}.{}", d.kind.as_str(), d.name);
        out.push(json!({
            "eventType": "COMPLETE",
            "eventTime": rfc3339(d.created_at),
            "run": { "runId": run_id(&format!("{workspace_id}/{}", d.id)), "facets": {} },
            "job": { "namespace": namespace, "name": job, "facets": { "jobType": job_type("IMPORT") } },
            "inputs": [{ "namespace": "file", "name": d.file_name, "facets": {
                "version": { "_producer": PRODUCER, "_schemaURL": VERSION_FACET, "datasetVersion": d.file_sha256 }
            } }],
            "outputs": [dataset_node(&namespace, d)],
            "producer": PRODUCER,
            "schemaURL": SPEC,
        }));
        if d.kind == Kind::Prices {
            out.push(json!({
                "eventType": "COMPLETE",
                "eventTime": rfc3339(d.created_at),
                "run": { "runId": run_id(&format!("{workspace_id}/{}/features", d.id)), "facets": {} },
                "job": { "namespace": namespace, "name": "quant.features", "facets": { "jobType": job_type("FEATURES") } },
                "inputs": [dataset_node(&namespace, d)],
                "outputs": FEATURES.iter().map(|f| json!({
                    "namespace": namespace,
                    "name": format!("features/{}/datasets/{}", f.key, d.number),
                    "facets": {}
                })).collect::<Vec<_>>(),
                "producer": PRODUCER,
                "schemaURL": SPEC,
            }));
        }
    }
    out
}

/// Exports the lineage of the workspace's datasets (or of those named) as OpenLineage RunEvents.
///
/// One `COMPLETE` RunEvent per dataset import (input: the file by name and SHA-256; output: the dataset,
/// versioned by its content hash) and one per prices dataset for the features computed from it; a named
/// dataset not in this workspace is 409 `reference_not_found`. The events' SHA-256 is `document_hash`; the
/// export is stored sealed with an audit event, and `GET …/lineage-exports/{uid}` returns it again. Needs `infrastructure:lineage`.
/// Fiscus sends nothing to a lineage tool (the caller takes the document), and no dataset is changed.
#[utoipa::path(
    post,
    path = "/api/v2/infrastructure/lineage-exports",
    request_body(content = LineageExportRequest, example = json!({})),
    responses(
        (status = 201, description = "The sealed export", body = LineageExportView),
        (status = 404, description = "A named dataset is not in this workspace")
    )
)]
pub async fn post_lineage_export(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<LineageExportRequest>,
) -> Result<Response, ApiError> {
    let ws = ctx.principal.workspace_id().to_string();
    let mut tx = state.store.begin().await?;
    let key = tx.seal_key().clone();
    let all = fiscus_data_core::tables::datasets::all(tx.conn(), &key, &ws).await?;
    let chosen: Vec<Dataset> = match &body.datasets {
        None => all,
        Some(ids) => {
            if ids.len() > 1000 {
                return Err(ApiError::invalid_fields(vec![("datasets", "at most 1000 ids".to_string())]));
            }
            if let Some(missing) = ids.iter().find(|n| !all.iter().any(|d| d.number == **n)) {
                let why = format!("no dataset {missing} in this workspace");
                return Err(ApiError::new(ErrorCode::ReferenceNotFound).detail(why.clone()).field("datasets", why));
            }
            all.into_iter().filter(|d| ids.contains(&d.number)).collect()
        }
    };
    let events = Value::Array(events(&ws, &chosen));
    let document_hash = fiscus_domain::evidence::seal(&events).map_err(|_| ApiError::internal())?;
    let export = LineageExport {
        id: fiscus_domain::ids::new_id("lex"),
        created_by: fiscus_domain::actor::Actor::application(ctx.principal.application_id.clone()),
        event_count: events.as_array().map_or(0, |a| a.len() as i64),
        document: events.to_string(),
        document_hash,
        created_at: now_micros(),
    };
    fiscus_data_core::tables::lineage::insert(&mut tx, &ws, &export).await?;
    ctx.audit(
        &mut tx,
        Some(&export.id),
        json!({ "events": export.event_count, "document_hash": export.document_hash }),
    )
    .await?;
    ctx.respond(tx, StatusCode::CREATED, &view(&export)).await
}

/// A lineage export of this workspace.
///
/// The export as it was made, its seal checked: the events, their count, `document_hash`, who created it and
/// when. Needs `infrastructure:lineage`; an export of another workspace is 404. A read: nothing is
/// recomputed, so datasets imported since the export are not in it.
#[utoipa::path(
    get,
    path = "/api/v2/infrastructure/lineage-exports/{uid}",
    params(("uid" = String, Path, description = "The export's id (lex_…)")),
    responses((status = 200, description = "The export", body = LineageExportView), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_lineage_export(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<LineageExportView>, ApiError> {
    if !fiscus_domain::ids::is_id_of("lex", &uid) {
        return Err(ApiError::not_found().detail("no such lineage export"));
    }
    let mut conn = state.store.read().await?;
    let e =
        fiscus_data_core::tables::lineage::get(&mut conn, state.store.seal_key(), ctx.principal.workspace_id(), &uid)
            .await?;
    Ok(Json(view(&e)))
}
