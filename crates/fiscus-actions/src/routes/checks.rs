//! Pre-trade checks of an investment execution action: each POST a new sealed check version (the check set's
//! hash moves, so an approval given before it goes stale).

use crate::rules::checks::CheckRequest;
use crate::views::CheckVersionView;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use crate::steps::loaded::check_view;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;

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
///
/// `status` must be `passed`, `failed`, `warning` or `pending`, with `source_reference` and a `sha256:`
/// `source_hash` (422 `invalid_request` otherwise). The version, numbered after the last one of its `check_key`,
/// is sealed into `check_hash` while the action is `draft`, `pending_approval` or `approved` (422 `action_closed`
/// after that); an `approved` action goes back to `pending_approval`. Needs `investment:execute`. Recording never
/// approves or executes: the checks gate opens only when each required check's latest version is `passed` and none
/// is `failed`, and earlier versions are never changed.
#[utoipa::path(
    post,
    path = "/api/v2/actions/investment-execution/{uid}/checks",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    request_body(content = CheckRequest, example = json!(example())),
    responses(
        (status = 200, description = "New version recorded", body = CheckVersionView),
        (status = 422, description = "Invalid status or missing source evidence (invalid_request), or the action no longer takes checks (action_closed); nothing recorded"),
        (status = 404, description = "Not in this workspace")
    )
)]
pub async fn post_check(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<CheckRequest>,
) -> Result<Response, ApiError> {
    let check = body.validate().map_err(ApiError::invalid_fields)?;
    let mut tx = state.store.begin().await?;
    let stored = crate::steps::check::record_check(&mut tx, ctx.tenant(), &ctx.caller(), &uid, check).await?;
    ctx.respond(tx, StatusCode::OK, &check_view(&stored)).await
}
