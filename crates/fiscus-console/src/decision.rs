//! One person's decision on one action, from its page: the form carries the envelope and check-set hashes the
//! page showed, and `fiscus_actions::steps::decide` decides exactly those (anything changed since is refused,
//! never decided on what the person did not see).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_actions::rules::approval::Decision;
use fiscus_actions::steps::decide::{Seen, decide};
use fiscus_domain::credentials::Environment;
use fiscus_domain::tenancy::Tenant;
use fiscus_http::AppState;
use fiscus_kernel::governed::Failure;
use serde::Deserialize;

use super::flash::{self, Notice};
use super::form::ConsoleForm;
use super::html;
use super::session::OperatorSession;

#[derive(Deserialize)]
pub struct DecisionForm {
    csrf: String,
    environment: String,
    decision: String,
    envelope_hash: String,
    check_set_hash: String,
    #[serde(default)]
    reason: Option<String>,
}

pub async fn decision(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    ConsoleForm(form): ConsoleForm<DecisionForm>,
) -> Response {
    if let Err(refused) = op.check_csrf(&form.csrf) {
        return refused;
    }
    let (Some(env), Some(decision)) = (Environment::parse(&form.environment), Decision::parse(&form.decision)) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision.");
    };
    let t = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = async {
        let mut tx = state.store.begin().await?;
        let outcome = decide(
            &mut tx,
            &state.settings,
            &t,
            &op.caller(),
            op.role,
            &id,
            decision,
            &Seen {
                envelope_hash: &form.envelope_hash,
                check_set_hash: &form.check_set_hash,
                batch_id: None,
                reason: form.reason.as_deref(),
            },
        )
        .await?;
        tx.commit().await?;
        Ok::<_, Failure>(outcome)
    }
    .await;
    match result {
        Ok(_) => flash::redirect(&format!("/console/actions/{id}?environment={}", env.as_str()), Notice::Decided, &id),
        Err(Failure::Decision(r)) => html::error_page(StatusCode::CONFLICT, "Decision refused", &r.to_string()),
        // Another workspace's action and an unknown one look the same: not found, never a hint.
        Err(Failure::NotFound) => html::error_page(
            StatusCode::NOT_FOUND,
            "Not found",
            "There is no such action in this workspace and environment.",
        ),
        Err(e) => {
            tracing::warn!(error = ?e, "a console decision was not recorded");
            html::error_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Decision not recorded",
                "Nothing was decided. Try again from the action's page.",
            )
        }
    }
}
