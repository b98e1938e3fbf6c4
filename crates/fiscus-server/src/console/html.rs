//! Server-rendered pages: no scripts, no build step, nothing fetched from elsewhere.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:64rem;margin:1.5rem auto;padding:0 1rem;color:#1d1d1f}\
header{display:flex;justify-content:space-between;align-items:center;border-bottom:1px solid #ddd;margin-bottom:1rem}\
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.35rem;text-align:left;vertical-align:top}\
code{font-family:ui-monospace,monospace;background:#f4f4f6;padding:0 .2rem;border-radius:3px;word-break:break-all}\
form.inline{display:inline}label{display:block;margin:.5rem 0}input[type=text],input[type=password],input[type=email]{width:22rem;padding:.3rem}\
button{padding:.4rem .9rem;margin:.3rem .3rem 0 0}.approve{background:#0a6;color:#fff;border:0}.deny{background:#c22;color:#fff;border:0}\
.error{color:#c22;font-weight:600}.muted{color:#666}";

/// A whole page. `nav` is shown for signed-in operators.
pub fn page(title: &str, nav: Option<(&str, &str, &str)>, body: &str) -> Response {
    let nav = match nav {
        Some((email, role, csrf)) => format!(
            "<nav><span class=\"muted\">{} ({})</span> · <a href=\"/console\">Pending approvals</a> · <a href=\"/console/delegations\">Delegations</a> · <a href=\"/console/clients\">Signed clients</a> · <a href=\"/console/webhooks\">Webhooks</a> · <a href=\"/console/model-portfolios\">Model portfolios</a> · <a href=\"/console/rebalance-proposals\">Rebalances</a> · <a href=\"/console/lqm-promotions\">Model promotions</a> · <a href=\"/console/qlms\">QLMs</a> · <a href=\"/console/workflow-reviews\">Workflow reviews</a> · <a href=\"/console/workflow-tools\">Workflow tools</a> · <a href=\"/console/agent-spaces\">Agent spaces</a> · <a href=\"/console/calls\">Client calls</a> · <a href=\"/console/actions/new\">Propose</a> · <a href=\"/console/production\">Production access</a> · <a href=\"/console/audit\">Audit trail</a> · \
             <form class=\"inline\" method=\"post\" action=\"/console/logout\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <button type=\"submit\">Sign out</button></form></nav>",
            escape(email),
            escape(role),
            escape(csrf)
        ),
        None => String::new(),
    };
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t} · Fiscus console</title><style>{STYLE}</style></head>\
         <body><header><h1>Fiscus console</h1>{nav}</header><h2>{t}</h2>{body}</body></html>",
        t = escape(title)
    );
    with_page_headers((StatusCode::OK, html).into_response())
}

pub fn error_page(status: StatusCode, title: &str, message: &str) -> Response {
    let mut response = page(title, None, &format!("<p class=\"error\">{}</p>", escape(message)));
    *response.status_mut() = status;
    response
}

/// Console pages are never cached, never framed, and may load nothing from anywhere.
fn with_page_headers(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        ),
    );
    response
}

pub fn redirect(to: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
}

/// The page for a governed change that did not happen: a refusal by a rule (409, its detail), an object
/// not in the workspace (404), anything else (503: nothing was recorded, try again; logged as `what`).
pub fn failure_page(failure: crate::governed::Failure, refused_title: &str, not_found: &str, what: &str) -> Response {
    use crate::governed::Failure;
    match failure {
        Failure::Refused { detail, .. } => error_page(StatusCode::CONFLICT, refused_title, &detail),
        Failure::Decision(r) => error_page(StatusCode::FORBIDDEN, refused_title, &r.to_string()),
        Failure::NotFound => error_page(StatusCode::NOT_FOUND, "Not found", not_found),
        other => {
            tracing::warn!(error = ?other, "{what} was not recorded");
            error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing was recorded. Try again.")
        }
    }
}
