//! Approver groups at the console ("treasury", "cfo"): admins create them and add or remove the operators who
//! may decide; the approval policy's rules name them. What counts at a decision is the membership then, sealed
//! with it, so a change here never alters a decision already given. Every change is an audit event.

use std::fmt::Write as _;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_actions::tables::approver_groups;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::people::Role;
use fiscus_kernel::governed::Failure;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use serde::Deserialize;
use serde_json::json;

use super::approval_policies::{refused, unavailable};
use super::flash::{self, Notice};
use super::form::ConsoleForm;
use super::html::{self, escape, page};
use super::session::OperatorSession;
use fiscus_http::AppState;

const GROUPS: &str = "Approver groups";

/// The workspace's approver groups and their members; admins create groups and change members.
pub async fn groups(State(state): State<AppState>, op: OperatorSession) -> Response {
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let Ok(groups) = approver_groups::all(&mut conn, &op.workspace_id).await else { return unavailable() };
    let Ok(operators) = fiscus_store::operators::list(&mut conn, &op.workspace_id).await else { return unavailable() };
    let email = |id: &str| operators.iter().find(|o| o.id == id).map_or_else(|| id.to_string(), |o| o.email.clone());
    let admin = op.role == Role::Admin;
    let mut body = String::from(
        "<p>Rules of the <a href=\"/console/approval-policies\">approval policy</a> name these groups (\"2 of treasury\"). \
         What counts is an approver's membership when they decide, sealed with the decision.</p>",
    );
    if groups.is_empty() {
        body.push_str("<p>No groups yet.</p>");
    }
    for g in &groups {
        let mut members = String::new();
        for m in &g.members {
            let remove = if admin {
                format!(
                    " <form class=\"inline\" method=\"post\" action=\"/console/approver-groups/{gid}/members\">\
                     <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"operator_id\" value=\"{m}\">\
                     <button type=\"submit\" name=\"change\" value=\"remove\">Remove</button></form>",
                    gid = escape(&g.id),
                    csrf = escape(&op.csrf_token),
                    m = escape(m),
                )
            } else {
                String::new()
            };
            let _ = write!(members, "<li>{}{remove}</li>", escape(&email(m)));
        }
        let add = if admin {
            let options: String = operators
                .iter()
                .filter(|o| !g.members.contains(&o.id) && o.role.may_decide())
                .map(|o| format!("<option value=\"{}\">{}</option>", escape(&o.id), escape(&o.email)))
                .collect();
            if options.is_empty() {
                String::new()
            } else {
                format!(
                    "<form method=\"post\" action=\"/console/approver-groups/{gid}/members\">\
                     <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><label>Add <select name=\"operator_id\">{options}</select></label>\
                     <button type=\"submit\" name=\"change\" value=\"add\">Add to {name}</button></form>",
                    gid = escape(&g.id),
                    csrf = escape(&op.csrf_token),
                    name = escape(&g.name),
                )
            }
        } else {
            String::new()
        };
        let _ = write!(
            body,
            "<section class=\"group\" data-group=\"{name}\"><h2><code>{name}</code></h2>{desc}<ul>{members}</ul>{add}</section>",
            name = escape(&g.name),
            desc = g.description.as_ref().map(|d| format!("<p>{}</p>", escape(d))).unwrap_or_default(),
            members = if members.is_empty() { "<li>No members.</li>".into() } else { members },
        );
    }
    if admin {
        let _ = write!(
            body,
            "<h2>New group</h2><form method=\"post\" action=\"/console/approver-groups\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <label>Name <input type=\"text\" name=\"name\" required pattern=\"[a-z0-9][a-z0-9_-]{{0,63}}\" maxlength=\"64\"></label>\
             <label>Description <input type=\"text\" name=\"description\" maxlength=\"200\"></label>\
             <button type=\"submit\">Create group</button></form>",
            csrf = escape(&op.csrf_token),
        );
    }
    page(GROUPS, op.nav(), &body)
}

#[derive(Deserialize)]
pub struct GroupForm {
    csrf: String,
    name: String,
    #[serde(default)]
    description: Option<String>,
}

pub async fn create_group(
    State(state): State<AppState>,
    op: OperatorSession,
    ConsoleForm(form): ConsoleForm<GroupForm>,
) -> Response {
    if let Err(r) = op.check_csrf(&form.csrf) {
        return r;
    }
    if op.role != Role::Admin {
        return html::error_page(StatusCode::FORBIDDEN, "Refused", "Only admins manage approver groups.");
    }
    let name = form.name.trim();
    let valid = !name.is_empty()
        && name.len() <= 64
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    let description = form.description.as_deref().map(str::trim).filter(|d| !d.is_empty());
    if !valid || description.is_some_and(|d| d.chars().count() > 200) {
        return html::error_page(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Not accepted",
            "A group's name is 1 to 64 lower-case letters, digits, `-` and `_`; its description at most 200 characters.",
        );
    }
    let result = async {
        let mut tx = state.store.begin().await?;
        let now = now_micros();
        let id = approver_groups::create(&mut tx, &op.workspace_id, name, description, &op.caller().actor.label(), now)
            .await?;
        group_audit(&mut tx, &op, &id, json!({ "change": "created", "name": name }), now).await?;
        tx.commit().await?;
        Ok::<_, Failure>(())
    }
    .await;
    match result {
        Ok(()) => flash::redirect("/console/approver-groups", Notice::Decided, &format!("the group {name}")),
        Err(Failure::Store(fiscus_store::StoreError::Conflict(_))) => {
            html::error_page(StatusCode::CONFLICT, "Refused", "The workspace has a group of that name.")
        }
        Err(e) => refused(e),
    }
}

#[derive(Deserialize)]
pub struct MemberForm {
    csrf: String,
    operator_id: String,
    change: String,
}

pub async fn change_member(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(group_id): Path<String>,
    ConsoleForm(form): ConsoleForm<MemberForm>,
) -> Response {
    if let Err(r) = op.check_csrf(&form.csrf) {
        return r;
    }
    if op.role != Role::Admin {
        return html::error_page(StatusCode::FORBIDDEN, "Refused", "Only admins manage approver groups.");
    }
    let result = async {
        let mut tx = state.store.begin().await?;
        let now = now_micros();
        let by = op.caller().actor.label();
        let changed = match form.change.as_str() {
            "add" => {
                approver_groups::add_member(&mut tx, &op.workspace_id, &group_id, &form.operator_id, &by, now).await?
            }
            "remove" => approver_groups::remove_member(&mut tx, &op.workspace_id, &group_id, &form.operator_id).await?,
            _ => return Err(Failure::Invalid(vec![("change", "add or remove".into())])),
        };
        if changed {
            let details = json!({ "change": form.change, "operator_id": form.operator_id });
            group_audit(&mut tx, &op, &group_id, details, now).await?;
        }
        tx.commit().await?;
        Ok::<_, Failure>(())
    }
    .await;
    match result {
        Ok(()) => flash::redirect("/console/approver-groups", Notice::Decided, "the group's members"),
        Err(Failure::NotFound) => {
            html::error_page(StatusCode::NOT_FOUND, "Not found", "No such group or operator in this workspace.")
        }
        Err(e) => refused(e),
    }
}

async fn group_audit(
    tx: &mut fiscus_store::WriteTx,
    op: &OperatorSession,
    group_id: &str,
    details: serde_json::Value,
    at: i64,
) -> Result<(), Failure> {
    let entry = AuditEntry {
        workspace_id: &op.workspace_id,
        environment: None,
        action: Change::ApproverGroupChanged.into(),
        subject: Some(group_id),
        details,
        occurred_at: at,
    };
    audit(tx, &op.caller(), &entry).await?;
    Ok(())
}
