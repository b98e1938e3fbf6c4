//! Workflow reviews at the console: the runs waiting for a person, with what their steps recorded so far
//! (measures, checks, which failed and went on), so the reviewer decides on the figures themselves. Only an
//! admin or an approver approves (the run goes on) or rejects (the run is cancelled); each form names the
//! step it decides, and a page gone stale decides nothing.

use crate::rules::workflows::run::ReviewDecision;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_console::form::ConsoleForm;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use serde_json::Value;
use std::fmt::Write as _;

use crate::workflows::runs;
use fiscus_console::flash::{self, Notice};
use fiscus_console::html::{self, escape, page};
use fiscus_console::queue::{Filter, Queue, Row};
use fiscus_console::session::OperatorSession;
use fiscus_http::AppState;

/// One recorded step as a line a person reads: a measure's value, a check's verdict, a read's extent.
fn summary(output: &Value) -> String {
    if let Some(passed) = output.get("passed").and_then(Value::as_bool) {
        let value = output.get("value").and_then(Value::as_f64).unwrap_or(f64::NAN);
        let limit = output.get("limit").and_then(Value::as_f64).unwrap_or(f64::NAN);
        let cmp = output.get("comparison").and_then(Value::as_str).unwrap_or("?");
        return format!("{} ({value:.6} {cmp} {limit})", if passed { "passed" } else { "FAILED" });
    }
    if let Some(v) = output.get("value").and_then(Value::as_f64) {
        let m = output.get("measure").and_then(Value::as_str).unwrap_or("value");
        return format!("{m} = {v:.6}");
    }
    if let Some(n) = output.get("observations").and_then(Value::as_u64) {
        let source = output.get("source").and_then(Value::as_str).unwrap_or("?");
        let from = output.get("first_date").and_then(Value::as_str).unwrap_or("?");
        let to = output.get("last_date").and_then(Value::as_str).unwrap_or("?");
        return format!("{source}: {n} observations, {from} to {to}");
    }
    if let Some(e) = output.get("error").and_then(Value::as_str) {
        return format!("error: {e}");
    }
    String::new()
}

/// The workflow runs waiting at a review step, in both environments: filterable by words and environment.
pub async fn list(State(state): State<AppState>, op: OperatorSession, Query(filter): Query<Filter>) -> Response {
    let unavailable =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    let mut rows = Vec::new();
    for environment in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
        let Ok(waiting) = runs::awaiting_review(&state, &tenant).await else { return unavailable() };
        for w in &waiting {
            let mut recorded = String::new();
            for s in &w.steps {
                let _ = write!(
                    recorded,
                    "<li><code>{}</code> ({}, {}): {}</li>",
                    escape(&s.body.step),
                    s.body.kind.as_str(),
                    s.body.outcome.as_str(),
                    escape(&summary(&s.body.output))
                );
            }
            let mut forms = String::new();
            if matches!(op.role, Role::Admin | Role::Approver) {
                for (decision, label, class) in [("approve", "Approve", "approve"), ("reject", "Reject", "deny")] {
                    let _ = write!(
                        forms,
                        "<form class=\"inline\" method=\"post\" action=\"/console/workflow-reviews/{id}\">\
                         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                         <input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                         <input type=\"hidden\" name=\"step\" value=\"{step}\">\
                         <label>Note <input type=\"text\" name=\"note\" maxlength=\"500\"></label>\
                         <button type=\"submit\" class=\"{class}\" name=\"decision\" value=\"{decision}\">{label} {step}</button></form>",
                        id = escape(&w.run.record.id),
                        csrf = escape(&op.csrf_token),
                        env = environment.as_str(),
                        step = escape(&w.step),
                    );
                }
            }
            let cells = vec![
                format!("{}<br><code>{}</code>", escape(&w.workflow_name), escape(&w.run.record.id)),
                environment.as_str().to_string(),
                format!("<strong>{}</strong><br><code>{}</code>", escape(&w.title), escape(&w.step)),
                format!("<ul>{recorded}</ul>"),
                format!("{}<br>{}", escape(&w.run.record.created_by.label()), op.time(w.run.record.created_at)),
                forms,
            ];
            let words =
                [w.workflow_name.as_str(), &w.run.record.id, &w.title, &w.step, &w.run.record.created_by.label()];
            rows.push(Row::new(cells, environment.as_str(), &words));
        }
    }
    let queue = Queue {
        id: "workflow-reviews",
        caption: "Workflow runs awaiting review",
        headers: &["Workflow run", "Environment", "Review", "Recorded so far", "Started", "Decide"],
        facet: ("Environment", &["sandbox", "production"]),
        empty: "No workflow run awaits review.",
    };
    let sections = queue.render("/console/workflow-reviews", &filter, rows);
    let body = format!(
        "<p class=\"muted\">A workflow run stops at each review step until a person decides. Approving lets the run \
         go on; rejecting cancels it. The decision is recorded as the step's output and sealed into the run's \
         evidence.</p>{sections}"
    );
    page("Workflow reviews", op.nav(), &body)
}

#[derive(Deserialize)]
pub struct ReviewForm {
    csrf: String,
    environment: String,
    step: String,
    decision: String,
    #[serde(default)]
    note: String,
}

pub async fn decide(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    ConsoleForm(form): ConsoleForm<ReviewForm>,
) -> Response {
    if let Err(refused) = op.check_csrf(&form.csrf) {
        return refused;
    }
    let Some(environment) = Environment::parse(&form.environment) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown environment.");
    };
    let Some(decision) = ReviewDecision::parse(&form.decision) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision.");
    };
    if !fiscus_domain::fields::prose_ok(&form.note, 500) {
        return html::error_page(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Refused",
            "A note is at most 500 characters of text.",
        );
    }
    let note = Some(form.note.trim()).filter(|n| !n.is_empty());
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
    match runs::review(&state, &op.caller(), op.role, &tenant, &id, &form.step, decision, note).await {
        Ok(_) => flash::redirect("/console/workflow-reviews", Notice::Decided, &id),
        Err(e) => html::failure_page(
            e,
            "Review refused",
            "There is no such workflow run in this workspace.",
            "a workflow review",
        ),
    }
}
