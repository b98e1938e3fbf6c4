//! The library: templates shipped with Fiscus, and installing one into a workspace as a workflow with its
//! first version.

use crate::rules::workflows::library::{self, Template};
use crate::rules::workflows::records::{LibraryOrigin, VersionBody, WorkflowBody};
use crate::tables::workflows::{self as store, Version, Workflow};
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use fiscus_store::sealed_records::Record;
use serde_json::json;

use super::canonical;
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// A template's definition hash (SHA-256 of its RFC 8785 form).
pub fn definition_hash(t: &Template) -> Result<String, Failure> {
    Ok(canonical("template", &t.definition())?.1)
}

/// Installs a template: a workflow named after it, with the template's definition as version 1. A template
/// installed already in this workspace and environment is 409 naming the workflow.
pub async fn install(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    key: &str,
) -> Result<(Workflow, Version), Failure> {
    let template = library::find(key).ok_or(Failure::NotFound)?;
    let origin = LibraryOrigin {
        key: template.key.into(),
        version: template.version,
        definition_hash: definition_hash(template)?,
    };
    let mut conn = services.store.read().await?;
    if let Some(existing) = store::find_installed(&mut conn, services.store.seal_key(), tenant, key).await? {
        return Err(Failure::refused_with(
            ErrorCode::Conflict,
            format!("`{key}` is installed already as {}", existing.id),
            vec![("workflow_uid", json!(existing.id))],
        ));
    }
    drop(conn);
    let now = now_micros();
    let by = caller.actor.clone();
    let body = WorkflowBody {
        name: template.name.to_string(),
        description: Some(template.description.to_string()),
        library: Some(origin.clone()),
    };
    let (json, hash) = canonical("workflow", &body)?;
    let workflow = Record {
        id: new_id("wfl"),
        body,
        body_json: json,
        content_hash: hash,
        created_by: by.clone(),
        created_at: now,
    };
    let vbody = VersionBody {
        workflow_id: workflow.id.clone(),
        version: 1,
        definition: template.definition(),
        definition_hash: origin.definition_hash.clone(),
        library: Some(origin),
    };
    let (json, hash) = canonical("workflow version", &vbody)?;
    let version =
        Record { id: new_id("wfv"), body: vbody, body_json: json, content_hash: hash, created_by: by, created_at: now };
    let mut tx = services.store.begin().await?;
    match store::insert_workflow(&mut tx, tenant, &workflow, &version).await {
        Err(StoreError::Conflict(_)) => {
            return Err(Failure::refused(
                ErrorCode::Conflict,
                format!("a workflow named `{}` exists already", template.name),
            ));
        }
        other => other?,
    }
    let details =
        json!({"library_key": key, "version_uid": version.id, "definition_hash": version.body.definition_hash});
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::WorkflowInstalled, &workflow.id, details, now))
        .await?;
    tx.commit().await?;
    Ok((workflow, version))
}
