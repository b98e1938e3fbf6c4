//! Batch approval: a person filters the queue in the database (kind, connector, currency, amount range,
//! counterparty, proposer, a payment run's reference prefix, age), reviews a summary of what matched (count,
//! totals per currency, the largest items, counterparties new or with bank details changed lately, what each
//! item requires and what this person's approval does to it), and approves or denies the selection with one
//! fresh authenticator code. Each action still gets its own decision, bound to the hashes this page showed for
//! it (`fiscus_actions::steps::batch`); the batch is one sealed record, shown after.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_actions::rules::approval::Decision;
use fiscus_actions::rules::policy::Approval;
use fiscus_actions::steps::Loaded;
use fiscus_actions::steps::batch::{MAX_ITEMS, Shown, decide_batch};
use fiscus_domain::clock::now_micros;
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::{Currency, format_for_people};
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::Failure;

use super::batch_filter::BatchQuery;
use super::form::ConsoleForm;
use super::html::{self, EnvQuery, escape, page};
use super::session::OperatorSession;
use fiscus_http::AppState;

const TITLE: &str = "Batch approval";
const RECENT_DAYS: i64 = 30;

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.")
}

/// Why this person cannot decide an item in the batch, if they cannot.
fn not_for(op: &OperatorSession, l: &Loaded, settings: &fiscus_kernel::Settings) -> Option<&'static str> {
    let a = &l.action;
    if a.proposed_by.id == op.operator_id {
        return Some("you proposed it");
    }
    if l.approvals().iter().any(|x| x.operator_id == op.operator_id) {
        return Some("you approved it already");
    }
    if l.requirement(settings).refused.is_some() {
        return Some("a rule of the approval policy refuses it: deny it on its own page");
    }
    None
}

pub async fn show(State(state): State<AppState>, op: OperatorSession, Query(q): Query<BatchQuery>) -> Response {
    let env = q.environment();
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let mut body = format!(
        "<p>Filter the actions awaiting approval, review what matched, and decide them together with one code from \
         your authenticator. Each action still gets its own decision, bound to exactly what is shown here; one that \
         changes before you decide is left out and named. Environment: <strong>{e}</strong> \
         (<a href=\"/console/approvals/batch?environment={o}\">{o}</a>).</p>{form}",
        e = env.as_str(),
        o = match env {
            Environment::Sandbox => "production",
            Environment::Production => "sandbox",
        },
        form = q.form(env),
    );
    let filter = match q.filter() {
        Ok(f) => f,
        Err(faults) => {
            let items: String = faults.iter().map(|f| format!("<li>{}</li>", escape(f))).collect();
            body.push_str(&format!(
                "<div class=\"error\" role=\"alert\"><p>Correct the filter:</p><ul>{items}</ul></div>"
            ));
            return page(TITLE, op.nav(), &body);
        }
    };
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let key = state.store.seal_key();
    let Ok(mut actions) =
        fiscus_actions::tables::actions::pending_matching(&mut conn, key, &tenant, &filter, MAX_ITEMS as u32).await
    else {
        return unavailable();
    };
    let more = actions.len() > MAX_ITEMS;
    actions.truncate(MAX_ITEMS);
    let Ok(loaded) = Loaded::load_page(&mut conn, key, &tenant, actions).await else { return unavailable() };
    let Ok(my_groups) =
        fiscus_actions::tables::approver_groups::groups_of(&mut conn, &op.workspace_id, &op.operator_id).await
    else {
        return unavailable();
    };
    let (eligible, excluded): (Vec<&Loaded>, Vec<&Loaded>) =
        loaded.iter().partition(|l| not_for(&op, l, &state.settings).is_none());
    if loaded.is_empty() {
        body.push_str("<p id=\"batch-summary\">Nothing awaiting approval matches this filter.</p>");
        return page(TITLE, op.nav(), &body);
    }
    // What each counterparty is: its name, and whether it is new or its bank details changed lately.
    let now = now_micros();
    let mut flags: BTreeMap<String, (String, Option<String>)> = BTreeMap::new();
    let parties: BTreeSet<&str> = eligible.iter().map(|l| l.action.envelope.counterparty.as_str()).collect();
    for cp in parties {
        let (name, flag) = if cp.starts_with("cpt_") {
            let name = match fiscus_actions::tables::bank_accounts::get_counterparty(&mut conn, key, &tenant, cp).await
            {
                Ok(c) => c.body.name,
                Err(_) => return unavailable(),
            };
            let one = eligible.iter().find(|l| l.action.envelope.counterparty == cp).expect("a party of the batch");
            let Ok(facts) =
                fiscus_actions::steps::policies::counterparty_facts(&mut conn, key, &tenant, &one.action.envelope)
                    .await
            else {
                return unavailable();
            };
            let recent = |at: Option<i64>| at.is_some_and(|at| now - at < RECENT_DAYS * 86_400_000_000);
            let flag = if facts.first_approved_at.is_none() {
                Some("no approved bank details".to_string())
            } else if recent(facts.first_approved_at) {
                Some(format!("new: first bank details approved {}", op.time(facts.first_approved_at.unwrap_or(now))))
            } else if recent(facts.details_approved_at) {
                Some(format!("bank details changed {}", op.time(facts.details_approved_at.unwrap_or(now))))
            } else {
                None
            };
            (name, flag)
        } else {
            (cp.to_string(), Some("named only by text: Fiscus holds no bank details for it".to_string()))
        };
        flags.insert(cp.to_string(), (name, flag));
    }
    drop(conn);
    let _ = write!(
        body,
        "<section aria-labelledby=\"summary-h\"><h2 id=\"summary-h\">Summary</h2><p id=\"batch-summary\"><strong>{n}</strong> \
         action{s} you can decide{more}.</p>",
        n = eligible.len(),
        s = if eligible.len() == 1 { "" } else { "s" },
        more = if more {
            format!("; more than {MAX_ITEMS} match, so narrow the filter to see the rest")
        } else {
            String::new()
        },
    );
    let mut totals: BTreeMap<&str, (i64, Currency)> = BTreeMap::new();
    for l in &eligible {
        let e = &l.action.envelope;
        let t = totals.entry(e.currency.code()).or_insert((0, e.currency));
        t.0 = t.0.saturating_add(e.amount_minor);
    }
    let totals: Vec<String> = totals.values().map(|(m, c)| format_for_people(*m, *c)).collect();
    let _ = write!(body, "<p id=\"batch-totals\">In all: {}.</p>", escape(&totals.join("; ")));
    // What each requires, and what this person's approval does to it.
    let mut needs: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for l in &eligible {
        let requirement = l.requirement(&state.settings);
        let mut approvals = l.approvals();
        approvals.push(Approval { operator_id: &op.operator_id, groups: &my_groups, at: now });
        let met = requirement.standing(&approvals, &l.barred(), now).met;
        let entry = needs.entry(requirement.in_words()).or_default();
        entry.0 += 1;
        if met {
            entry.1 += 1;
        }
    }
    body.push_str("<h3>What they need</h3><ul id=\"batch-requirements\">");
    for (words, (n, met)) in &needs {
        let _ = write!(
            body,
            "<li>{n} need{s} {w}: your approval completes {met}{rest}</li>",
            s = if *n == 1 { "s" } else { "" },
            w = escape(words),
            rest = if met < n { format!("; {} will still need someone else", n - met) } else { String::new() },
        );
    }
    body.push_str("</ul>");
    let flagged: Vec<String> = flags
        .iter()
        .filter_map(|(id, (name, flag))| {
            let id = if id == name { String::new() } else { format!(" <small>{}</small>", escape(id)) };
            flag.as_ref().map(|f| format!("<li><strong>{}</strong>{id}: {}</li>", escape(name), escape(f)))
        })
        .collect();
    if !flagged.is_empty() {
        let _ = write!(body, "<h3>Counterparties to look at</h3><ul id=\"batch-flags\">{}</ul>", flagged.join(""));
    }
    let mut largest: Vec<&&Loaded> = eligible.iter().collect();
    largest.sort_by_key(|l| std::cmp::Reverse(l.action.envelope.amount_minor));
    body.push_str("<h3>The largest</h3><ol id=\"batch-largest\">");
    for l in largest.iter().take(10) {
        let e = &l.action.envelope;
        let _ = write!(
            body,
            "<li>{} to {} <small>({})</small></li>",
            escape(&format_for_people(e.amount_minor, e.currency)),
            escape(flags.get(&e.counterparty).map_or(e.counterparty.as_str(), |f| f.0.as_str())),
            escape(&e.reference)
        );
    }
    body.push_str("</ol></section>");
    if !excluded.is_empty() {
        body.push_str("<h2>Not in this batch</h2><ul id=\"batch-excluded\">");
        for l in &excluded {
            let _ = write!(
                body,
                "<li><a href=\"/console/actions/{id}?environment={env}\">{id}</a>: {why}</li>",
                id = escape(&l.action.id),
                env = env.as_str(),
                why = not_for(&op, l, &state.settings).unwrap_or_default(),
            );
        }
        body.push_str("</ul>");
    }
    if eligible.is_empty() || !op.role.may_decide() {
        if !op.role.may_decide() {
            body.push_str("<p class=\"muted\">Only approvers and admins decide.</p>");
        }
        return page(TITLE, op.nav(), &body);
    }
    let items: Vec<String> =
        eligible.iter().map(|l| format!("{}:{}:{}", l.action.id, l.action.envelope_hash, l.check_set_hash)).collect();
    let filter_fields: String = q
        .as_record()
        .iter()
        .map(|(k, v)| format!("<input type=\"hidden\" name=\"f_{k}\" value=\"{}\">", escape(v)))
        .collect();
    let _ = write!(
        body,
        "<h2>Decide</h2><form method=\"post\" action=\"/console/approvals/batch\" id=\"batch-form\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
         <input type=\"hidden\" name=\"items\" value=\"{items}\">{filter_fields}\
         <label>Reason (kept with every decision) <input type=\"text\" name=\"reason\" maxlength=\"500\"></label>\
         <label>Code from your authenticator <input type=\"text\" name=\"code\" inputmode=\"numeric\" \
         autocomplete=\"one-time-code\" pattern=\"[0-9]{{6}}\" required></label>\
         <button type=\"submit\" name=\"decision\" value=\"approve\" class=\"approve\" id=\"approve-batch\">Approve {what}</button>\
         <button type=\"submit\" name=\"decision\" value=\"deny\" class=\"deny\">Deny {what}</button></form>",
        csrf = escape(&op.csrf_token),
        env = env.as_str(),
        items = escape(&items.join(" ")),
        what =
            if eligible.len() == 1 { "this action".to_string() } else { format!("these {} actions", eligible.len()) },
    );
    body.push_str(&item_table(&eligible, &flags, env, &state.settings));
    page(TITLE, op.nav(), &body)
}

fn item_table(
    items: &[&Loaded],
    flags: &BTreeMap<String, (String, Option<String>)>,
    env: Environment,
    settings: &fiscus_kernel::Settings,
) -> String {
    let mut rows = String::new();
    for l in items {
        let (a, e) = (&l.action, &l.action.envelope);
        let _ = write!(
            rows,
            "<tr><td><a href=\"/console/actions/{id}?environment={env}\">{reference}</a><br><small>{id}</small></td>\
             <td>{kind}</td><td class=\"amount\">{amount}</td><td>{cp}</td><td>{tier}</td><td>{needs}</td></tr>",
            id = escape(&a.id),
            env = env.as_str(),
            reference = escape(&e.reference),
            kind = e.kind.as_str().replace('_', " "),
            amount = escape(&format_for_people(e.amount_minor, e.currency)),
            cp = escape(flags.get(&e.counterparty).map_or(e.counterparty.as_str(), |f| f.0.as_str())),
            tier = e.risk_tier.as_str(),
            needs = escape(&l.requirement(settings).in_words()),
        );
    }
    format!(
        "<table id=\"batch-items\"><caption>The actions this batch decides</caption><tr><th scope=\"col\">Reference</th>\
         <th scope=\"col\">Kind</th><th scope=\"col\">Amount</th><th scope=\"col\">Counterparty</th><th scope=\"col\">Tier</th>\
         <th scope=\"col\">Who must approve</th></tr>{rows}</table>"
    )
}

/// The decision form: the items as shown, the person's code and reason, and the filter for the record.
pub async fn decide(
    State(state): State<AppState>,
    op: OperatorSession,
    ConsoleForm(form): ConsoleForm<Vec<(String, String)>>,
) -> Response {
    let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    if let Err(r) = op.check_csrf(field("csrf").unwrap_or_default()) {
        return r;
    }
    let refused = |status: StatusCode, message: &str| html::error_page(status, "Refused", message);
    if !op.role.may_decide() {
        return refused(StatusCode::FORBIDDEN, "Only approvers and admins decide.");
    }
    let Some(env) = field("environment").and_then(Environment::parse) else {
        return refused(StatusCode::UNPROCESSABLE_ENTITY, "Unknown environment.");
    };
    let Some(decision) = field("decision").and_then(Decision::parse) else {
        return refused(StatusCode::UNPROCESSABLE_ENTITY, "Unknown decision.");
    };
    let mut shown = Vec::new();
    for item in field("items").unwrap_or_default().split_whitespace() {
        let mut parts = item.split(':');
        let (Some(id), Some(e1), Some(e2), Some(c1), Some(c2), None) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return refused(StatusCode::UNPROCESSABLE_ENTITY, "The list of actions could not be read.");
        };
        if !fiscus_domain::ids::is_id_of("act", id) {
            return refused(StatusCode::UNPROCESSABLE_ENTITY, "The list of actions could not be read.");
        }
        shown.push(Shown {
            action_id: id.into(),
            envelope_hash: format!("{e1}:{e2}"),
            check_set_hash: format!("{c1}:{c2}"),
        });
    }
    if shown.is_empty() || shown.len() > MAX_ITEMS {
        return refused(StatusCode::UNPROCESSABLE_ENTITY, &format!("A batch decides 1 to {MAX_ITEMS} actions."));
    }
    if let Err(r) = super::step_up::confirm(&state, &op, field("code").unwrap_or_default()).await {
        return r;
    }
    let filter: BTreeMap<String, String> =
        form.iter().filter_map(|(k, v)| k.strip_prefix("f_").map(|k| (k.to_string(), v.clone()))).collect();
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = decide_batch(
        &state.store,
        &state.settings,
        &tenant,
        &op.caller(),
        op.role,
        decision,
        &shown,
        filter,
        field("reason"),
    )
    .await;
    match result {
        Ok(batch) => super::flash::redirect(
            &format!("/console/approvals/batch/{}?environment={}", batch.id, env.as_str()),
            super::flash::Notice::Decided,
            &format!("{} actions", batch.body.decided.len()),
        ),
        Err(Failure::Invalid(e)) => refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            &e.iter().map(|(f, w)| format!("{f}: {w}")).collect::<Vec<_>>().join("; "),
        ),
        Err(e) => {
            tracing::warn!(error = ?e, "a batch of decisions stopped");
            html::error_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Not finished",
                "The batch stopped before its end. Decisions already recorded stand; open the queue again to see what is left.",
            )
        }
    }
}

/// A batch as recorded: what was decided, what was left out and why, and its seal.
pub async fn result(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    Query(q): Query<EnvQuery>,
) -> Response {
    let Some(env) = Environment::parse(&q.environment) else {
        return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such batch in this workspace.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let b = match fiscus_actions::tables::approval_policies::get_batch(&mut conn, state.store.seal_key(), &tenant, &id)
        .await
    {
        Ok(b) => b,
        Err(fiscus_store::StoreError::NotFound) => {
            return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such batch in this workspace.");
        }
        Err(_) => return unavailable(),
    };
    use fiscus_actions::tables::approval_policies::ItemOutcome;
    let count = |o: ItemOutcome| b.body.decided.iter().filter(|d| d.outcome == o).count();
    let mut body = format!(
        "<p id=\"batch-result\">{who} decided <strong>{n}</strong> action{s} on {at}: {approved} approved, {recorded} \
         still awaiting other people, {denied} denied.</p><p>The batch is sealed record <code>{id}</code> (hash {hash}), \
         a leaf of the workspace's transparency log: <code>GET /api/v2/evidence/records/{id}/proof</code> proves it.</p>",
        who = escape(&b.created_by.label()),
        n = b.body.decided.len(),
        s = if b.body.decided.len() == 1 { "" } else { "s" },
        at = op.time(b.created_at),
        approved = count(ItemOutcome::Approved),
        recorded = count(ItemOutcome::Recorded),
        denied = count(ItemOutcome::Denied),
        id = escape(&b.id),
        hash = html::hash(&b.content_hash),
    );
    if !b.body.left_out.is_empty() {
        body.push_str("<h2>Left out</h2><ul id=\"batch-left-out\">");
        for l in &b.body.left_out {
            let _ = write!(
                body,
                "<li><a href=\"/console/actions/{id}?environment={env}\">{id}</a>: {why}</li>",
                id = escape(&l.action_id),
                env = env.as_str(),
                why = escape(&l.reason)
            );
        }
        body.push_str("</ul>");
    }
    let _ = write!(
        body,
        "<p><a href=\"/console/approvals/batch?environment={}\">Back to batch approval</a></p>",
        env.as_str()
    );
    page("Batch decided", op.nav(), &body)
}
