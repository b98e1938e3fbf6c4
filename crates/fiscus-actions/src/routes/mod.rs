//! The Financial Actions' routes: proposals, reads, submission, pre-trade checks, execution requests,
//! the approval policy and its dry run, autonomy assessment evidence, agentic identities and delegations, the counterparties and bank accounts
//! payments go to and from, payment files and bank messages. Human decisions (approve, deny) are not here:
//! they belong to the console, and no route of this crate can make them.

pub mod agentic;
mod assessment_evidence;
mod bank_accounts;
mod bank_routes;
mod checks;
mod execute;
mod policies;
mod proposals;
mod reads;
mod submit;

use fiscus_http::AppState;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(assessment_evidence::post_evidence, assessment_evidence::list_evidence))
        .routes(routes!(proposals::post_action, reads::list_actions))
        .routes(routes!(policies::get_approval_policies))
        .routes(routes!(policies::post_dry_run))
        .routes(routes!(reads::get_action))
        .routes(routes!(reads::get_check_versions))
        .routes(routes!(proposals::post_proposal))
        .routes(routes!(reads::get_agent_action))
        .routes(routes!(reads::get_reconciliation))
        .routes(routes!(submit::post_submit))
        .routes(routes!(checks::post_check))
        .routes(routes!(execute::post_execute))
        .routes(routes!(execute::post_agent_execute))
        .routes(routes!(agentic::post_identity, agentic::list_identities))
        .routes(routes!(agentic::get_identity))
        .routes(routes!(agentic::post_delegation))
        .routes(routes!(agentic::get_delegation))
        .routes(routes!(bank_accounts::post_counterparty, bank_accounts::list_counterparties))
        .routes(routes!(bank_accounts::get_counterparty))
        .routes(routes!(bank_accounts::post_bank_account))
        .routes(routes!(bank_accounts::post_bank_account_version))
        .routes(routes!(bank_accounts::get_bank_account))
        .routes(routes!(bank_routes::list_payment_files))
        .routes(routes!(bank_routes::get_payment_file))
        .routes(routes!(bank_routes::post_bank_message))
        .routes(routes!(bank_routes::get_bank_message))
}
