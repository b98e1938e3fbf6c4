//! Rebalance proposals at the console: what each would trade and the model portfolio hash it moves onto,
//! and — for an admin or an approver — a form that turns one into an investment Financial Action (its
//! checks computed from the book), which people then approve like any action. The form names the
//! proposal's content hash; a proposal that is not the one shown becomes nothing.

use crate::tables::investment_records::RecordKind;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_actions::rules::envelope::{Origin, RiskTier};
use fiscus_console::form::ConsoleForm;
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::{Currency, format_minor};
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use std::fmt::Write as _;

use crate::governed_operations::RebalanceOutput;
use crate::orders::OrderActionRequest;
use fiscus_console::flash::{self, Notice};
use fiscus_console::html::{self, escape, page};
use fiscus_console::session::OperatorSession;
use fiscus_http::AppState;
use fiscus_kernel::governed::Failure;

pub async fn list(State(state): State<AppState>, op: OperatorSession) -> Response {
    let unavailable =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    let mut sections = String::new();
    for environment in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
        let Ok(mut conn) = state.store.read().await else { return unavailable() };
        let Ok(records) = crate::tables::investment_records::list(
            &mut conn,
            state.store.seal_key(),
            &tenant,
            RecordKind::Rebalance,
            None,
            None,
            100,
        )
        .await
        else {
            return unavailable();
        };
        let mut rows = String::new();
        for r in &records {
            let Ok(out) = serde_json::from_str::<RebalanceOutput>(&r.output) else { continue };
            let currency = Currency::parse(&out.base_currency);
            let money = |m: i64| match currency {
                Some(c) => format!("{} {}", c.code(), format_minor(m, c)),
                None => m.to_string(),
            };
            let orders = out
                .orders
                .iter()
                .map(|o| format!("{} {} {}", o.side.as_str(), escape(&o.quantity), escape(&o.symbol)))
                .collect::<Vec<_>>()
                .join(", ");
            let link = fiscus_data_core::tables::book::order_link(&mut conn, &tenant, &r.id).await.ok().flatten();
            let action = match (&link, op.role) {
                (Some(a), _) => format!(
                    "<a href=\"/console/actions/{a}?environment={env}\"><code>{a}</code></a>",
                    a = escape(a),
                    env = environment.as_str()
                ),
                (None, Role::Admin | Role::Approver) if !out.orders.is_empty() => format!(
                    "<form class=\"inline\" method=\"post\" action=\"/console/rebalance-proposals/{id}\">\
                     <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                     <input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                     <input type=\"hidden\" name=\"content_hash\" value=\"{hash}\">\
                     <label>Risk tier <select name=\"risk_tier\"><option>T2</option><option>T1</option></select></label> \
                     <button type=\"submit\">Propose the trade</button></form>",
                    id = escape(&r.id),
                    csrf = escape(&op.csrf_token),
                    env = environment.as_str(),
                    hash = escape(&r.content_hash),
                ),
                _ => String::from("–"),
            };
            let _ = write!(
                rows,
                "<tr><td><code>{id}</code></td><td>{portfolio}</td><td><code title=\"{mh}\">{mshort}</code></td>\
                 <td>{orders}</td><td>{traded}</td><td>{costs}</td><td>{at}</td><td>{action}</td></tr>",
                id = escape(&r.id),
                portfolio = out.portfolio_id,
                mh = escape(&out.model_portfolio_hash),
                mshort = escape(&out.model_portfolio_hash[..out.model_portfolio_hash.len().min(19)]),
                traded = money(out.traded_notional_minor),
                costs = money(out.estimated_costs_minor),
                at = op.time(r.created_at),
            );
        }
        let table = if records.is_empty() {
            "<p class=\"muted\">No rebalance proposals.</p>".to_string()
        } else {
            format!(
                "<table><tr><th>Proposal</th><th>Portfolio</th><th>Model portfolio hash</th><th>Orders</th>\
                 <th>Traded</th><th>Estimated costs</th><th>Proposed</th><th>Action</th></tr>{rows}</table>"
            )
        };
        let _ = write!(sections, "<h2>{}</h2>{table}", environment.as_str());
    }
    let body = format!(
        "<p class=\"muted\">A rebalance proposal trades nothing. Proposing its trade creates an investment \
         Financial Action whose pre-trade checks are computed from the book; it then needs its approvals like any \
         action.</p>{sections}"
    );
    page("Rebalance proposals", op.nav(), &body)
}

#[derive(Deserialize)]
pub struct ProposeForm {
    csrf: String,
    environment: String,
    content_hash: String,
    risk_tier: String,
}

pub async fn propose(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    ConsoleForm(form): ConsoleForm<ProposeForm>,
) -> Response {
    if let Err(refused) = op.check_csrf(&form.csrf) {
        return refused;
    }
    if !matches!(op.role, Role::Admin | Role::Approver) {
        return html::error_page(StatusCode::FORBIDDEN, "Refused", "An auditor does not propose trades.");
    }
    let (Some(environment), Some(risk_tier)) =
        (Environment::parse(&form.environment), RiskTier::parse(&form.risk_tier))
    else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown environment or risk tier.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
    let result = async {
        let mut tx = state.store.begin().await?;
        let key = tx.seal_key().clone();
        let record = crate::tables::investment_records::get(tx.conn(), &key, &tenant, &id).await?;
        if record.content_hash != form.content_hash {
            return Err(Failure::refused(
                fiscus_domain::error_code::ErrorCode::Conflict,
                "the proposal is not the one shown (its content hash differs); nothing was proposed",
            ));
        }
        let request = OrderActionRequest { connector: None, risk_tier: Some(risk_tier), reference: None };
        let loaded =
            crate::orders::propose(&mut tx, &state.settings, &tenant, &op.caller(), &id, request, Origin::Operator)
                .await?;
        tx.commit().await?;
        Ok::<String, Failure>(loaded.action.id)
    }
    .await;
    match result {
        Ok(action) => flash::redirect(
            &format!("/console/actions/{action}?environment={}", environment.as_str()),
            Notice::Proposed,
            &action,
        ),
        Err(e) => html::failure_page(
            e,
            "Not proposed",
            "There is no such proposal in this workspace.",
            "a trade proposed from a rebalance proposal",
        ),
    }
}
