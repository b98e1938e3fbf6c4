//! Bank entries to resolve: booked debits in the bank's statements that matched no payment Fiscus sent
//! (`fiscus_actions::bank_messages` keeps them). A person says what each was; nothing moves.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::format_minor;
use fiscus_domain::tenancy::Tenant;
use std::fmt::Write as _;

use super::flash::{self, Notice};
use super::html::{self, escape, page};
use super::session::OperatorSession;
use fiscus_actions::steps::statement_entries;
use fiscus_http::AppState;
use fiscus_http::form::{RawBody, pairs};
use fiscus_kernel::governed::Failure;

const TITLE: &str = "Bank entries";

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.")
}

/// Every unmatched entry of the workspace, in both environments, each with its resolution form.
pub async fn list(State(state): State<AppState>, op: OperatorSession) -> Response {
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let key = state.store.seal_key();
    let mut rows = String::new();
    for env in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
        let Ok(entries) = fiscus_actions::tables::bank_files::unmatched(&mut conn, key, &tenant).await else {
            return unavailable();
        };
        for e in entries {
            let b = &e.record.body;
            let form = if op.role.may_decide() {
                format!(
                    "<form method=\"post\" action=\"/console/bank-entries/{id}/resolution\">\
                     <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                     <input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                     <label>What it was <input type=\"text\" name=\"resolution\" required maxlength=\"500\"></label>\
                     <button type=\"submit\">Resolve</button></form>",
                    id = escape(&e.record.id),
                    csrf = escape(&op.csrf_token),
                    env = env.as_str(),
                )
            } else {
                "<span class=\"muted\">Approvers and admins resolve entries.</span>".to_string()
            };
            let _ = write!(
                rows,
                "<tr><td>{account}</td><td>{amount} {currency}</td><td>{date}</td><td>{e2e}</td><td>{refs}</td>\
                 <td>{env}</td><td><code>{message}</code></td><td>{form}</td></tr>",
                account = escape(&b.account),
                amount = format_minor(b.amount_minor, b.currency),
                currency = b.currency.code(),
                date = escape(b.booking_date.as_deref().unwrap_or("—")),
                e2e = escape(b.end_to_end_id.as_deref().unwrap_or("—")),
                refs = escape(&b.references.join("; ")),
                env = env.as_str(),
                message = escape(&e.message_id),
            );
        }
    }
    // Records the bank channel's worker set aside (issue 54): payments and files that failed their seals wait
    // here, named with why, while every other payment goes on. Nothing here can be released from the console:
    // a record edited outside Fiscus is for whoever runs it to investigate (the audit trail has the event).
    let mut aside = String::new();
    for env in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
        let Ok(found) = fiscus_store::set_aside::list(&mut conn, &tenant, 100).await else { return unavailable() };
        for r in found {
            let _ = write!(
                aside,
                "<tr><td>{table}</td><td><code>{id}</code></td><td>{env}</td><td>{reason}</td><td>{when}</td></tr>",
                table = escape(&r.table),
                id = escape(&r.record_id),
                env = env.as_str(),
                reason = escape(&r.reason),
                when = escape(&fiscus_domain::clock::rfc3339(r.set_aside_at)),
            );
        }
    }
    let aside = if aside.is_empty() {
        String::new()
    } else {
        format!(
            "<table id=\"set-aside\"><caption>Records set aside</caption><tr><th scope=\"col\">Table</th>\
             <th scope=\"col\">Record</th><th scope=\"col\">Environment</th><th scope=\"col\">Why</th>\
             <th scope=\"col\">Since</th></tr>{aside}</table><p>These failed their seals (edited outside Fiscus) \
             and are neither filed nor published; every other payment goes on. Whoever runs Fiscus investigates.</p>"
        )
    };
    let body = if rows.is_empty() {
        "<p id=\"bank-entries-empty\">No bank entry waits: every booked debit in the statements imported matched a \
         payment.</p>"
            .to_string()
    } else {
        format!(
            "<p>Booked debits in the bank's statements that match no payment Fiscus sent. Say what each was (a \
             bank fee, a payment made outside Fiscus, a return to chase); resolving moves no money.</p>\
             <table id=\"bank-entries\"><caption>Unmatched bank entries</caption><tr><th scope=\"col\">Account</th>\
             <th scope=\"col\">Amount</th><th scope=\"col\">Booked</th><th scope=\"col\">End-to-end id</th>\
             <th scope=\"col\">References</th><th scope=\"col\">Environment</th><th scope=\"col\">Message</th>\
             <th scope=\"col\">Resolution</th></tr>{rows}</table>"
        )
    };
    page(TITLE, op.nav(), &format!("{body}{aside}"))
}

pub async fn resolve(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    RawBody(body): RawBody,
) -> Response {
    let refused = |status: StatusCode, message: &str| html::error_page(status, "Refused", message);
    let Ok(pairs) = pairs(&body) else { return refused(StatusCode::BAD_REQUEST, "The form could not be read.") };
    let (mut csrf, mut environment, mut resolution) = (String::new(), String::new(), String::new());
    for (k, v) in pairs {
        match k.as_str() {
            "csrf" => csrf = v,
            "environment" => environment = v,
            "resolution" => resolution = v,
            _ => return refused(StatusCode::BAD_REQUEST, "The form could not be read."),
        }
    }
    if let Err(refusal) = op.check_csrf(&csrf) {
        return refusal;
    }
    let Some(env) = Environment::parse(&environment) else {
        return refused(StatusCode::UNPROCESSABLE_ENTITY, "Unknown environment.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = async {
        let mut tx = state.store.begin().await?;
        statement_entries::resolve(&mut tx, &tenant, &op.caller(), op.role, &id, &resolution).await?;
        tx.commit().await?;
        Ok::<(), Failure>(())
    }
    .await;
    match result {
        Ok(()) => flash::redirect("/console/bank-entries", Notice::Decided, &id),
        Err(Failure::Refused { detail, .. }) => html::error_page(StatusCode::CONFLICT, "Refused", &detail),
        Err(Failure::Decision(r)) => html::error_page(StatusCode::FORBIDDEN, "Refused", &r.to_string()),
        Err(Failure::Invalid(errors)) => {
            let text = errors.iter().map(|(f, why)| format!("{f}: {why}")).collect::<Vec<_>>().join("; ");
            refused(StatusCode::UNPROCESSABLE_ENTITY, &text)
        }
        Err(Failure::NotFound) => {
            html::error_page(StatusCode::NOT_FOUND, "Not found", "There is no such bank entry in this workspace.")
        }
        Err(e) => {
            tracing::warn!(error = ?e, "a bank entry resolution was not recorded");
            html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing was recorded. Try again.")
        }
    }
}
