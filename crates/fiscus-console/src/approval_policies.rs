//! The approval policy at the console, the only place it is written: an admin proposes a version (the policy
//! as JSON, checked field by field), a second admin reads it rule by rule beside the version in force and
//! approves or rejects exactly the hash shown. The rules name approver groups (`approver_groups`). The decisions
//! themselves are `fiscus_actions::steps::policies`.

use std::fmt::Write as _;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_actions::rules::bank_accounts::VersionState;
use fiscus_actions::rules::policy::{Policy, Rule};
use fiscus_actions::tables::approval_policies::{self as store, PolicyVersion};
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::Failure;
use serde::Deserialize;

use super::flash::{self, Notice};
use super::form::ConsoleForm;
use super::html::{self, escape, page};
use super::session::OperatorSession;
use fiscus_http::AppState;

const TITLE: &str = "Approval policy";

pub(crate) fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.")
}

pub(crate) fn refused(failure: Failure) -> Response {
    match failure {
        Failure::Invalid(faults) => {
            let text = faults.iter().map(|(_, why)| why.as_str()).collect::<Vec<_>>().join("; ");
            html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Not accepted", &text)
        }
        Failure::Refused { detail, .. } => html::error_page(StatusCode::CONFLICT, "Refused", &detail),
        Failure::Decision(r) => html::error_page(StatusCode::FORBIDDEN, "Refused", &r.to_string()),
        Failure::NotFound => html::error_page(StatusCode::NOT_FOUND, "Not found", "No such version in this workspace."),
        e => {
            tracing::warn!(error = ?e, "an approval policy change was not recorded");
            html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing changed. Try again.")
        }
    }
}

/// A rule as a person reads it: when, then.
fn rule_row(rule: &Rule) -> String {
    let w = &rule.when;
    let mut when: Vec<String> = Vec::new();
    let list = |items: Vec<String>| items.join(", ");
    if let Some(k) = &w.kinds {
        when.push(format!("kind is {}", list(k.iter().map(|k| k.as_str().replace('_', " ")).collect())));
    }
    if let Some(c) = &w.connectors {
        when.push(format!("connector is {}", list(c.clone())));
    }
    if let Some(m) = &w.execution_modes {
        when.push(format!("mode is {}", list(m.iter().map(|m| m.as_str().replace('_', " ")).collect())));
    }
    if let Some(c) = &w.currencies {
        when.push(format!("currency is {}", list(c.clone())));
    }
    let money = |code: &str, minor: i64| {
        fiscus_domain::money::Currency::parse(code)
            .map_or_else(|| format!("{code} {minor}"), |c| fiscus_domain::money::format_for_people(minor, c))
    };
    if let Some(b) = &w.amount_at_least_minor {
        when.push(format!("amount at least {}", list(b.iter().map(|(c, m)| money(c, *m)).collect())));
    }
    if let Some(b) = &w.amount_below_minor {
        when.push(format!("amount below {}", list(b.iter().map(|(c, m)| money(c, *m)).collect())));
    }
    if let Some(c) = &w.counterparty {
        if let Some(d) = c.new_within_days {
            when.push(format!("counterparty new in the last {d} days"));
        }
        if let Some(d) = c.bank_details_changed_within_days {
            when.push(format!("bank details changed in the last {d} days"));
        }
        if let Some(cs) = &c.countries {
            when.push(format!("account in {}", list(cs.clone())));
        }
    }
    if let Some(p) = &w.proposers {
        when.push(format!("proposed by {}", list(p.clone())));
    }
    let then = match (&rule.require, &rule.refuse) {
        (_, Some(reason)) => format!("<strong>refuse</strong>: {}", escape(reason)),
        (Some(r), None) => {
            let mut parts: Vec<String> =
                r.groups.iter().map(|g| format!("{} of {}", g.count, escape(&g.group))).collect();
            if let Some(q) = r.quorum {
                parts.push(format!("{q} people in all"));
            }
            if let Some(h) = r.approval_expires_after_hours {
                parts.push(format!("approvals count for {h} hours"));
            }
            parts.join("; ")
        }
        (None, None) => String::new(),
    };
    format!(
        "<tr><th scope=\"row\"><code>{name}</code>{desc}</th><td>{when}</td><td>{then}</td></tr>",
        name = escape(&rule.name),
        desc = rule
            .description
            .as_ref()
            .map(|d| format!("<br><span class=\"muted\">{}</span>", escape(d)))
            .unwrap_or_default(),
        when = if when.is_empty() { "every action".to_string() } else { escape(&when.join("; ")) },
    )
}

fn rules_table(id: &str, policy: &Policy) -> String {
    if policy.rules.is_empty() {
        return "<p>No rules: every action needs its risk tier's quorum.</p>".into();
    }
    let rows: String = policy.rules.iter().map(rule_row).collect();
    format!("<table id=\"{id}\"><tr><th>Rule</th><th>When</th><th>Then</th></tr>{rows}</table>")
}

fn version_header(op: &OperatorSession, v: &PolicyVersion) -> String {
    let decided = v
        .decision
        .as_ref()
        .map(|(by, at, note)| {
            format!(
                "; decided by {} on {}{}",
                escape(&by.label()),
                op.time(*at),
                note.as_ref().map(|n| format!(" ({})", escape(n))).unwrap_or_default()
            )
        })
        .unwrap_or_default();
    format!(
        "<p>Version {n} <span class=\"status\" data-state=\"{s}\">{s}</span>, written by {by} on {at}{decided}. Hash {hash}</p>",
        n = v.version,
        s = v.state.as_str(),
        by = escape(&v.record.created_by.label()),
        at = op.time(v.record.created_at),
        hash = html::hash(&v.record.content_hash),
    )
}

/// Which environment's policy a page shows (the sandbox's unless named).
#[derive(Deserialize)]
pub struct PolicyQuery {
    #[serde(default)]
    environment: Option<String>,
}

/// The policy of one environment: in force, awaiting a second admin, and the form to write a change.
pub async fn show(State(state): State<AppState>, op: OperatorSession, Query(q): Query<PolicyQuery>) -> Response {
    let env = q.environment.as_deref().and_then(Environment::parse).unwrap_or(Environment::Sandbox);
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let Ok(versions) = store::versions(&mut conn, state.store.seal_key(), &tenant).await else { return unavailable() };
    let active = versions.iter().find(|v| v.state == VersionState::Active);
    let pending = versions.iter().find(|v| v.state == VersionState::Pending);
    let other = match env {
        Environment::Sandbox => Environment::Production,
        Environment::Production => Environment::Sandbox,
    };
    let mut body = format!(
        "<p>Who must approve a Financial Action in <strong>{env}</strong> is decided by these rules: an action needs \
         the strictest requirement of every rule it matches, and never less than its risk tier's quorum (the default \
         where no rule matches). A change takes effect when a second admin approves it; a stricter rule then applies \
         to actions still awaiting approval or execution, a looser one only to new proposals. \
         <a href=\"/console/approval-policies?environment={other}\">The {other} policy</a> · \
         <a href=\"/console/approver-groups\">Approver groups</a></p>",
        env = env.as_str(),
        other = other.as_str(),
    );
    body.push_str("<h2>In force</h2>");
    match active {
        Some(v) => {
            body.push_str(&version_header(&op, v));
            body.push_str(&rules_table("rules-in-force", &v.record.body));
        }
        None => body.push_str(
            "<p id=\"rules-in-force\">No policy has been approved: every action needs its risk tier's quorum \
             (T1 one person, T2 two).</p>",
        ),
    }
    if let Some(v) = pending {
        body.push_str("<h2>Change awaiting a second admin</h2>");
        body.push_str(&version_header(&op, v));
        body.push_str(&rules_table("rules-pending", &v.record.body));
        let may = op.role == Role::Admin && v.record.created_by.id != op.operator_id;
        if may {
            let _ = write!(
                body,
                "<form method=\"post\" action=\"/console/approval-policies/{id}/decision\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                 <input type=\"hidden\" name=\"shown_hash\" value=\"{hash}\">\
                 <label>Note <input type=\"text\" name=\"note\" maxlength=\"500\"></label>\
                 <button type=\"submit\" name=\"decision\" value=\"approve\" class=\"approve\">Put this version in force</button>\
                 <button type=\"submit\" name=\"decision\" value=\"reject\" class=\"deny\">Reject</button></form>",
                id = escape(&v.record.id),
                csrf = escape(&op.csrf_token),
                env = env.as_str(),
                hash = escape(&v.record.content_hash),
            );
        } else {
            body.push_str("<p class=\"muted\">A second admin, not its author, decides this change.</p>");
        }
    }
    if op.role == Role::Admin && pending.is_none() {
        let current = active.map(|v| v.record.body.clone()).unwrap_or_default();
        let text = serde_json::to_string_pretty(&current).unwrap_or_default();
        let _ = write!(
            body,
            "<h2>Write a change</h2><p>The whole policy as JSON (the format and an example are in \
             <code>docs/approval-policies.md</code>). A second admin must approve it before it applies.</p>\
             <form method=\"post\" action=\"/console/approval-policies\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
             <label for=\"policy\">Policy</label><textarea id=\"policy\" name=\"policy\" rows=\"20\" cols=\"80\">{text}</textarea>\
             <button type=\"submit\">Propose this version</button></form>",
            csrf = escape(&op.csrf_token),
            env = env.as_str(),
            text = escape(&text),
        );
    }
    let earlier: Vec<&PolicyVersion> =
        versions.iter().filter(|v| matches!(v.state, VersionState::Superseded | VersionState::Rejected)).collect();
    if !earlier.is_empty() {
        body.push_str("<h2>Earlier versions</h2>");
        for v in earlier.iter().rev() {
            body.push_str(&version_header(&op, v));
        }
    }
    page(TITLE, op.nav(), &body)
}

#[derive(Deserialize)]
pub struct ProposeForm {
    csrf: String,
    environment: String,
    policy: String,
}

pub async fn propose(
    State(state): State<AppState>,
    op: OperatorSession,
    ConsoleForm(form): ConsoleForm<ProposeForm>,
) -> Response {
    if let Err(r) = op.check_csrf(&form.csrf) {
        return r;
    }
    let Some(env) = Environment::parse(&form.environment) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown environment.");
    };
    if form.policy.len() > 256 * 1024 {
        return html::error_page(StatusCode::PAYLOAD_TOO_LARGE, "Refused", "The policy is larger than 256 KiB.");
    }
    let policy: Policy = match serde_json::from_str(&form.policy) {
        Ok(p) => p,
        Err(e) => {
            return html::error_page(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Not accepted",
                &format!("The policy is not in the format: {e}"),
            );
        }
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = async {
        let mut tx = state.store.begin().await?;
        let v = fiscus_actions::steps::policies::propose(&mut tx, &tenant, &op.caller(), op.role, policy).await?;
        tx.commit().await?;
        Ok::<_, Failure>(v)
    }
    .await;
    match result {
        Ok(v) => flash::redirect(
            &format!("/console/approval-policies?environment={}", env.as_str()),
            Notice::Proposed,
            &format!("Version {} of the approval policy", v.version),
        ),
        Err(e) => refused(e),
    }
}

#[derive(Deserialize)]
pub struct DecisionForm {
    csrf: String,
    environment: String,
    shown_hash: String,
    decision: String,
    #[serde(default)]
    note: Option<String>,
}

pub async fn decide(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    ConsoleForm(form): ConsoleForm<DecisionForm>,
) -> Response {
    if let Err(r) = op.check_csrf(&form.csrf) {
        return r;
    }
    let Some(env) = Environment::parse(&form.environment) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown environment.");
    };
    let approve = match form.decision.as_str() {
        "approve" => true,
        "reject" => false,
        _ => return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision."),
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = async {
        let mut tx = state.store.begin().await?;
        let decided = fiscus_actions::steps::policies::decide(
            &mut tx,
            &state.settings,
            &tenant,
            &op.caller(),
            op.role,
            &id,
            approve,
            form.note.as_deref(),
            &form.shown_hash,
        )
        .await?;
        tx.commit().await?;
        Ok::<_, Failure>(decided)
    }
    .await;
    match result {
        Ok(_) => flash::redirect(
            &format!("/console/approval-policies?environment={}", env.as_str()),
            Notice::Decided,
            "the approval policy",
        ),
        Err(e) => refused(e),
    }
}
