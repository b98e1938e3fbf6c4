//! The workflow studio: writing a definition as a new workflow, or as the next version of one.

use crate::rules::workflows::definition::Definition;
use crate::rules::workflows::records::{VersionBody, WorkflowBody};
use crate::tables::workflows::{self as store, Version, Workflow};
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use fiscus_store::sealed_records::Record;
use serde::Deserialize;
use serde_json::json;

use super::{canonical, invalid_definition};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// A new version: of a new workflow (`name`) or of an existing one (`workflow_uid`).
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CreateWorkflowVersion)]
pub struct CreateVersion {
    /// The workflow this is the next version of; without it, a new workflow named `name` is created.
    #[serde(default)]
    #[schema(pattern = "^wfl_[0-9A-HJKMNP-TV-Z]{26}$", example = "wfl_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub workflow_uid: Option<String>,
    /// The new workflow's name (required without `workflow_uid`, refused with it).
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 200>>, inline, example = "Daily VaR watch")]
    pub name: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Prose<2000>>, inline)]
    pub description: Option<String>,
    #[serde(deserialize_with = "fiscus_domain::api::objects::object")]
    pub definition: Definition,
}

/// Checks and stores a definition as a version; a step breaking a rule the schema states is 422, and steps
/// that do not fit together (a cyclic graph, a missing dependency, a step reading what it may not) are 409
/// `conflict`, each naming the step and field.
pub async fn create(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    req: CreateVersion,
) -> Result<(Workflow, Version), Failure> {
    req.definition.check_fields().map_err(invalid_definition)?;
    req.definition.check_graph().map_err(super::unfit_graph)?;
    if req.description.as_deref().is_some_and(|d| !fiscus_domain::fields::prose_ok(d, 2000)) {
        return Err(Failure::Invalid(vec![("description", "at most 2000 characters, no control characters".into())]));
    }
    let definition_hash = canonical("definition", &req.definition)?.1;
    let now = now_micros();
    let by = caller.actor.clone();
    let key = services.store.seal_key();
    let (workflow, fresh, number) = match (&req.workflow_uid, &req.name) {
        (Some(_), Some(_)) => {
            return Err(Failure::Invalid(vec![("name", "give a name only for a new workflow".into())]));
        }
        (None, None) => return Err(Failure::Invalid(vec![("name", "a new workflow needs a name".into())])),
        (Some(id), None) => {
            let not_here = || Failure::missing("workflow_uid", format!("no workflow `{id}` here"));
            if !fiscus_domain::ids::is_id_of("wfl", id) {
                return Err(not_here());
            }
            let mut conn = services.store.read().await?;
            let w = match store::get_workflow(&mut conn, key, tenant, id).await {
                Err(StoreError::NotFound) => return Err(not_here()),
                other => other?,
            };
            let versions = store::versions_of(&mut conn, key, tenant, id).await?;
            let next = versions.last().map_or(1, |v| v.body.version + 1);
            (w, false, next)
        }
        (None, Some(name)) => {
            if !fiscus_domain::fields::text_ok(name, 1, 200) {
                return Err(Failure::Invalid(vec![("name", "1 to 200 characters of text".into())]));
            }
            let body = WorkflowBody { name: name.clone(), description: req.description.clone(), library: None };
            let (json, hash) = canonical("workflow", &body)?;
            (
                Record {
                    id: new_id("wfl"),
                    body,
                    body_json: json,
                    content_hash: hash,
                    created_by: by.clone(),
                    created_at: now,
                },
                true,
                1,
            )
        }
    };
    let vbody = VersionBody {
        workflow_id: workflow.id.clone(),
        version: number,
        definition: req.definition,
        definition_hash,
        library: None,
    };
    let (json, hash) = canonical("workflow version", &vbody)?;
    let version =
        Record { id: new_id("wfv"), body: vbody, body_json: json, content_hash: hash, created_by: by, created_at: now };
    let mut tx = services.store.begin().await?;
    let written = if fresh {
        store::insert_workflow(&mut tx, tenant, &workflow, &version).await
    } else {
        store::insert_version(&mut tx, tenant, &version).await
    };
    match written {
        Err(StoreError::Conflict(_)) => {
            return Err(Failure::refused(
                ErrorCode::Conflict,
                "the name is taken, or another version was written meanwhile",
            ));
        }
        other => other?,
    }
    let details =
        json!({"workflow_uid": workflow.id, "version": number, "definition_hash": version.body.definition_hash});
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::WorkflowVersionCreated, &version.id, details, now))
        .await?;
    tx.commit().await?;
    Ok((workflow, version))
}

/// A version with its workflow.
pub async fn load(services: &Services, tenant: &Tenant, id: &str) -> Result<(Workflow, Version), Failure> {
    let version = super::load_version(services, tenant, id).await?;
    let mut conn = services.store.read().await?;
    let workflow = store::get_workflow(&mut conn, services.store.seal_key(), tenant, &version.body.workflow_id).await?;
    Ok((workflow, version))
}
