//! `GET /ai-credits/balance`: the workspace's AI credits granted, consumed and remaining.

use crate::views::CreditBalanceView;
use axum::Json;
use axum::extract::State;

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;

/// The AI credit balance of the caller's workspace and environment, derived from the credits ledger.
///
/// `granted`, `consumed`, `balance` (their difference) and the number of ledger entries. Credits are granted from
/// the `fiscus` command line and refunded when a compute job ends before it ran; compute jobs and agent space runs
/// consume them, and call transcription costs none. Needs `ai:credits:read`; reading the balance consumes and
/// grants nothing.
#[utoipa::path(get, path = "/api/v2/ai-credits/balance", responses((status = 200, description = "Granted, consumed and remaining credits", body = CreditBalanceView)))]
pub async fn get_balance(ctx: Ctx, State(state): State<AppState>) -> Result<Json<CreditBalanceView>, ApiError> {
    let mut conn = state.store.read().await?;
    let totals = fiscus_kernel::tables::credits::totals(&mut conn, ctx.tenant()).await?;
    Ok(Json(CreditBalanceView {
        object: "ai_credit_balance".into(),
        environment: ctx.principal.tenant.environment,
        granted: totals.granted,
        consumed: totals.consumed,
        balance: totals.granted - totals.consumed,
        ledger_entries: totals.entries,
    }))
}
