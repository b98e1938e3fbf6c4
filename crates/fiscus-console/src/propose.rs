//! Operators may propose actions too. The proposer never approves their own action.

use crate::form::ConsoleForm;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_actions::rules::envelope::{ExecutionMode, Origin, ProposalRequest, RiskTier};
use fiscus_domain::actions::ActionKind;
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;

use super::flash::{self, Notice};
use super::html::{self, escape, page};
use super::session::OperatorSession;
use fiscus_actions::steps::propose as governed_propose;
use fiscus_http::AppState;
use fiscus_kernel::governed::Failure;

pub async fn form(op: OperatorSession) -> Response {
    new_page(&op, None)
}

fn new_page(op: &OperatorSession, error: Option<&str>) -> Response {
    let error = error.map(|e| format!("<p class=\"error\">{}</p>", escape(e))).unwrap_or_default();
    let body = format!(
        "{error}<form method=\"post\" action=\"/console/actions/new\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
         <label>Environment <select name=\"environment\"><option>sandbox</option><option>production</option></select></label>\
         <label>Kind <select name=\"kind\"><option>payment</option><option>transfer</option><option>fx_conversion</option>\
         <option>investment_order</option><option>collateral_movement</option></select></label>\
         <label>Amount (minor units) <input type=\"text\" name=\"amount_minor\" required></label>\
         <label>Currency <input type=\"text\" name=\"currency\" value=\"USD\" required></label>\
         <label>Counterparty <input type=\"text\" name=\"counterparty\" required></label>\
         <label>Connector <input type=\"text\" name=\"connector\" value=\"sandbox\" required></label>\
         <label>Risk tier <select name=\"risk_tier\"><option>T1</option><option>T2</option></select></label>\
         <label>Reference <input type=\"text\" name=\"reference\" required></label>\
         <label>Required checks (comma-separated) <input type=\"text\" name=\"required_checks\"></label>\
         <button type=\"submit\">Propose</button></form>",
        escape(&op.csrf_token)
    );
    page("Propose an action", op.nav(), &body)
}

#[derive(Deserialize)]
pub struct ProposeForm {
    csrf: String,
    environment: String,
    kind: String,
    amount_minor: String,
    currency: String,
    counterparty: String,
    connector: String,
    risk_tier: String,
    reference: String,
    #[serde(default)]
    required_checks: String,
}

pub async fn propose(
    State(state): State<AppState>,
    op: OperatorSession,
    ConsoleForm(f): ConsoleForm<ProposeForm>,
) -> Response {
    if let Err(refused) = op.check_csrf(&f.csrf) {
        return refused;
    }
    if !op.role.may_decide() {
        return html::error_page(StatusCode::CONFLICT, "Refused", "Auditors read; they do not propose.");
    }
    let parsed = (|| {
        let environment = Environment::parse(&f.environment).ok_or("unknown environment")?;
        let kind = ActionKind::parse(&f.kind).ok_or("unknown kind")?;
        let amount_minor: i64 =
            f.amount_minor.trim().parse().map_err(|_| "the amount must be an integer number of minor units")?;
        let currency = Currency::parse(f.currency.trim()).ok_or("unknown currency")?;
        let risk_tier = RiskTier::parse(&f.risk_tier).ok_or("unknown risk tier")?;
        let required_checks =
            f.required_checks.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
        let request = ProposalRequest {
            kind,
            amount_minor,
            currency,
            counterparty: f.counterparty.clone(),
            connector: f.connector.clone(),
            execution_mode: ExecutionMode::HumanApproved,
            delegation_id: None,
            risk_tier,
            reference: f.reference.clone(),
            required_checks,
            metadata: None,
        };
        Ok((environment, request))
    })();
    let (environment, request) = match parsed {
        Ok(p) => p,
        Err(message) => return new_page(&op, Some(message)),
    };
    let envelope = match request.validate() {
        Ok(e) => e,
        Err(errors) => {
            let message = errors.into_iter().map(|(f, m)| format!("{f} {m}")).collect::<Vec<_>>().join("; ");
            return new_page(&op, Some(&message));
        }
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
    let created = async {
        let mut tx = state.store.begin().await?;
        let loaded =
            governed_propose::propose(&mut tx, &state.settings, &tenant, &op.caller(), envelope, Origin::Operator)
                .await?;
        tx.commit().await?;
        Ok::<String, Failure>(loaded.action.id)
    }
    .await;
    match created {
        Ok(id) => flash::redirect(
            &format!("/console/actions/{id}?environment={}", environment.as_str()),
            Notice::Proposed,
            &id,
        ),
        Err(e) => {
            tracing::warn!(error = ?e, "a console proposal was not recorded");
            html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing was proposed. Try again.")
        }
    }
}
