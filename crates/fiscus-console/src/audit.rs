//! The audit trail of the workspace: the latest events of its hash chain, and whether the chain verifies.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use std::fmt::Write as _;

use super::html::{self, escape, page};
use super::session::OperatorSession;
use fiscus_http::AppState;

const SHOWN: i64 = 200;

pub async fn trail(State(state): State<AppState>, op: OperatorSession) -> Response {
    let unavailable =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    let anchor = fiscus_kernel::verify::anchors(&state.settings, &state.store)
        .ok()
        .and_then(|a| a.get(&op.workspace_id).cloned());
    let Ok(report) = fiscus_kernel::verify::verify_anchored(&state, &op.workspace_id, anchor.as_ref()).await else {
        return unavailable();
    };
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let from = (report.events - SHOWN).max(0);
    let Ok(events) = fiscus_store::audit::events_after(&mut conn, &op.workspace_id, from, SHOWN).await else {
        return unavailable();
    };
    let Ok(growth) = fiscus_store::audit::growth(&mut conn, &op.workspace_id, report.events, 120).await else {
        return unavailable();
    };
    let points: Vec<(i64, f64)> = growth.into_iter().map(|(at, seq)| (at, seq as f64)).collect();
    let chart = super::charts::time_line(&super::charts::TimeLine {
        title: "The audit chain's growth",
        y_label: "events in the chain",
        points: &points,
        limit: None,
    });
    let verdict = match &report.result {
        Ok(()) => format!("<p id=\"chain-status\">Chain intact: {} events verified.</p>", report.events),
        Err(b) => {
            format!(
                "<p id=\"chain-status\" class=\"error\">Chain broken: {}</p>",
                escape(&fiscus_kernel::verify::describe(b))
            )
        }
    };
    let mut rows = String::new();
    for fiscus_store::audit::StoredEvent { event: e, hash, .. } in events.iter().rev() {
        let _ = write!(
            rows,
            "<tr><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e.seq,
            op.time(e.occurred_at),
            escape(&e.actor_kind),
            escape(&e.actor_id),
            escape(&e.action),
            escape(e.subject.as_deref().unwrap_or("")),
            html::hash(hash)
        );
    }
    page(
        "Audit trail",
        op.nav(),
        &format!(
            "{verdict}{chart}<h2>Latest events</h2><table><tr><th>#</th><th>At</th><th>Actor</th><th>Action</th><th>Subject</th><th>Hash</th></tr>{rows}</table>"
        ),
    )
}
