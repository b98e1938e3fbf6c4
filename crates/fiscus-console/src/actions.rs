//! Pending approvals, an action's full envelope with its hash, checks, gates, approvals and history, and
//! the approve/deny decision.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_actions::rules::approval::Decision;
use fiscus_domain::actions::ControlState;
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::{Currency, format_minor};
use fiscus_domain::tenancy::Tenant;
use std::fmt::Write as _;

use super::html::{self, EnvQuery, escape, page};
use super::queue::{Filter, Queue, Row};
use super::session::OperatorSession;
use fiscus_actions::steps::{Loaded, gates, loaded};
use fiscus_http::AppState;

fn tenant(op: &OperatorSession, environment: Environment) -> Tenant {
    Tenant { workspace_id: op.workspace_id.clone(), environment }
}

fn amount(minor: i64, currency: Currency) -> String {
    format!("{} {}", format_minor(minor, currency), currency.code())
}

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer; try again.")
}

/// The queue of actions awaiting approval, in both environments, filterable by words and risk tier.
pub async fn dashboard(State(state): State<AppState>, op: OperatorSession, Query(filter): Query<Filter>) -> Response {
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let mut rows = Vec::new();
    for env in [Environment::Sandbox, Environment::Production] {
        let Ok(pending) = fiscus_actions::tables::actions::list(
            &mut conn,
            state.store.seal_key(),
            &tenant(&op, env),
            Some(ControlState::PendingApproval),
            None,
            500,
        )
        .await
        else {
            return unavailable();
        };
        for a in pending {
            let e = &a.envelope;
            let cells = vec![
                format!(
                    "<a href=\"/console/actions/{id}?environment={env}\">{id}</a>",
                    id = escape(&a.id),
                    env = env.as_str()
                ),
                env.as_str().to_string(),
                e.kind.as_str().to_string(),
                amount(e.amount_minor, e.currency),
                escape(&e.counterparty),
                e.risk_tier.as_str().to_string(),
                escape(&e.reference),
                op.time(a.created_at),
            ];
            let words =
                [a.id.as_str(), env.as_str(), e.kind.as_str(), &e.counterparty, &e.reference, e.currency.code()];
            rows.push(Row::new(cells, e.risk_tier.as_str(), &words));
        }
    }
    let queue = Queue {
        id: "pending",
        caption: "Actions awaiting approval",
        headers: &["Action", "Environment", "Kind", "Amount", "Counterparty", "Tier", "Reference", "Proposed"],
        facet: ("Risk tier", &["T0", "T1", "T2", "T3"]),
        empty: "Nothing awaits approval.",
    };
    let batch = "<p><a href=\"/console/approvals/batch\" id=\"batch-link\">Approve many at once</a>: filter the queue \
                 (a payment run, a counterparty, an amount range…), review a summary, decide them together.</p>";
    page("Pending approvals", op.nav(), &format!("{batch}{}", queue.render("/console", &filter, rows)))
}

pub async fn detail(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    Query(q): Query<EnvQuery>,
) -> Response {
    let Some(env) = Environment::parse(&q.environment) else {
        return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such action in this workspace.");
    };
    let t = tenant(&op, env);
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let row = match fiscus_actions::tables::actions::get(&mut conn, &t, &id).await {
        Ok(row) => row,
        Err(fiscus_store::StoreError::NotFound) => {
            return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such action in this workspace.");
        }
        Err(_) => return unavailable(),
    };
    let Ok(loaded) = Loaded::load(&mut conn, state.store.seal_key(), &t, row).await else { return unavailable() };
    let view = loaded.view(&state.settings, None);
    let Ok(history) = loaded::history(&mut conn, &t, &id).await else { return unavailable() };
    let gates = gate_preview(&state, &t, &loaded).await;
    let envelope = serde_json::to_string_pretty(&view.envelope).unwrap_or_default();
    let mut checks = String::new();
    for c in &view.checks {
        let _ = write!(
            checks,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&c.check_key),
            c.version,
            c.status.as_str(),
            html::hash(&c.check_hash),
            escape(&c.source_reference)
        );
    }
    let mut decisions = String::new();
    for d in &loaded.decisions {
        let _ = write!(
            decisions,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&d.operator_id),
            d.decision.as_str(),
            if loaded.is_stale(d) { "stale" } else { "standing" },
            html::hash(&d.evidence_hash),
            op.time(d.created_at)
        );
        // A stale approval says exactly what it no longer covers.
        if d.decision == Decision::Approve && loaded.is_stale(d) {
            let mut changes = String::new();
            for c in loaded.checks_changed_since(d.created_at) {
                let then = c
                    .then
                    .map_or("not recorded".to_string(), |t| format!("version {} {}", t.version, t.status.as_str()));
                let _ = write!(
                    changes,
                    "<li><code>{key}</code>: {then} → version {v} {status} (recorded by {by} at {at})</li>",
                    key = escape(c.check_key),
                    v = c.now.version,
                    status = c.now.status.as_str(),
                    by = escape(&c.now.recorded_by),
                    at = op.time(c.now.created_at),
                );
            }
            let _ = write!(
                decisions,
                "<tr><td colspan=\"5\"><p>Changed since this approval:</p><ul class=\"changes\">{changes}</ul></td></tr>"
            );
        }
    }
    let mut events = String::new();
    for h in &history {
        let _ = write!(
            events,
            "<tr><td>{}</td><td>{}</td><td>{} → {}</td><td>{} {}</td></tr>",
            fiscus_domain::clock::parse_rfc3339(&h.at).map_or_else(|| escape(&h.at), |at| op.time(at)),
            h.event.as_str(),
            h.from_state.map_or("—", ControlState::as_str),
            h.to_state.as_str(),
            h.actor.kind.as_str(),
            escape(&h.actor.id)
        );
    }
    let decide_form = if view.control_state == ControlState::PendingApproval
        || view.control_state == ControlState::Approved
    {
        format!(
            "<form method=\"post\" action=\"/console/actions/{id}/decision\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
             <input type=\"hidden\" name=\"envelope_hash\" value=\"{eh}\"><input type=\"hidden\" name=\"check_set_hash\" value=\"{ch}\">\
             <label>Reason (kept with your decision) <input type=\"text\" name=\"reason\" maxlength=\"500\"></label>\
             {approve}<button class=\"deny\" type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>",
            id = escape(&id),
            csrf = escape(&op.csrf_token),
            env = env.as_str(),
            eh = escape(&view.envelope_hash),
            ch = escape(&view.check_set_hash),
            // The button names the envelope hash its approval covers.
            approve = if view.control_state == ControlState::PendingApproval {
                format!(
                    "<button class=\"approve\" id=\"approve\" type=\"submit\" name=\"decision\" value=\"approve\">Approve envelope {}</button>",
                    escape(&short_hash(&view.envelope_hash))
                )
            } else {
                String::new()
            },
        )
    } else {
        String::new()
    };
    let e = &view.envelope;
    let amount = fiscus_domain::money::Currency::parse(&e.currency).map_or_else(
        || format!("{} {}", e.currency, e.amount_minor),
        |c| fiscus_domain::money::format_for_people(e.amount_minor, c),
    );
    let what = plain_words(e.kind, &amount, &e.counterparty, &e.connector);
    let Ok(pays_to) = pays_to(&state, &t, &view.checks).await else { return unavailable() };
    let Ok(bank_file) = bank_file(&state, &t, &id).await else { return unavailable() };
    let pays_to = format!("{pays_to}{bank_file}");
    let body = format!(
        "<section aria-labelledby=\"what\"><h2 id=\"what\">What will happen</h2><p class=\"summary\" id=\"summary\">{what}</p>\
         <dl>{pays_to}<dt>Proposed by</dt><dd>{by_kind} <code>{by}</code> ({origin})</dd><dt>Risk tier</dt><dd>{tier}</dd>\
         <dt>Approvals</dt><dd id=\"quorum\">{cur} of {req} approval{plural}</dd>\
         <dt>Who must approve</dt><dd id=\"requirement\">{requirement}</dd><dt>Still needed</dt><dd id=\"still-needed\">{still}</dd>\
         <dt>Reference</dt><dd>{reference}</dd></dl></section>\
         <p>State: <strong id=\"control-state\" data-state=\"{state}\">{state}</strong> · reconciliation: {recon}</p>\
         <p>Envelope hash: <code id=\"envelope-hash\">{eh}</code></p><p>Check set hash: <code>{ch}</code></p>\
         <h2>Envelope</h2><pre>{envelope}</pre>\
         <h2>Pre-trade checks (latest versions)</h2>{checks}\
         <h2>Execution gates now</h2>{gates}\
         <h2>Decisions</h2>{decisions}\
         <h2>History</h2><table><tr><th>At</th><th>Event</th><th>State</th><th>Actor</th></tr>{events}</table>\
         <h2>Evidence</h2><p>Everything sealed about this action and every audit event about it, each with its proof \
         against a signed checkpoint of the workspace's transparency log: \
         <a id=\"evidence-bundle\" href=\"/console/actions/{bundle_id}/evidence-bundle?environment={env}\" download>evidence bundle (JSON)</a>. \
         Anyone can check it with the log's public key and <code>clients/verify_evidence.py</code>.</p>{decide_form}",
        bundle_id = escape(&id),
        env = env.as_str(),
        state = view.control_state.as_str(),
        // The API's own names (snake_case), not Rust's.
        recon = serde_json::to_value(view.reconciliation_status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        cur = view.approvals.current,
        req = view.approvals.required,
        eh = escape(&view.envelope_hash),
        ch = escape(&view.check_set_hash),
        envelope = escape(&envelope),
        what = escape(&what),
        by_kind = view.proposed_by.kind.as_str(),
        by = escape(&view.proposed_by.id),
        origin = escape(
            &serde_json::to_value(view.origin).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
        ),
        tier = escape(
            &serde_json::to_value(e.risk_tier).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
        ),
        plural = if view.approvals.required == 1 { "" } else { "s" },
        requirement = {
            let a = &view.approvals;
            let why = if a.requirement.matched_rules.is_empty() {
                "the default: no rule of the approval policy matched".to_string()
            } else {
                format!(
                    "by rule {}",
                    a.requirement
                        .matched_rules
                        .iter()
                        .map(|r| format!("<code>{}</code>", escape(r)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let policy = a.policy.as_ref().map_or_else(
                || "no approval policy in force".to_string(),
                |p| {
                    format!(
                        "<a href=\"/console/approval-policies?environment={}\">policy version {}</a>",
                        env.as_str(),
                        p.version
                    )
                },
            );
            format!("{} ({why}; {policy})", escape(&a.in_words))
        },
        still = escape(&view.approvals.still_needed),
        // An empty table says nothing; these say what its emptiness means.
        checks = if checks.is_empty() {
            "<p id=\"checks\">No checks are required or recorded.</p>".to_string()
        } else {
            format!(
                "<table id=\"checks\"><tr><th>Check</th><th>Version</th><th>Status</th><th>Hash</th><th>Source</th></tr>{checks}</table>"
            )
        },
        decisions = if decisions.is_empty() {
            "<p id=\"decisions\">Nobody has decided yet.</p>".to_string()
        } else {
            format!(
                "<table id=\"decisions\"><tr><th>Operator</th><th>Decision</th><th>Standing</th><th>Evidence hash</th><th>At</th></tr>{decisions}</table>"
            )
        },
        pays_to = pays_to,
        reference = escape(&e.reference),
    );
    page(&format!("Action {id}"), op.nav(), &body)
}

/// The action's evidence bundle as a download (`fiscus_kernel::evidence::bundle`, the same document as
/// `GET /api/v2/actions/{uid}/evidence-bundle`).
pub async fn evidence_bundle(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    Query(q): Query<EnvQuery>,
) -> Response {
    let Some(env) = Environment::parse(&q.environment) else {
        return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such action in this workspace.");
    };
    let t = tenant(&op, env);
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    match fiscus_actions::tables::actions::get(&mut conn, &t, &id).await {
        Ok(_) => {}
        Err(fiscus_store::StoreError::NotFound) => {
            return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such action in this workspace.");
        }
        Err(_) => return unavailable(),
    }
    drop(conn);
    let table = &fiscus_store::seals::ACTIONS;
    let Ok(bundle) = fiscus_kernel::evidence::bundle(&state, &t.workspace_id, table, "action_id", &id).await else {
        return unavailable();
    };
    let view = fiscus_kernel::evidence::bundle_view(&state, &t.workspace_id, table.table, &id, bundle);
    let Ok(body) = serde_json::to_string_pretty(&view) else { return unavailable() };
    use axum::response::IntoResponse as _;
    let disposition = format!("attachment; filename=\"{}-evidence-bundle.json\"", id.replace(['"', '\\'], ""));
    (
        [
            (axum::http::header::CONTENT_TYPE, "application/json".to_string()),
            (axum::http::header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response()
}

/// The bank details a payment to a counterparty is bound to (the check `creditor_account` cites them), as a
/// `<dt>`/`<dd>` pair, so that a person approving sees where the money goes; empty for other actions. A cited
/// version that does not hash to what the check cites is never shown as the payee.
async fn pays_to(
    state: &AppState,
    t: &Tenant,
    checks: &[fiscus_actions::views::CheckVersionView],
) -> Result<String, fiscus_store::StoreError> {
    use fiscus_actions::rules::checks::{CREDITOR_ACCOUNT, CheckStatus};
    use fiscus_domain::bank_accounts::AccountNumber;
    let Some(c) = checks.iter().find(|c| c.check_key == CREDITOR_ACCOUNT) else { return Ok(String::new()) };
    let mut conn = state.store.read().await?;
    let v =
        fiscus_actions::tables::bank_accounts::get_version(&mut conn, state.store.seal_key(), t, &c.source_reference)
            .await?;
    if v.record.content_hash != c.source_hash {
        return Err(fiscus_store::StoreError::Corrupt(format!("check cites {} with another hash", v.record.id)));
    }
    let b = &v.record.body;
    // Masked as banks show an account: enough to recognise it, the whole of it on the bank details' own page.
    let masked = |n: &str| {
        let tail: String = n.chars().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect();
        tail
    };
    let number = match &b.number {
        AccountNumber::Iban(i) => format!("IBAN {} •••• {}", &i.as_str()[..4], masked(i.as_str())),
        AccountNumber::Local { number, .. } => format!("account •••• {}", masked(number)),
    };
    let bank = b.bic.as_ref().map(|x| format!(", BIC {}", x.as_str())).unwrap_or_default();
    let details = format!(
        "{}, {number}{bank} (<a href=\"/console/bank-accounts/{}?environment={}\">version {} of the account's details</a>)",
        escape(&b.holder_name),
        escape(&v.record.id),
        t.environment.as_str(),
        b.version,
    );
    Ok(match c.status {
        CheckStatus::Passed => format!("<dt>Pays to</dt><dd id=\"pays-to\">{details}</dd>"),
        _ => format!(
            "<dt>Pays to</dt><dd id=\"pays-to\"><strong>The counterparty's bank details changed after this payment \
             was proposed</strong>: now {details}. This payment cannot execute; deny it and propose it again.</dd>"
        ),
    })
}

/// The payment file a bank-file payment went out in (and where its publication stands), as a `<dt>`/`<dd>`
/// pair; empty for an action not handed to the `iso20022` connector.
async fn bank_file(state: &AppState, t: &Tenant, action_id: &str) -> Result<String, fiscus_store::StoreError> {
    let mut conn = state.store.read().await?;
    let key = state.store.seal_key();
    let Some(i) = fiscus_actions::tables::bank_files::instruction_of(&mut conn, key, t, action_id).await? else {
        return Ok(String::new());
    };
    let Some(file_id) = i.file_id else {
        return Ok(
            "<dt>Bank file</dt><dd id=\"bank-file\">handed to the bank file connector; not yet in a file</dd>".into()
        );
    };
    let f = fiscus_actions::tables::bank_files::get_file(&mut conn, key, t, &file_id).await?;
    Ok(format!(
        "<dt>Bank file</dt><dd id=\"bank-file\"><code>{name}</code> ({state}, {n} payment{s}, SHA-256 <code>{sha}</code>)</dd>",
        name = escape(&f.record.body.name),
        state = f.state.as_str(),
        n = f.record.body.payments,
        s = if f.record.body.payments == 1 { "" } else { "s" },
        sha = escape(&f.record.body.sha256),
    ))
}

/// What the execution gates would say now (machine-delegated gates need the machine's signed evidence, so
/// they are evaluated only at execution).
async fn gate_preview(state: &AppState, t: &Tenant, loaded: &Loaded) -> String {
    let Ok(ws) = state.store.workspace(&t.workspace_id).await else {
        return "<p class=\"error\">The gates could not be evaluated.</p>".into();
    };
    let mode = loaded.action.envelope.execution_mode;
    let failed = gates::preview(loaded, t, &state.settings, ws.production_access());
    let mut out = String::from("<ul id=\"gates\">");
    if failed.is_empty() {
        out.push_str("<li>Every gate passes now.</li>");
    }
    for g in failed {
        let _ = write!(out, "<li><strong>{}</strong>: {}</li>", g.gate.as_str(), escape(&g.reason));
    }
    if mode == fiscus_actions::rules::envelope::ExecutionMode::MachineDelegated {
        out.push_str("<li class=\"muted\">Delegation, machine authority and budget are checked at execution.</li>");
    }
    out.push_str("</ul>");
    out
}

/// What an action will do, in words (`Pay USD 1,250.00 to cp_acme_supplies via sandbox`).
fn plain_words(kind: fiscus_domain::actions::ActionKind, amount: &str, counterparty: &str, connector: &str) -> String {
    use fiscus_domain::actions::ActionKind;
    let (verb, to) = match kind {
        ActionKind::Payment => ("Pay", "to"),
        ActionKind::Transfer => ("Transfer", "to"),
        ActionKind::FxConversion => ("Convert", "with"),
        ActionKind::InvestmentOrder => ("Place an order of", "with"),
        ActionKind::CollateralMovement => ("Move collateral of", "to"),
    };
    format!("{verb} {amount} {to} {counterparty} via {connector}")
}

/// A hash shortened for a label (`sha256:` and its first 12 hex digits); the full value stays on the page.
fn short_hash(hash: &str) -> String {
    let digits = hash.strip_prefix("sha256:").unwrap_or(hash);
    format!("sha256:{}…", digits.chars().take(12).collect::<String>())
}

#[cfg(test)]
mod tests {
    use fiscus_domain::actions::ActionKind;

    #[test]
    fn an_action_reads_as_a_sentence_and_a_hash_as_its_head() {
        assert_eq!(
            super::plain_words(ActionKind::Payment, "USD 1,250.00", "cp_acme_supplies", "sandbox"),
            "Pay USD 1,250.00 to cp_acme_supplies via sandbox"
        );
        assert_eq!(super::short_hash("sha256:0123456789abcdef0123"), "sha256:0123456789ab…");
    }
}
