//! Server-rendered pages: no build step, nothing fetched from elsewhere, and no script needed for anything.
//! One small script of Fiscus's own only adds copy buttons beside hashes.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// A hash as a table shows it: its head (`sha256:` and 12 hex digits), opening to the full value (a
/// disclosure: keyboard and screen readers reach it, no script needed).
pub fn hash(full: &str) -> String {
    let digits = full.strip_prefix("sha256:").unwrap_or(full);
    let (Some(first), true) = (digits.get(..12), digits.len() > 12) else {
        return format!("<code>{}</code>", escape(full));
    };
    let head = format!("{}{first}…", if full.starts_with("sha256:") { "sha256:" } else { "" });
    format!(
        "<details class=\"hash\" data-copy=\"{full}\"><summary><code>{}</code></summary><code>{full}</code></details>",
        escape(&head),
        full = escape(full)
    )
}

/// A state as a badge: its word, with the tone the stylesheet gives that word (never the colour alone).
pub fn state(word: &str) -> String {
    format!("<span class=\"status\" data-state=\"{w}\">{w}</span>", w = escape(word))
}

/// The `?environment=` of a page about one object (an unknown environment finds nothing).
#[derive(serde::Deserialize)]
pub struct EnvQuery {
    pub environment: String,
}

/// The console's stylesheet, compiled in and served at [`STYLESHEET_PATH`]; pages link it with its hash so a
/// new build is never shown an old sheet.
pub const STYLESHEET: &str = include_str!("assets/console.css");
pub const STYLESHEET_PATH: &str = "/console/assets/console.css";

/// The copy buttons' script (progressive: without it, the full value is in the disclosure to select).
pub const SCRIPT: &str = include_str!("assets/console.js");
pub const SCRIPT_PATH: &str = "/console/assets/console.js";

fn version_of(asset: &'static str) -> String {
    fiscus_domain::evidence::seal_bytes(asset.as_bytes())["sha256:".len()..][..12].to_string()
}

fn stylesheet_version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| version_of(STYLESHEET))
}

fn script_version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| version_of(SCRIPT))
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// `GET /console/assets/console.css`.
pub async fn stylesheet() -> Response {
    asset(STYLESHEET, "text/css; charset=utf-8")
}

/// `GET /console/assets/console.js`.
pub async fn script() -> Response {
    asset(SCRIPT, "text/javascript; charset=utf-8")
}

/// What the navigation shows of the signed-in operator: who, the sign-out form's token, and what waits.
pub struct Nav<'a> {
    pub email: &'a str,
    pub role: &'a str,
    pub csrf: &'a str,
    pub pending: &'a crate::pending::Pending,
    /// What the last form post did, shown once (HTML-safe text).
    pub flash: Option<&'a str>,
}

impl Nav<'_> {
    /// How many items wait in the queue behind `href`, for the queues that have one.
    fn waiting(&self, href: &str) -> Option<i64> {
        let p = self.pending;
        match href {
            "/console" => Some(p.approvals),
            "/console/delegations" => Some(p.delegations),
            "/console/clients" => Some(p.clients),
            "/console/webhooks" => Some(p.webhooks),
            "/console/model-portfolios" => Some(p.model_portfolios),
            "/console/lqm-promotions" => Some(p.promotions),
            "/console/lqm-retraining" => Some(p.retraining),
            "/console/workflow-reviews" => Some(p.workflow_reviews),
            "/console/bank-accounts" => Some(p.bank_accounts),
            "/console/bank-entries" => Some(p.bank_entries),
            _ => None,
        }
    }
}

/// The console's places, grouped by task: what waits for a person's decision first, then the bank side, the
/// rules people set, and what one looks up or starts.
const PLACES: [(&str, &[(&str, &str)]); 4] = [
    (
        "Decide",
        &[
            ("/console", "Pending approvals"),
            ("/console/approvals/batch", "Batch approval"),
            ("/console/bank-accounts", "Bank details"),
            ("/console/delegations", "Delegations"),
            ("/console/clients", "Signed clients"),
            ("/console/webhooks", "Webhooks"),
            ("/console/model-portfolios", "Model portfolios"),
            ("/console/rebalance-proposals", "Rebalances"),
            ("/console/lqm-retraining", "Retraining"),
            ("/console/lqm-promotions", "Model promotions"),
            ("/console/workflow-reviews", "Workflow reviews"),
        ],
    ),
    (
        "Bank",
        &[
            ("/console/bank-entries", "Bank entries"),
            ("/console/payment-files", "Payment files"),
            ("/console/bank-messages", "Bank messages"),
        ],
    ),
    (
        "Rules",
        &[
            ("/console/approval-policies", "Approval policy"),
            ("/console/approver-groups", "Approver groups"),
            ("/console/workflow-tools", "Workflow tools"),
            ("/console/production", "Production access"),
        ],
    ),
    (
        "More",
        &[
            ("/console/actions/new", "Propose"),
            ("/console/instruments", "Instruments"),
            ("/console/qlms", "QLMs"),
            ("/console/agent-spaces", "Agent spaces"),
            ("/console/calls", "Client calls"),
            ("/console/audit", "Audit trail"),
        ],
    ),
];

/// A whole page: the skip link, the header with who is signed in, the navigation (for signed-in operators),
/// and the page's own content under its one `h1`.
pub fn page(title: &str, nav: Option<Nav<'_>>, body: &str) -> Response {
    let flash = nav.as_ref().and_then(|n| n.flash).map(|f| format!("<p class=\"flash\" role=\"status\">{f}</p>"));
    let (who, nav) = match nav {
        Some(n) => {
            let (email, role, csrf) = (n.email, n.role, n.csrf);
            let mut groups = String::new();
            for (group, places) in PLACES {
                let mut items = String::new();
                for (href, label) in places.iter() {
                    let current = if *label == title { " aria-current=\"page\"" } else { "" };
                    // The count is words as well as a number, so a screen reader says what it is.
                    let count = match n.waiting(href) {
                        Some(c) if c > 0 => {
                            format!(" <span class=\"count\">{c}<span class=\"visually-hidden\"> waiting</span></span>")
                        }
                        _ => String::new(),
                    };
                    items.push_str(&format!("<li><a href=\"{href}\"{current}>{label}{count}</a></li>"));
                }
                groups.push_str(&format!(
                    "<div class=\"group\"><span class=\"group-name\" id=\"nav-{id}\">{group}</span><ul aria-labelledby=\"nav-{id}\">{items}</ul></div>",
                    id = group.to_lowercase()
                ));
            }
            (
                format!(
                    "<div class=\"who\">{} ({}) <a href=\"/console/preferences\">Preferences</a> \
                     <form class=\"inline\" method=\"post\" action=\"/console/logout\">\
                     <input type=\"hidden\" name=\"csrf\" value=\"{}\"><button type=\"submit\">Sign out</button></form></div>",
                    escape(email),
                    escape(role),
                    escape(csrf)
                ),
                format!("<nav class=\"console\" aria-label=\"Console\">{groups}</nav>"),
            )
        }
        None => (String::new(), String::new()),
    };
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{t} · Fiscus console</title>\
         <link rel=\"stylesheet\" href=\"{STYLESHEET_PATH}?v={v}\"><script src=\"{SCRIPT_PATH}?v={j}\" defer></script></head>\
         <body><a class=\"skip\" href=\"#content\">Skip to content</a>\
         <header class=\"top\"><span class=\"brand\">Fiscus console</span>{who}</header>{nav}\
         <main id=\"content\"><h1>{t}</h1>{f}{body}</main></body></html>",
        t = escape(title),
        v = stylesheet_version(),
        j = script_version(),
        f = flash.as_deref().unwrap_or_default(),
    );
    let mut response = with_page_headers((StatusCode::OK, html).into_response());
    if flash.is_some() {
        super::flash::clear(&mut response);
    }
    response
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
            "default-src 'none'; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'",
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
pub fn failure_page(
    failure: fiscus_kernel::governed::Failure,
    refused_title: &str,
    not_found: &str,
    what: &str,
) -> Response {
    use fiscus_kernel::governed::Failure;
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
