//! Reading Financial Actions: the list, one action with its envelope and state, its check versions, and the
//! agent-execution gateway's view of an action.

use crate::rules::transitions::ReconciliationStatus;
use crate::views::{ActionView, AgentActionView, CheckHistoryView, ExpectedView, ReconciliationView, SettlementView};
use axum::Json;
use axum::extract::State;
use fiscus_domain::actions::ControlState;
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::list::ListPage;

use crate::steps::{Loaded, loaded};
use fiscus_domain::pagination::PageParams;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ListParams};

/// Lists the Financial Actions of this workspace and environment, oldest first.
///
/// Every action of the caller's workspace and environment, whichever application proposed it, optionally only
/// those in one `control_state` (an unknown state is 422 `invalid_parameter`), each with its envelope, latest
/// check versions and approval count (history only in the single read). Each is checked against its seal and its
/// envelope hash recomputed before it is shown (500 `integrity_failure` otherwise). Needs `actions:read`; changes
/// nothing.
#[utoipa::path(
    get,
    path = "/api/v2/actions",
    params(
        PageParams,
        ("control_state" = Option<ControlState>, Query, description = "Only actions in this state"),
    ),
    responses((status = 200, description = "A page of actions", body = ListPage<ActionView>))
)]
pub async fn list_actions(
    ctx: Ctx,
    State(state): State<AppState>,
    params: ListParams,
) -> Result<Json<ListPage<ActionView>>, ApiError> {
    params.only(&["control_state"])?;
    let filter =
        match params.rest.get("control_state") {
            Some(s) => Some(ControlState::parse(s).ok_or_else(|| {
                ApiError::new(ErrorCode::InvalidParameter).field("control_state", "not a control state")
            })?),
            None => None,
        };
    let mut conn = state.store.read().await?;
    let rows = crate::tables::actions::list(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        filter,
        params.page.after_id.as_deref(),
        params.page.limit,
    )
    .await?;
    let page = ListPage::from_overfetch(rows, params.page.limit, |r| r.id.clone());
    let loaded = Loaded::load_page(&mut conn, state.store.seal_key(), ctx.tenant(), page.data).await?;
    let data = loaded.iter().map(|l| l.view(&state.settings, None)).collect();
    Ok(Json(ListPage { object: page.object, data, has_more: page.has_more, next_after_id: page.next_after_id }))
}

/// One Financial Action with its envelope, hash, latest checks, approvals and history.
///
/// The envelope and `envelope_hash`, the latest version of each check, the `check_set_hash` approvals cover, the
/// approvals that cover them against the tier's quorum, and the state history, oldest first. The action is checked
/// against its seal and its envelope hash recomputed before it is shown (500 `integrity_failure` otherwise). Needs
/// `actions:read`; reading it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/actions/{uid}",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    responses((status = 200, description = "The action", body = ActionView), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_action(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ActionView>, ApiError> {
    let mut conn = state.store.read().await?;
    let row = crate::tables::actions::get(&mut conn, ctx.tenant(), &uid).await?;
    let history = loaded::history(&mut conn, ctx.tenant(), &uid).await?;
    Ok(Json(
        Loaded::load(&mut conn, state.store.seal_key(), ctx.tenant(), row).await?.view(&state.settings, Some(history)),
    ))
}

/// Every version of every pre-trade check of one Financial Action, with its hashes.
///
/// Recording a check appends a version and keeps the earlier ones (the seed: "each recording appends a new
/// version; earlier versions are kept"); this read returns all of them, ordered by check key and then
/// version, each with its `check_hash`, and the `check_set_hash` that approvals cover now (over the
/// latest version of each check). Every version is checked against its seal before it is shown; a version
/// changed outside Fiscus refuses the read (500 `integrity_failure`). Needs `actions:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/actions/{uid}/checks",
    params(("uid" = String, Path, description = "Action id (act_…)", example = "act_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "Every check version, by key then version", body = CheckHistoryView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_check_versions(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<CheckHistoryView>, ApiError> {
    let mut conn = state.store.read().await?;
    let row = crate::tables::actions::get(&mut conn, ctx.tenant(), &uid).await?;
    let loaded = Loaded::load(&mut conn, state.store.seal_key(), ctx.tenant(), row).await?;
    Ok(Json(CheckHistoryView {
        object: "pre_trade_check_history".into(),
        action_id: loaded.action.id.clone(),
        check_set_hash: loaded.check_set_hash.clone(),
        data: loaded.checks.iter().map(loaded::check_view).collect(),
    }))
}

/// The action's status as the agent gateway shows it: never counterparty, connector or metadata details.
///
/// Control state, reconciliation status, kind, amount, currency, reference, `envelope_hash` and the approval count
/// of any action of the caller's workspace and environment, after the same seal checks as `GET /actions/{uid}`.
/// Needs `agent:execution:read`. It never returns checks, history or approvers, and changes nothing beyond the
/// request evidence every gateway request leaves.
#[utoipa::path(
    get,
    path = "/api/v2/agent-execution/actions/{uid}",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    responses((status = 200, description = "Action status without transaction credentials", body = AgentActionView), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_agent_action(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<AgentActionView>, ApiError> {
    let mut conn = state.store.read().await?;
    let row = crate::tables::actions::get(&mut conn, ctx.tenant(), &uid).await?;
    Ok(Json(Loaded::load(&mut conn, state.store.seal_key(), ctx.tenant(), row).await?.agent_view(&state.settings)))
}

/// Settlement records of an action and its reconciliation state. Acceptance and the connector's
/// acknowledgement are not completion; a matched settlement is.
///
/// What a settlement must match (`reference`, `amount_minor`, `currency`), each sealed settlement record with its
/// `record_hash` and reconciliation, the mismatches as `exceptions`, and `completed`, true only once the action is
/// `completed`. Needs `agent:execution:read`. A read: it records no settlement, resolves no exception and moves no
/// money.
#[utoipa::path(
    get,
    path = "/api/v2/agent-execution/actions/{uid}/reconciliation",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    responses((status = 200, description = "Settlement and reconciliation state", body = ReconciliationView), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_reconciliation(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ReconciliationView>, ApiError> {
    let mut conn = state.store.read().await?;
    let row = crate::tables::actions::get(&mut conn, ctx.tenant(), &uid).await?;
    let row = Loaded::load(&mut conn, state.store.seal_key(), ctx.tenant(), row).await?.action;
    let control_state = row.state;
    let records = crate::tables::settlement::records(&mut conn, state.store.seal_key(), ctx.tenant(), &uid).await?;
    let settlements: Vec<SettlementView> = records
        .into_iter()
        .map(|r| SettlementView {
            object: "settlement_record".into(),
            mismatches: r.mismatches,
            received_at: fiscus_domain::clock::rfc3339(r.received_at),
            id: r.id,
            kind: r.kind,
            connector: r.connector,
            connector_reference: r.connector_reference,
            reference: r.reference,
            amount_minor: r.amount_minor,
            currency: r.currency,
            reconciliation: r.reconciliation,
            record_hash: r.record_hash,
        })
        .collect();
    Ok(Json(ReconciliationView {
        object: "reconciliation".into(),
        action_id: uid,
        control_state,
        reconciliation_status: ReconciliationStatus::of(control_state),
        expected: ExpectedView {
            reference: row.envelope.reference,
            amount_minor: row.envelope.amount_minor,
            currency: row.envelope.currency.code().to_string(),
        },
        exceptions: settlements
            .iter()
            .filter(|s| s.reconciliation == crate::rules::settlement::Reconciliation::Mismatch)
            .cloned()
            .collect(),
        settlements,
        completed: control_state == ControlState::Completed,
    }))
}
