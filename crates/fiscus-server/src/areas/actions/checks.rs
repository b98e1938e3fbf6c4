use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::checks::CheckRequest;
use fiscus_domain::actions::state::{ControlState, Event};
use fiscus_domain::api::actions::CheckVersionView;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::evidence::seal;
use fiscus_store::actions::CheckRow;
use serde_json::{Value, json};

use super::service::{self, Actor};
use crate::http::ctx::Ctx;
use crate::http::json::ApiJson;
use crate::http::problem::ApiError;
use crate::http::query::ApiPath;
use crate::state::AppState;

pub fn example() -> Value {
    json!({
        "check_key": "sanctions_screening",
        "status": "passed",
        "source_type": "screening_report",
        "source_reference": "screening://runs/2026-11-21/42",
        "source_hash": "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
        "metrics": [{ "name": "matches", "value": 0 }],
        "metadata": [{ "provider": "internal" }]
    })
}

/// Records a new version of a pre-trade control check. Earlier versions are kept; a new version on an
/// approved action invalidates the approval, which must then be given again on the new evidence.
#[utoipa::path(
    post,
    path = "/api/v2/actions/investment-execution/{uid}/checks",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    request_body(content = CheckRequest, example = json!(example())),
    responses(
        (status = 200, description = "New version recorded", body = CheckVersionView),
        (status = 422, description = "Invalid status or missing source evidence; nothing recorded"),
        (status = 404, description = "Not in this workspace")
    )
)]
pub async fn post_check(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<CheckRequest>,
) -> Result<Response, ApiError> {
    let check = body.validate().map_err(|errors| {
        errors.into_iter().fold(ApiError::new(ErrorCode::InvalidRequest), |e, (field, message)| e.field(field, message))
    })?;
    let tenant = ctx.tenant();
    let mut tx = state.store.begin().await?;
    let row = fiscus_store::actions::get_for_decision(&mut tx, tenant, &uid).await?;
    let current = service::parse_state(&row.control_state)?;
    if !matches!(current, ControlState::Draft | ControlState::PendingApproval | ControlState::Approved) {
        return Err(ApiError::new(ErrorCode::ActionClosed)
            .detail(format!("the action is {}; checks can no longer change it", current.as_str())));
    }
    let now = now_micros();
    let version = fiscus_store::actions::next_check_version(&mut tx, tenant, &uid, &check.check_key).await?;
    let recorded_by = ctx.principal.application_id.clone();
    let check_hash = seal(&check.payload(&uid, version, &recorded_by, &rfc3339(now)))
        .map_err(|_| ApiError::invalid_request("metrics", "numbers must be finite"))?;
    let check_row = CheckRow {
        id: fiscus_domain::ids::new_id("chk"),
        check_key: check.check_key.clone(),
        version,
        status: check.status.as_str().into(),
        source_type: check.source_type.clone(),
        source_reference: check.source_reference.clone(),
        source_hash: check.source_hash.clone(),
        metrics: Value::Array(check.metrics.clone()).to_string(),
        metadata: Value::Array(check.metadata.clone()).to_string(),
        check_hash: check_hash.clone(),
        recorded_by: recorded_by.clone(),
        created_at: now,
    };
    fiscus_store::actions::insert_check(&mut tx, tenant, &uid, &check_row).await?;
    fiscus_store::actions::enqueue_event(
        &mut tx,
        tenant,
        "action.check_recorded",
        &uid,
        &json!({ "action_id": uid, "check_key": check.check_key, "version": version, "status": check.status.as_str(), "check_hash": check_hash }),
        now,
    )
    .await?;
    let actor = Actor { kind: "application", id: &recorded_by };
    if current == ControlState::Approved {
        // The approval covered the previous evidence; it no longer covers this action.
        let next = current.on(Event::ApprovalInvalidated).map_err(|_| ApiError::internal())?;
        let invalidated = fiscus_store::actions::invalidate_approvals(&mut tx, tenant, &uid, now).await?;
        service::record_transition(
            &mut tx,
            tenant,
            &uid,
            Some(current),
            next,
            "action.approval_invalidated",
            &actor,
            json!({ "check_key": check.check_key, "version": version, "approvals_invalidated": invalidated }),
        )
        .await?;
    }
    ctx.audit(&mut tx, Some(&uid), json!({ "check_key": check.check_key, "version": version, "status": check.status.as_str(), "check_hash": check_hash })).await?;
    let view = service::check_view(&check_row)?;
    ctx.respond(tx, StatusCode::OK, &view).await
}
