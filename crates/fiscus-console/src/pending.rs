//! What waits for people in a workspace, counted for the console's navigation: one query of counts, in
//! both environments.

use fiscus_store::Result;
use sqlx::AnyConnection;

/// Items awaiting a person, per queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    /// Financial Actions pending approval.
    pub approvals: i64,
    /// Delegations in draft, awaiting activation.
    pub delegations: i64,
    /// Signed clients registered and not yet decided.
    pub clients: i64,
    /// Production webhook endpoints awaiting an admin's approval.
    pub webhooks: i64,
    /// Model portfolios awaiting approval.
    pub model_portfolios: i64,
    /// Model promotions awaiting a decision.
    pub promotions: i64,
    /// Workflow runs awaiting review.
    pub workflow_reviews: i64,
    /// LQM retraining requests awaiting a person's decision.
    pub retraining: i64,
    /// Versions of bank details awaiting a person's decision.
    pub bank_accounts: i64,
    /// Booked bank entries that matched no payment, awaiting a person's resolution.
    pub bank_entries: i64,
}

pub async fn pending(conn: &mut AnyConnection, workspace_id: &str) -> Result<Pending> {
    #[allow(clippy::type_complexity)]
    let (
        approvals,
        delegations,
        clients,
        webhooks,
        model_portfolios,
        promotions,
        workflow_reviews,
        retraining,
        bank_accounts,
        bank_entries,
    ): (
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
    ) = sqlx::query_as(
        "SELECT \
           (SELECT COUNT(*) FROM actions WHERE workspace_id = $1 AND control_state = 'pending_approval'), \
           (SELECT COUNT(*) FROM delegations WHERE workspace_id = $1 AND status = 'draft'), \
           (SELECT COUNT(*) FROM execution_clients c WHERE c.workspace_id = $1 AND NOT EXISTS \
              (SELECT 1 FROM execution_client_decisions d WHERE d.workspace_id = c.workspace_id AND d.client_id = c.id)), \
           (SELECT COUNT(*) FROM webhook_endpoints WHERE workspace_id = $1 AND status = 'pending_approval'), \
           (SELECT COUNT(*) FROM model_portfolios WHERE workspace_id = $1 AND state = 'approval_required'), \
           (SELECT COUNT(*) FROM lqm_promotions WHERE workspace_id = $1 AND state = 'pending'), \
           (SELECT COUNT(*) FROM workflow_runs WHERE workspace_id = $1 AND state = 'awaiting_review'), \
           (SELECT COUNT(*) FROM lqm_retraining_requests WHERE workspace_id = $1 AND state = 'pending'), \
           (SELECT COUNT(*) FROM bank_account_versions WHERE workspace_id = $1 AND state = 'pending'), \
           (SELECT COUNT(*) FROM statement_entries WHERE workspace_id = $1 AND state = 'unmatched')",
    )
    .bind(workspace_id)
    .fetch_one(&mut *conn)
    .await?;
    Ok(Pending {
        approvals,
        delegations,
        clients,
        webhooks,
        model_portfolios,
        promotions,
        workflow_reviews,
        retraining,
        bank_accounts,
        bank_entries,
    })
}
