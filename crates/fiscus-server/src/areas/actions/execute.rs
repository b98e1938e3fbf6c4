use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::delegation::{MachineAuthority, Terms, budget_allows, check_authority, standing};
use fiscus_domain::actions::envelope::{ActionKind, ExecutionMode, RiskTier};
use fiscus_domain::actions::gates::{GateFacts, evaluate};
use fiscus_domain::actions::state::{ControlState, Event};
use fiscus_domain::api::actions::ExecutionAccepted;
use fiscus_domain::clock::{now_micros, utc_day};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use serde::Deserialize;
use serde_json::json;

use super::service::{self, Actor, Loaded};
use crate::http::ctx::Ctx;
use crate::http::json::OptionalJson;
use crate::http::problem::ApiError;
use crate::http::query::ApiPath;
use crate::state::AppState;

/// The optional body of an execution request: machine authority evidence, required for
/// `machine_delegated` actions.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecuteRequest {
    #[serde(default)]
    pub machine_authority: Option<MachineAuthority>,
}

/// Requests execution of an authorised action (application route).
#[utoipa::path(
    post,
    path = "/api/v2/actions/{uid}/execute",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    request_body(content = Option<ExecuteRequest>, description = "Optional; machine authority evidence for machine-delegated actions", example = json!({})),
    responses(
        (status = 200, description = "Execution request accepted; completion comes with reconciliation", body = ExecutionAccepted),
        (status = 422, description = "Not authorised or a control gate failed; `failed_gates` names each"),
        (status = 404, description = "Not in this workspace")
    )
)]
pub async fn post_execute(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    OptionalJson(body): OptionalJson<ExecuteRequest>,
) -> Result<Response, ApiError> {
    execute(ctx, state, uid, body.unwrap_or_default()).await
}

/// Requests execution of an authorised action (agent gateway route).
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/actions/{uid}/execute",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    request_body(content = Option<ExecuteRequest>, description = "Optional; machine authority evidence for machine-delegated actions", example = json!({})),
    responses(
        (status = 200, description = "Execution request accepted; completion comes with reconciliation", body = ExecutionAccepted),
        (status = 422, description = "Not authorised or a control gate failed; `failed_gates` names each"),
        (status = 404, description = "Not in this workspace")
    )
)]
pub async fn post_agent_execute(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    OptionalJson(body): OptionalJson<ExecuteRequest>,
) -> Result<Response, ApiError> {
    execute(ctx, state, uid, body.unwrap_or_default()).await
}

/// The facts of a machine-delegated execution: each gate's verdict, and the reservation to make if all pass.
struct DelegatedFacts {
    delegation: Result<(), String>,
    authority: Result<(), String>,
    budget: Result<(), String>,
    reservation: Option<(String, String, String)>,
}

/// Loads and locks the delegation, checks the evidence and the budgets. Nothing here writes except the
/// nonce, which is spent even when the request is refused, so signed evidence is never usable twice.
async fn delegated_facts(
    tx: &mut WriteTx,
    tenant: &Tenant,
    loaded: &Loaded,
    authority: Option<&MachineAuthority>,
    now: i64,
) -> Result<DelegatedFacts, ApiError> {
    let row = &loaded.row;
    let refused = |reason: &str| Err::<(), String>(reason.to_string());
    let Some(delegation_id) = row.delegation_id.as_deref() else {
        return Ok(DelegatedFacts {
            delegation: refused("no delegation"),
            authority: refused("no delegation"),
            budget: refused("no delegation"),
            reservation: None,
        });
    };
    let delegation = match fiscus_store::delegations::lock_delegation(tx, tenant, delegation_id).await {
        Ok(d) => d,
        Err(fiscus_store::StoreError::NotFound) => {
            let no = "the delegation does not exist in this workspace";
            return Ok(DelegatedFacts {
                delegation: refused(no),
                authority: refused(no),
                budget: refused(no),
                reservation: None,
            });
        }
        Err(e) => return Err(e.into()),
    };
    let identity = fiscus_store::delegations::get_identity(tx.conn(), tenant, &delegation.identity_id).await?;
    // The terms and the public key decide whose signature counts and for how much: both must be as sealed.
    let key = tx.seal_key().clone();
    let ws = &tenant.workspace_id;
    fiscus_store::seals::check(tx.conn(), &key, &fiscus_store::seals::DELEGATIONS, ws, "id", &delegation.id).await?;
    fiscus_store::seals::check(tx.conn(), &key, &fiscus_store::seals::MACHINE_IDENTITIES, ws, "id", &identity.id)
        .await?;
    // Every stored value must be one the domain knows: an unknown tier is refused, never read as T1.
    let corrupt = |what: &str| {
        tracing::error!(delegation = %delegation.id, what, "stored delegation value is not what the code expects");
        ApiError::internal()
    };
    let terms = Terms {
        action: ActionKind::parse(&delegation.action_kind).ok_or_else(|| corrupt("action_kind"))?,
        counterparty: delegation.counterparty.clone(),
        connector: delegation.connector.clone(),
        currency: Currency::parse(&delegation.currency).ok_or_else(|| corrupt("currency"))?,
        risk_tier: RiskTier::parse(&delegation.risk_tier).ok_or_else(|| corrupt("risk_tier"))?,
        per_action: delegation.per_action_limit_minor,
        daily: delegation.daily_limit_minor,
        monthly: delegation.monthly_limit_minor,
        expires_at: delegation.expires_at,
    };
    let envelope = loaded.envelope()?;
    let delegation_verdict = standing(&delegation.status, delegation.expires_at, &identity.status, now)
        .and_then(|()| terms.covers(&envelope));
    let authority_verdict = match authority {
        None => Err("machine authority evidence is required".to_string()),
        Some(a) if a.identity_id != identity.id => Err("the evidence is not from the delegated identity".to_string()),
        Some(a) => match check_authority(a, &identity.public_key, &row.envelope_hash, now) {
            Err(reason) => Err(reason),
            Ok(()) => {
                if fiscus_store::delegations::spend_nonce(tx, tenant, &identity.id, &a.nonce, now).await? {
                    Ok(())
                } else {
                    Err("the nonce was used before (replayed evidence)".to_string())
                }
            }
        },
    };
    let day = utc_day(now);
    let month = day[..7].to_string();
    let (used_today, used_month) = fiscus_store::delegations::used(tx, &delegation.id, &day, &month).await?;
    let budget_verdict = budget_allows(row.amount_minor, &terms, used_today, used_month);
    Ok(DelegatedFacts {
        delegation: delegation_verdict,
        authority: authority_verdict,
        budget: budget_verdict,
        reservation: Some((delegation.id, day, month)),
    })
}

/// Every gate is evaluated inside the transaction that would record the acceptance, on the locked action
/// (and locked delegation), so nothing can change between the decision and its effect. Any error refuses.
async fn execute(ctx: Ctx, state: AppState, uid: String, body: ExecuteRequest) -> Result<Response, ApiError> {
    let tenant = ctx.tenant().clone();
    let now = now_micros();
    let mut tx = state.store.begin().await?;
    let row = fiscus_store::actions::get_for_decision(&mut tx, &tenant, &uid).await?;
    let loaded = service::load(tx.conn(), &tenant, row).await?;
    loaded.verify_sealed(&mut tx, &tenant).await?;
    let workspace = fiscus_store::workspaces::get(tx.conn(), &tenant.workspace_id).await?;
    let required = loaded.required_checks()?;
    let mode = loaded.execution_mode()?;
    let quorum = service::quorum(&state.settings, service::risk_tier(&loaded.row)?);
    // The sandbox connector serves the sandbox; production connectors are configured, never simulated, and
    // none is configured yet, so production execution fails this gate.
    let connector_available =
        crate::workers::connector::connector_for(&loaded.row.connector, tenant.environment).is_some();
    let delegated = match mode {
        ExecutionMode::MachineDelegated => {
            Some(delegated_facts(&mut tx, &tenant, &loaded, body.machine_authority.as_ref(), now).await?)
        }
        ExecutionMode::HumanApproved => None,
    };
    let failed = evaluate(&GateFacts {
        state: loaded.state,
        quorum_met_on_current: loaded.current_approvals() >= quorum,
        required_checks: &required,
        latest_checks: &loaded.latest,
        environment: tenant.environment,
        production_access: workspace.production_access(),
        connector_available,
        execution_mode: mode,
        delegation: delegated.as_ref().map(|d| d.delegation.clone()),
        machine_authority: delegated.as_ref().map(|d| d.authority.clone()),
        budget: delegated.as_ref().map(|d| d.budget.clone()),
    });
    if !failed.is_empty() {
        // Keep the spent nonce (a refusal must not make signed evidence reusable); change nothing else.
        let names: Vec<&str> = failed.iter().map(|g| g.gate.as_str()).collect();
        let refusal = ApiError::new(ErrorCode::ExecutionRefused)
            .detail(format!("failed gates: {}", names.join(", ")))
            .with("failed_gates", serde_json::to_value(&failed).unwrap_or_default());
        if delegated.is_some() {
            tx.commit().await?;
        }
        return Err(refusal);
    }
    let event = match mode {
        ExecutionMode::HumanApproved => Event::ExecutionAccepted,
        ExecutionMode::MachineDelegated => Event::DelegatedExecutionAccepted,
    };
    let next = loaded.state.on(event).map_err(|_| ApiError::new(ErrorCode::ExecutionRefused))?;
    if let Some((delegation_id, day, month)) = delegated.as_ref().and_then(|d| d.reservation.clone()) {
        fiscus_store::delegations::reserve(
            &mut tx,
            &tenant,
            &delegation_id,
            &uid,
            loaded.row.amount_minor,
            &day,
            &month,
            now,
        )
        .await?;
    }
    let actor = Actor { kind: "application", id: &ctx.principal.application_id };
    service::record_transition(
        &mut tx,
        &tenant,
        &uid,
        Some(loaded.state),
        next,
        "action.executed",
        &actor,
        json!({ "envelope_hash": loaded.row.envelope_hash, "check_set_hash": loaded.check_set_hash, "connector": loaded.row.connector, "execution_mode": mode.as_str() }),
    )
    .await?;
    fiscus_store::settlement::enqueue(&mut tx, &tenant, &uid, &loaded.row.connector, now).await?;
    ctx.audit(
        &mut tx,
        Some(&uid),
        json!({ "accepted": true, "envelope_hash": loaded.row.envelope_hash, "check_set_hash": loaded.check_set_hash }),
    )
    .await?;
    let body = ExecutionAccepted {
        object: "execution_request".into(),
        action_id: uid.clone(),
        accepted: true,
        control_state: ControlState::Executing,
        completion: "the action completes when its settlement is reconciled".into(),
    };
    ctx.respond(tx, StatusCode::OK, &body).await
}
