//! What the bank side did, for people: the payment files the `iso20022` connector wrote (state, payments,
//! totals, SHA-256, the file itself to download, its bytes checked against the sealed hash first) and the
//! bank messages imported (kind, the bank's id, and what each entry or status did to which payment). Read
//! only: files are made by the bank file worker and messages arrive through the inbound folder, the CLI or
//! the API.

use std::fmt::Write as _;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use fiscus_actions::tables::bank_files;
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::format_for_people;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;

use super::html::{self, escape, page};
use super::session::OperatorSession;
use fiscus_http::AppState;

const LIMIT: u32 = 200;

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.")
}

/// Which environment a page shows (the sandbox's unless named).
#[derive(Deserialize)]
pub struct EnvironmentQuery {
    #[serde(default)]
    environment: Option<String>,
}

impl EnvironmentQuery {
    fn tenant(&self, op: &OperatorSession) -> (Tenant, Environment) {
        let env = self.environment.as_deref().and_then(Environment::parse).unwrap_or(Environment::Sandbox);
        (Tenant { workspace_id: op.workspace_id.clone(), environment: env }, env)
    }
}

fn other(env: Environment) -> &'static str {
    match env {
        Environment::Sandbox => "production",
        Environment::Production => "sandbox",
    }
}

/// The payment files, newest first.
pub async fn files(State(state): State<AppState>, op: OperatorSession, Query(q): Query<EnvironmentQuery>) -> Response {
    let (tenant, env) = q.tenant(&op);
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let Ok(files) = bank_files::list_files(&mut conn, state.store.seal_key(), &tenant, None, LIMIT).await else {
        return unavailable();
    };
    let mut body = format!(
        "<p>The <code>pain.001</code> files the bank connector wrote in <strong>{e}</strong> (<a href=\"/console/payment-files?environment={o}\">{o}</a>), \
         newest first: each is written whole, then published to the folder the bank collects from.</p>",
        e = env.as_str(),
        o = other(env)
    );
    if files.is_empty() {
        body.push_str("<p id=\"payment-files\">No payment file yet: approved payments through the <code>iso20022</code> connector are filed when executed.</p>");
        return page("Payment files", op.nav(), &body);
    }
    let mut rows = String::new();
    for f in files.iter().take(LIMIT as usize) {
        let b = &f.record.body;
        let _ = write!(
            rows,
            "<tr><td>{name}<br><small>{id}</small></td><td>{state}</td><td>{payments}</td><td class=\"amount\">{total}</td>\
             <td>{date}</td><td>{sha}</td><td>{at}</td><td><a href=\"/console/payment-files/{id}/download?environment={env}\" download>Download</a></td></tr>",
            name = escape(&b.name),
            id = escape(&f.record.id),
            state = html::state(f.state.as_str()),
            payments = b.payments,
            total = escape(&format_for_people(b.control_sum_minor, b.currency)),
            date = escape(&b.requested_date),
            sha = html::hash(&b.sha256),
            at = op.time(f.record.created_at),
            env = env.as_str(),
        );
    }
    let _ = write!(
        body,
        "<table id=\"payment-files\"><caption>Payment files</caption><tr><th scope=\"col\">File</th><th scope=\"col\">State</th>\
         <th scope=\"col\">Payments</th><th scope=\"col\">Total</th><th scope=\"col\">Requested date</th><th scope=\"col\">SHA-256</th>\
         <th scope=\"col\">Written</th><th scope=\"col\">File</th></tr>{rows}</table>"
    );
    page("Payment files", op.nav(), &body)
}

/// A payment file's bytes, as the bank received them; refused when they no longer hash to the sealed record.
pub async fn download(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    Query(q): Query<EnvironmentQuery>,
) -> Response {
    let (tenant, _) = q.tenant(&op);
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let file = match bank_files::get_file(&mut conn, state.store.seal_key(), &tenant, &id).await {
        Ok(f) => f,
        Err(fiscus_store::StoreError::NotFound) => {
            return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such payment file in this workspace.");
        }
        Err(_) => return unavailable(),
    };
    let content = match bank_files::content(&mut conn, &tenant, &file).await {
        Ok(c) => c,
        Err(fiscus_store::StoreError::Tampered(_)) => {
            return html::error_page(
                StatusCode::CONFLICT,
                "Refused",
                "The file's bytes no longer match its sealed hash: they were changed outside Fiscus and are not served.",
            );
        }
        Err(_) => return unavailable(),
    };
    let mut response = (StatusCode::OK, content).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/xml; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{}\"", file.record.body.name)) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    response
}

/// The bank messages imported, newest first, each item with what it did.
pub async fn messages(
    State(state): State<AppState>,
    op: OperatorSession,
    Query(q): Query<EnvironmentQuery>,
) -> Response {
    let (tenant, env) = q.tenant(&op);
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let Ok(messages) = bank_files::list_messages(&mut conn, state.store.seal_key(), &tenant, None, LIMIT).await else {
        return unavailable();
    };
    let mut body = format!(
        "<p>What the bank sent back in <strong>{e}</strong> (<a href=\"/console/bank-messages?environment={o}\">{o}</a>): status \
         reports (<code>pain.002</code>), statements (<code>camt.053</code>) and notifications (<code>camt.054</code>), newest \
         first, each with what every item did. Entries no payment matched wait under <a href=\"/console/bank-entries\">Bank entries</a>.</p>",
        e = env.as_str(),
        o = other(env)
    );
    if messages.is_empty() {
        body.push_str("<p id=\"bank-messages\">No bank message yet.</p>");
        return page("Bank messages", op.nav(), &body);
    }
    body.push_str("<div id=\"bank-messages\">");
    for m in messages.iter().take(LIMIT as usize) {
        let b = &m.body;
        let mut rows = String::new();
        for i in &b.items {
            let amount = match (i.amount_minor, i.currency) {
                (Some(a), Some(c)) => format_for_people(a, c),
                _ => String::new(),
            };
            let action = i.action_id.as_ref().map_or_else(String::new, |a| {
                format!("<a href=\"/console/actions/{a}?environment={env}\">{a}</a>", a = escape(a), env = env.as_str())
            });
            let outcome =
                serde_json::to_value(i.outcome).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            let _ = write!(
                rows,
                "<tr><td>{code}{reason}</td><td>{action}</td><td class=\"amount\">{amount}</td><td>{outcome}</td></tr>",
                code = escape(&i.code),
                reason = i.reason.as_ref().map(|r| format!(" ({})", escape(r))).unwrap_or_default(),
                amount = escape(&amount),
                outcome = html::state(&outcome),
            );
        }
        let _ = write!(
            body,
            "<section class=\"message\"><h2>{kind} <code>{mid}</code></h2><p>{message}, imported by {by} on {at}; SHA-256 {sha}.</p>\
             <table><caption>Its items</caption><tr><th scope=\"col\">Status</th><th scope=\"col\">Payment</th><th scope=\"col\">Amount</th>\
             <th scope=\"col\">What it did</th></tr>{rows}</table></section>",
            kind = b.kind.as_str(),
            mid = escape(&b.message_id),
            message = escape(&b.message),
            by = escape(&m.created_by.label()),
            at = op.time(m.created_at),
            sha = html::hash(&b.sha256),
        );
    }
    body.push_str("</div>");
    page("Bank messages", op.nav(), &body)
}
