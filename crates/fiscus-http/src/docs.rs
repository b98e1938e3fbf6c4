//! `/docs`: a human page rendered on the server from the OpenAPI document, with no scripts and nothing
//! fetched from elsewhere, so it works offline. `/problems/{code}` explains each error code.

use axum::extract::Path;
use axum::response::Html;
use fiscus_domain::error_code::ErrorCode;
use serde_json::Value;
use std::fmt::Write as _;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}\
code,pre{font-family:ui-monospace,monospace;background:#f4f4f6;border-radius:4px}pre{padding:.6rem;overflow:auto}\
.op{border-top:1px solid #ddd;padding:.6rem 0}.m{display:inline-block;min-width:4.2rem;font-weight:700}\
.GET{color:#0a6}.POST{color:#06c}.DELETE{color:#c22}.scope{color:#666}h2{margin-top:2rem}";

pub fn render(doc: &Value) -> String {
    let mut out = String::new();
    let title = doc.pointer("/info/title").and_then(Value::as_str).unwrap_or("API");
    let _ = write!(
        out,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body>\
         <h1>{t}</h1><p>{d}</p><p>Machine-readable: <a href=\"/api/v2/openapi.json\">/api/v2/openapi.json</a> (OpenAPI 3.1). \
         Errors: RFC 9457 problem details; see <a href=\"#problems\">error codes</a>.</p>",
        t = escape(title),
        d = inline_code(&escape(doc.pointer("/info/description").and_then(Value::as_str).unwrap_or(""))),
    );
    let mut by_tag: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    if let Some(paths) = doc.get("paths").and_then(Value::as_object) {
        for (path, item) in paths {
            for method in ["get", "post", "delete"] {
                let Some(op) = item.get(method) else { continue };
                let tag = op.pointer("/tags/0").and_then(Value::as_str).unwrap_or("Other").to_string();
                by_tag.entry(tag).or_default().push(render_operation(path, method, op));
            }
        }
    }
    for (tag, ops) in by_tag {
        let _ = write!(out, "<h2>{}</h2>", escape(&tag));
        for op in ops {
            out.push_str(&op);
        }
    }
    out.push_str("<h2 id=\"problems\">Error codes</h2><table><tr><th>status</th><th>code</th><th>meaning</th></tr>");
    for code in ErrorCode::ALL {
        let (status, c, title) = code.describe();
        let _ = write!(out, "<tr><td>{status}</td><td id=\"{c}\"><code>{c}</code></td><td>{}</td></tr>", escape(title));
    }
    out.push_str("</table></body></html>");
    out
}

/// Turns `backtick` spans of already-escaped text into `<code>` elements.
fn inline_code(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len());
    for (i, part) in escaped.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

fn render_operation(path: &str, method: &str, op: &Value) -> String {
    let upper = method.to_ascii_uppercase();
    let scope = op.pointer("/x-fiscus-scope").and_then(Value::as_str).unwrap_or("client authentication");
    let mut out = format!(
        "<div class=\"op\"><span class=\"m {upper}\">{upper}</span> <code>{}</code> <span class=\"scope\">scope: <code>{}</code></span>",
        escape(path),
        escape(scope)
    );
    if let Some(desc) = op.get("description").or_else(|| op.get("summary")).and_then(Value::as_str) {
        let _ = write!(out, "<p>{}</p>", inline_code(&escape(desc)));
    }
    if let Some(example) = op.pointer("/requestBody/content/application~1json/example") {
        let pretty = serde_json::to_string_pretty(example).unwrap_or_default();
        let _ = write!(out, "<p>Example body:</p><pre>{}</pre>", escape(&pretty));
    }
    if let Some(responses) = op.get("responses").and_then(Value::as_object) {
        out.push_str("<p>Responses: ");
        for (status, r) in responses {
            let d = r.get("description").and_then(Value::as_str).unwrap_or("");
            let _ = write!(out, "<code title=\"{}\">{}</code> ", escape(d), escape(status));
        }
        out.push_str("</p>");
    }
    out.push_str("</div>");
    out
}

/// The page a problem's `type` URI points at.
pub async fn problem_page(Path(code): Path<String>) -> Result<Html<String>, crate::problem::ApiError> {
    let Some(known) = ErrorCode::from_code(&code) else {
        return Err(crate::problem::ApiError::not_found().detail("no such problem type"));
    };
    let (status, c, title) = known.describe();
    Ok(Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{c}</title><style>{STYLE}</style></head>\
         <body><h1><code>{c}</code></h1><p>HTTP {status}: {}</p><p><a href=\"/docs#problems\">All error codes</a></p></body></html>",
        escape(title)
    )))
}
