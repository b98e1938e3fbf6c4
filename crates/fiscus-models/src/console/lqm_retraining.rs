//! Retraining requests at the console: the requests awaiting a person's decision, each on a page of its own
//! that shows what the request would train on (model, contract, data and lineage hashes, algorithm and
//! hyperparameters) and the decisions credentials submitted over the API. A credential never decides a
//! retraining request; an admin or an approver does, here, on the request hash the page showed.

use crate::rules::lqm::retraining::Decision;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use serde::Deserialize;
use std::fmt::Write as _;

use crate::lqm::training::{self, DecisionInput, Reviewable};
use fiscus_console::flash::{self, Notice};
use fiscus_console::form::ConsoleForm;
use fiscus_console::html::{self, EnvQuery, escape, page};
use fiscus_console::session::OperatorSession;
use fiscus_http::AppState;

const PLACE: &str = "/console/lqm-retraining";

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.")
}

/// What credentials submitted, newest last, as one cell.
fn submissions(r: &Reviewable, op: &OperatorSession) -> String {
    if r.submissions.is_empty() {
        return "<span class=\"muted\">none</span>".to_string();
    }
    let mut out = String::from("<ul>");
    for s in &r.submissions {
        let _ = write!(
            out,
            "<li><strong>{decision}</strong> by <code>{by}</code>, {at}{note}</li>",
            decision = s.body.decision.as_str(),
            by = escape(&s.created_by.label()),
            at = op.time(s.created_at),
            note = s.body.note.as_deref().map(|n| format!(": {}", escape(n))).unwrap_or_default(),
        );
    }
    out.push_str("</ul>");
    out
}

/// Requests awaiting a person's decision, in both environments.
pub async fn list(State(state): State<AppState>, op: OperatorSession) -> Response {
    let mut rows = String::new();
    for environment in [Environment::Sandbox, Environment::Production] {
        let Ok(pending) = training::pending(&state, &op.tenant(environment)).await else { return unavailable() };
        for r in &pending {
            let b = &r.request.record.body;
            let _ = write!(
                rows,
                "<tr><td><a href=\"{PLACE}/{id}?environment={env}\"><code>{id}</code></a></td><td>{env}</td>\
                 <td><code>{model}</code></td><td>{algorithm}</td><td>{reason}</td><td>{by}<br>{at}</td>\
                 <td>{submitted}</td></tr>",
                id = escape(&r.request.record.id),
                env = environment.as_str(),
                model = escape(&b.model_id),
                algorithm = b.algorithm.as_str(),
                reason = escape(&b.reason),
                by = escape(&r.request.record.created_by.label()),
                at = op.time(r.request.record.created_at),
                submitted = submissions(r, &op),
            );
        }
    }
    let table = if rows.is_empty() {
        "<p>No retraining request awaits a decision.</p>".to_string()
    } else {
        format!(
            "<table><caption>Retraining requests awaiting a decision</caption><tr><th>Request</th>\
             <th>Environment</th><th>Model</th><th>Algorithm</th><th>Reason</th><th>Requested</th>\
             <th>Submitted decisions</th></tr>{rows}</table>"
        )
    };
    let body = format!(
        "<p class=\"muted\">A credential may request a retraining and submit a decision on it; only a person \
         decides. Approval authorises the training of one candidate checkpoint on exactly the contract shown, \
         and nothing is promoted or activated by it.</p>{table}"
    );
    page("Retraining", op.nav(), &body)
}

/// One request: what it would train on, what was submitted, and (for admins and approvers) the decision.
pub async fn detail(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    Query(q): Query<EnvQuery>,
) -> Response {
    let not_found = || {
        html::error_page(StatusCode::NOT_FOUND, "Not found", "There is no such retraining request in this workspace.")
    };
    let Some(environment) = Environment::parse(&q.environment) else { return not_found() };
    let tenant = op.tenant(environment);
    let r = match training::reviewable(&state, &tenant, &id).await {
        Ok(r) => r,
        Err(fiscus_kernel::governed::Failure::NotFound) => return not_found(),
        Err(_) => return unavailable(),
    };
    let b = &r.request.record.body;
    let contract = match crate::lqm::contracts::get(&state, &tenant, &b.contract_id).await {
        Ok(c) => c,
        Err(_) => return unavailable(),
    };
    let c = &contract.body;
    let hyperparameters = serde_json::to_string_pretty(&b.hyperparameters).unwrap_or_default();
    let mut body = format!(
        "<dl><dt>Request</dt><dd><code>{id}</code> ({env}), {state}</dd>\
         <dt>Request hash</dt><dd>{request_hash}</dd>\
         <dt>Model</dt><dd><code>{model}</code></dd>\
         <dt>Reason</dt><dd>{reason}</dd>\
         <dt>Requested</dt><dd><code>{by}</code>, {at}</dd>\
         <dt>Algorithm</dt><dd>{algorithm}</dd>\
         <dt>Hyperparameters</dt><dd><pre>{hyperparameters}</pre></dd>\
         <dt>Contract</dt><dd><code>{contract_id}</code>, hash {contract_hash}</dd>\
         <dt>Trains on</dt><dd>{training} of {observations} observations, {first} to {last}; the newest \
         {holdout} are held out for evaluation</dd>\
         <dt>Data hash</dt><dd>{data_hash}</dd>\
         <dt>Source hash</dt><dd>{source_hash}</dd>\
         <dt>Lineage hash</dt><dd>{lineage_hash}</dd>\
         <dt>Feature schema hash</dt><dd>{feature_hash}</dd>\
         <dt>Submitted decisions</dt><dd>{submitted}</dd></dl>",
        id = escape(&r.request.record.id),
        env = environment.as_str(),
        state = html::state(r.request.state.as_str()),
        request_hash = html::hash(&r.request.record.content_hash),
        model = escape(&b.model_id),
        reason = escape(&b.reason),
        by = escape(&r.request.record.created_by.label()),
        at = op.time(r.request.record.created_at),
        algorithm = b.algorithm.as_str(),
        hyperparameters = escape(&hyperparameters),
        contract_id = escape(&contract.id),
        contract_hash = html::hash(&contract.content_hash),
        training = c.observations - c.holdout,
        observations = c.observations,
        first = escape(&c.first_date),
        last = escape(&c.last_date),
        holdout = c.holdout,
        data_hash = html::hash(&c.data_hash),
        source_hash = html::hash(&c.source_hash),
        lineage_hash = html::hash(&c.lineage_hash),
        feature_hash = html::hash(&c.feature_schema_hash),
        submitted = submissions(&r, &op),
    );
    if r.request.state == crate::rules::lqm::retraining::RequestState::Pending
        && matches!(op.role, Role::Admin | Role::Approver)
    {
        let _ = write!(
            body,
            "<form method=\"post\" action=\"{PLACE}/{id}\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"environment\" value=\"{env}\">\
             <input type=\"hidden\" name=\"request_hash\" value=\"{hash}\">\
             <label for=\"note\">Note</label><textarea id=\"note\" name=\"note\" maxlength=\"2000\"></textarea>\
             <button type=\"submit\" class=\"approve\" name=\"decision\" value=\"approve\">Approve training</button> \
             <button type=\"submit\" class=\"deny\" name=\"decision\" value=\"reject\">Reject</button> \
             <button type=\"submit\" name=\"decision\" value=\"cancel\">Cancel</button></form>",
            id = escape(&r.request.record.id),
            csrf = escape(&op.csrf_token),
            env = environment.as_str(),
            hash = escape(&r.request.record.content_hash),
        );
    }
    page("Retraining", op.nav(), &body)
}

#[derive(Deserialize)]
pub struct DecisionForm {
    csrf: String,
    environment: String,
    request_hash: String,
    decision: String,
    #[serde(default)]
    note: String,
}

pub async fn decide(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    ConsoleForm(form): ConsoleForm<DecisionForm>,
) -> Response {
    let tenant = match op.deciding_in(&form.csrf, &form.environment) {
        Ok(tenant) => tenant,
        Err(refused) => return refused,
    };
    let decision = match form.decision.as_str() {
        "approve" => Decision::Approve,
        "reject" => Decision::Reject,
        "cancel" => Decision::Cancel,
        _ => return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision."),
    };
    let note = Some(form.note.trim().to_string()).filter(|n| !n.is_empty());
    let input = DecisionInput { decision, note };
    match training::decide(&state, &op.caller(), &tenant, &id, input, &form.request_hash).await {
        Ok(_) => flash::redirect(PLACE, Notice::Decided, &id),
        Err(e) => html::failure_page(
            e,
            "Decision refused",
            "There is no such retraining request in this workspace.",
            "a retraining decision",
        ),
    }
}
