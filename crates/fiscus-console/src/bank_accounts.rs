//! Bank details at the console: every version of every account, those waiting first; a version's page shows
//! its details beside the account's active ones, every changed line marked, and the approve and reject forms,
//! which carry the hash of the version shown (a version that is not that one is not decided). This is the
//! only place bank details become usable; the API and the CLI only propose.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_actions::rules::bank_accounts::VersionState;
use fiscus_actions::tables::bank_accounts::{self as store, Version};
use fiscus_domain::bank_accounts::{AccountNumber, AccountVersion};
use fiscus_domain::credentials::Environment;
use fiscus_domain::tenancy::Tenant;
use std::fmt::Write as _;

use super::flash::{self, Notice};
use super::html::{self, EnvQuery, escape, page};
use super::queue::{Filter, Queue, Row};
use super::session::OperatorSession;
use fiscus_http::AppState;
use fiscus_http::form::{RawBody, pairs};
use fiscus_kernel::governed::Failure;

const TITLE: &str = "Bank details";

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.")
}

fn not_found() -> Response {
    html::error_page(StatusCode::NOT_FOUND, "Not found", "There is no such version of bank details in this workspace.")
}

fn number(b: &AccountVersion) -> String {
    match &b.number {
        AccountNumber::Iban(i) => format!("IBAN {}", i.as_str()),
        AccountNumber::Local { number, scheme } => {
            format!("{number}{}", scheme.as_ref().map(|s| format!(" ({s})")).unwrap_or_default())
        }
    }
}

/// The lines a person compares, in order: what a payment file carries.
fn lines(b: &AccountVersion) -> Vec<(&'static str, String)> {
    vec![
        ("Holder", b.holder_name.clone()),
        ("Account", number(b)),
        ("Currency", b.currency.code().to_string()),
        ("BIC", b.bic.as_ref().map(|x| x.as_str().to_string()).unwrap_or_default()),
        ("Clearing", b.clearing.as_ref().map(|(s, m)| format!("{s} {m}")).unwrap_or_default()),
        (
            "Address",
            b.address
                .as_ref()
                .map(|a| {
                    [a.street.as_deref(), a.building.as_deref(), a.postcode.as_deref(), Some(&a.town), Some(&a.country)]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default(),
        ),
    ]
}

/// Every version of the workspace's bank details, in both environments: filterable by words and state.
pub async fn list(State(state): State<AppState>, op: OperatorSession, Query(filter): Query<Filter>) -> Response {
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let key = state.store.seal_key();
    let mut rows = Vec::new();
    for env in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
        for s in VersionState::ALL {
            let Ok(versions) = store::versions_in(&mut conn, key, &tenant, s).await else { return unavailable() };
            for v in versions {
                let b = &v.record.body;
                let who = b.counterparty_id.as_deref().unwrap_or("own account");
                let cells = vec![
                    format!(
                        "<a href=\"/console/bank-accounts/{id}?environment={env}\">{holder}</a>",
                        id = escape(&v.record.id),
                        env = env.as_str(),
                        holder = escape(&b.holder_name)
                    ),
                    escape(&number(b)),
                    format!("<code>{}</code> v{}", escape(&b.account_id), b.version),
                    escape(who),
                    env.as_str().to_string(),
                    html::state(s.as_str()),
                    format!("{}<br>{}", escape(&v.record.created_by.label()), op.time(v.record.created_at)),
                ];
                let label = v.record.created_by.label();
                let words = [v.record.id.as_str(), &b.account_id, &b.holder_name, who, env.as_str(), &label];
                rows.push(Row::new(cells, s.as_str(), &words));
            }
        }
    }
    let queue = Queue {
        id: "bank-accounts",
        caption: "Versions of bank details",
        headers: &["Holder", "Account", "Account id", "Counterparty", "Environment", "State", "Proposed"],
        facet: ("State", &["pending", "active", "rejected", "superseded"]),
        empty: "No bank details yet. Applications propose them with POST /api/v2/bank-accounts; each version waits \
                here for a person.",
    };
    page(TITLE, op.nav(), &queue.render("/console/bank-accounts", &filter, rows))
}

pub async fn detail(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    Query(q): Query<EnvQuery>,
) -> Response {
    let Some(env) = Environment::parse(&q.environment) else { return not_found() };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let key = state.store.seal_key();
    let v = match store::get_version(&mut conn, key, &tenant, &id).await {
        Ok(v) => v,
        Err(fiscus_store::StoreError::NotFound) => return not_found(),
        Err(_) => return unavailable(),
    };
    let Ok(all) = store::versions_of(&mut conn, key, &tenant, &v.record.body.account_id).await else {
        return unavailable();
    };
    let active = all.iter().find(|a| a.state == VersionState::Active && a.record.id != v.record.id);
    page(&format!("Bank details {}", v.record.body.holder_name), op.nav(), &detail_body(&op, env, &v, active, &all))
}

fn detail_body(
    op: &OperatorSession,
    env: Environment,
    v: &Version,
    active: Option<&Version>,
    all: &[Version],
) -> String {
    let b = &v.record.body;
    let mut body = format!(
        "<dl><dt>Account</dt><dd><code>{account}</code>, version {n} of {count}</dd><dt>Owner</dt><dd>{owner}{cp}</dd>\
         <dt>Environment</dt><dd>{env}</dd><dt>State</dt><dd id=\"version-state\">{state}</dd>\
         <dt>Proposed by</dt><dd>{by}, {at}</dd><dt>Details hash</dt><dd><code>{hash}</code></dd></dl>",
        account = escape(&b.account_id),
        n = b.version,
        count = all.len(),
        owner = b.owner.as_str(),
        cp = b.counterparty_id.as_ref().map(|c| format!(" (<code>{}</code>)", escape(c))).unwrap_or_default(),
        env = env.as_str(),
        state = html::state(v.state.as_str()),
        by = escape(&v.record.created_by.label()),
        at = op.time(v.record.created_at),
        hash = escape(&v.record.content_hash),
    );
    // Side by side: what payments use now, and what this version would make them use.
    let new = lines(b);
    let old = active.map(|a| lines(&a.record.body));
    let mut rows = String::new();
    for (i, (label, value)) in new.iter().enumerate() {
        let before = old.as_ref().map(|o| o[i].1.clone());
        let changed = before.as_ref().is_some_and(|before| before != value);
        let _ = write!(
            rows,
            "<tr{class}><th scope=\"row\">{label}</th><td>{before}</td><td>{value}{mark}</td></tr>",
            class = if changed { " class=\"changed\"" } else { "" },
            before = before.map(|x| escape(&x)).unwrap_or_else(|| "—".into()),
            value = escape(value),
            mark = if changed { " <strong>(changed)</strong>" } else { "" },
        );
    }
    let _ = write!(
        body,
        "<h2>Details</h2><table id=\"details-diff\"><tr><th></th><th>Active now{active_id}</th><th>This version</th></tr>{rows}</table>",
        active_id =
            active.map(|a| format!(" (v{})", a.record.body.version)).unwrap_or_else(|| " (none: a new account)".into()),
    );
    if let Some((by, at, note)) = &v.decision {
        let _ = write!(
            body,
            "<p>Decided by {} on {}{}.</p>",
            escape(&by.label()),
            op.time(*at),
            note.as_ref().map(|n| format!(": {}", escape(n))).unwrap_or_default()
        );
    }
    if v.state == VersionState::Pending {
        if op.role.may_decide() {
            let _ = write!(
                body,
                "<h2>Decide</h2><p>Check the details with the account holder through a channel you already know \
                 (not one this request gave you). Approving makes new payments {target} this account use them; \
                 payments awaiting execution that were approved for the details active now go back to people.</p>\
                 <form method=\"post\" action=\"/console/bank-accounts/{id}/decision\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                 <input type=\"hidden\" name=\"shown_hash\" value=\"{hash}\">\
                 <label>Note (how it was checked) <input type=\"text\" name=\"note\" maxlength=\"500\"></label>\
                 <button type=\"submit\" name=\"decision\" value=\"approve\" class=\"approve\">Approve these details</button>\
                 <button type=\"submit\" name=\"decision\" value=\"reject\" class=\"deny\">Reject</button></form>",
                target = if b.owner == fiscus_domain::bank_accounts::Owner::Own { "from" } else { "to" },
                id = escape(&v.record.id),
                csrf = escape(&op.csrf_token),
                env = env.as_str(),
                hash = escape(&v.record.content_hash),
            );
        } else {
            body.push_str("<p class=\"muted\">Only approvers and admins decide bank details.</p>");
        }
    }
    body
}

pub async fn decide(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    RawBody(body): RawBody,
) -> Response {
    let refused = |status: StatusCode, message: &str| html::error_page(status, "Refused", message);
    let Ok(pairs) = pairs(&body) else { return refused(StatusCode::BAD_REQUEST, "The form could not be read.") };
    let (mut csrf, mut environment, mut shown_hash, mut decision, mut note) =
        (String::new(), String::new(), String::new(), String::new(), None);
    for (k, v) in pairs {
        match k.as_str() {
            "csrf" => csrf = v,
            "environment" => environment = v,
            "shown_hash" => shown_hash = v,
            "decision" => decision = v,
            "note" => note = Some(v),
            _ => return refused(StatusCode::BAD_REQUEST, "The form could not be read."),
        }
    }
    if let Err(refusal) = op.check_csrf(&csrf) {
        return refusal;
    }
    let Some(env) = Environment::parse(&environment) else {
        return refused(StatusCode::UNPROCESSABLE_ENTITY, "Unknown environment.");
    };
    let approve = match decision.as_str() {
        "approve" => true,
        "reject" => false,
        _ => return refused(StatusCode::UNPROCESSABLE_ENTITY, "Unknown decision."),
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = async {
        let mut tx = state.store.begin().await?;
        let caller = op.caller();
        fiscus_actions::steps::bank_accounts::decide(
            &mut tx,
            &tenant,
            &caller,
            op.role,
            &id,
            approve,
            note.as_deref(),
            &shown_hash,
        )
        .await?;
        tx.commit().await?;
        Ok::<(), Failure>(())
    }
    .await;
    match result {
        Ok(()) => {
            flash::redirect(&format!("/console/bank-accounts/{id}?environment={}", env.as_str()), Notice::Decided, &id)
        }
        Err(Failure::Refused { detail, .. }) => html::error_page(StatusCode::CONFLICT, "Decision refused", &detail),
        Err(Failure::Decision(r)) => html::error_page(StatusCode::FORBIDDEN, "Decision refused", &r.to_string()),
        Err(Failure::Invalid(errors)) => {
            let text = errors.iter().map(|(f, why)| format!("{f}: {why}")).collect::<Vec<_>>().join("; ");
            refused(StatusCode::UNPROCESSABLE_ENTITY, &text)
        }
        Err(Failure::NotFound) => not_found(),
        Err(e) => {
            tracing::warn!(error = ?e, "a bank details decision was not recorded");
            html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing was decided. Try again.")
        }
    }
}
