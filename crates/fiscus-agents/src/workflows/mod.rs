//! Workflows, the application layer: library installs, studio versions, runs on the durable runtime,
//! people's reviews, and validation campaigns. Routes (`areas/workflows/`), the console
//! (`console/workflow_reviews.rs`) and the worker (`workers/workflows.rs`) only call these functions.
//!
//! Rules are the domain's (`fiscus_domain::workflows`): a definition's graph, the plan of what runs next,
//! which steps a campaign refuses. What happens here is reading the pinned data, computing a step with the
//! engine, and writing each step's outcome, the run's move and its event in one transaction.

pub mod campaigns;
pub mod gateway;
pub mod library;
pub mod runs;
pub mod runtime;
pub mod steps;
pub mod studio;
pub mod value;

use crate::rules::workflows::definition::Definition;
use crate::tables::workflows::{self as store, Version};
use fiscus_domain::error_code::ErrorCode;
use serde_json::{Value, json};

use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;

pub use fiscus_kernel::governed::{canonical, new_record};

/// The version, its seal checked; another tenant's is `NotFound`.
pub async fn load_version(services: &Services, tenant: &Tenant, id: &str) -> Result<Version, Failure> {
    if !fiscus_domain::ids::is_id_of("wfv", id) {
        return Err(Failure::NotFound);
    }
    let mut conn = services.store.read().await?;
    Ok(store::get_version(&mut conn, services.store.seal_key(), tenant, id).await?)
}

/// A definition as stored must still pass its checks (it did when it was stored; a stored one that no
/// longer parses or passes is corrupt, never run).
pub fn checked(definition: &Definition) -> Result<(), Failure> {
    definition.check().map_err(|p| Failure::internal(format!("a stored definition fails its checks: {p:?}")))
}

/// 422 `invalid_request` from a definition's problems.
pub fn invalid_definition(problems: Vec<crate::rules::workflows::definition::Invalid>) -> Failure {
    Failure::Invalid(problems.into_iter().map(|p| ("definition", format!("{}: {}", p.field, p.message))).collect())
}

/// 409 `conflict` naming each way a definition's steps do not fit together (ids, dependencies, cycles,
/// reads): rules across steps that no schema states, so not 422.
pub fn unfit_graph(problems: Vec<crate::rules::workflows::definition::Invalid>) -> Failure {
    let detail = format!("the definition's steps do not fit together: {}", problems[0].message);
    let errors: Vec<Value> = problems
        .into_iter()
        .map(|p| json!({ "field": "definition", "message": format!("{}: {}", p.field, p.message) }))
        .collect();
    Failure::refused_with(ErrorCode::Conflict, detail, vec![("errors", Value::Array(errors))])
}

/// 422 `step_kind_unavailable` naming the connected steps of a definition, if it has any.
pub fn runnable(definition: &Definition) -> Result<(), Failure> {
    let connected = definition.connected_steps();
    if connected.is_empty() {
        return Ok(());
    }
    let steps: Vec<_> = connected.iter().map(|(id, kind)| json!({"step": id, "kind": kind.as_str()})).collect();
    Err(Failure::refused_with(
        ErrorCode::StepKindUnavailable,
        format!(
            "this runtime runs local steps only; {} step(s) reach outside the run: {}",
            connected.len(),
            connected.iter().map(|(id, k)| format!("{id} ({})", k.as_str())).collect::<Vec<_>>().join(", ")
        ),
        vec![("steps", json!(steps))],
    ))
}
