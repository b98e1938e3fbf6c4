//! Console sessions: an HttpOnly, Secure, SameSite=Strict cookie holding a random token (only its keyed hash
//! is stored), idle and absolute timeouts, and a per-session CSRF token every form must return. Bearer
//! credentials are refused here, exactly as session cookies are ignored by the API.

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::credentials;
use fiscus_domain::people::{OperatorStatus, Role};
use subtle::ConstantTimeEq;

use super::html;
use fiscus_http::AppState;

pub const COOKIE: &str = "fiscus_console";

/// A signed-in operator.
#[derive(Clone, Debug)]
pub struct OperatorSession {
    pub session_id: String,
    pub workspace_id: String,
    pub operator_id: String,
    pub email: String,
    pub role: Role,
    pub csrf_token: String,
    /// The person's sign-in (their account), shared by every workspace they are an operator of.
    pub account_id: Option<String>,
    /// The zone this person reads times in (UTC until they choose one).
    pub time_zone: jiff::tz::TimeZone,
    /// What the last form post did, from the flash cookie (HTML-safe text), shown once.
    pub flash: Option<String>,
    /// What waits for people in the workspace, counted when the page was asked for (the navigation shows it).
    pub pending: crate::pending::Pending,
}

impl OperatorSession {
    /// This operator as the application layer's caller, with the request id for the audit event.
    pub fn caller(&self) -> fiscus_kernel::governed::Caller {
        fiscus_http::request_id::caller(fiscus_domain::actor::Actor::operator(self.operator_id.clone()))
    }

    /// Checks the form's CSRF token in constant time. The refusal is the page to show (a `Response` is
    /// large, but this is the console's cold path).
    #[expect(clippy::result_large_err, reason = "the error is the refusal page itself, returned as is")]
    pub fn check_csrf(&self, presented: &str) -> Result<(), Response> {
        if self.csrf_token.as_bytes().ct_eq(presented.as_bytes()).into() {
            Ok(())
        } else {
            Err(html::error_page(
                StatusCode::FORBIDDEN,
                "Refused",
                "The form has expired or did not come from this console. Reload the page and try again.",
            ))
        }
    }

    /// This operator's workspace in `environment`.
    pub fn tenant(&self, environment: fiscus_domain::credentials::Environment) -> fiscus_domain::tenancy::Tenant {
        fiscus_domain::tenancy::Tenant { workspace_id: self.workspace_id.clone(), environment }
    }

    /// What every decision form checks first: its CSRF token, that this operator decides (an admin or an
    /// approver: an auditor never does), and the environment it names. The tenant to decide in, or the
    /// refusal page.
    #[expect(clippy::result_large_err, reason = "the error is the refusal page itself, returned as is")]
    pub fn deciding_in(&self, csrf: &str, environment: &str) -> Result<fiscus_domain::tenancy::Tenant, Response> {
        self.check_csrf(csrf)?;
        if !matches!(self.role, Role::Admin | Role::Approver) {
            return Err(html::error_page(StatusCode::FORBIDDEN, "Decision refused", "An auditor does not decide."));
        }
        let environment = fiscus_domain::credentials::Environment::parse(environment)
            .ok_or_else(|| html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown environment."))?;
        Ok(self.tenant(environment))
    }

    /// The IANA name of the zone this person reads times in.
    pub fn time_zone_name(&self) -> &str {
        self.time_zone.iana_name().unwrap_or("UTC")
    }

    /// An instant as this person reads it: in their zone, with UTC on hover.
    pub fn time(&self, micros: i64) -> String {
        super::times::time(micros, &self.time_zone)
    }

    pub fn nav(&self) -> Option<html::Nav<'_>> {
        Some(html::Nav {
            email: &self.email,
            role: self.role.as_str(),
            csrf: &self.csrf_token,
            pending: &self.pending,
            flash: self.flash.as_deref(),
        })
    }
}

/// The value of the request's cookie `name`, if it sent one.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value)
}

pub fn set_cookie(token: &str, max_age_seconds: u64) -> String {
    format!("{COOKIE}={token}; Path=/console; HttpOnly; Secure; SameSite=Strict; Max-Age={max_age_seconds}")
}

pub fn clear_cookie() -> String {
    format!("{COOKIE}=; Path=/console; HttpOnly; Secure; SameSite=Strict; Max-Age=0")
}

/// Every console request: no bearer credentials, and cross-origin form posts are refused.
pub async fn guard(req: Request, next: Next) -> Response {
    if req.headers().contains_key(header::AUTHORIZATION) {
        return html::error_page(
            StatusCode::UNAUTHORIZED,
            "Not accepted",
            "The console accepts only operator sessions. API credentials are never accepted here.",
        );
    }
    if req.method() == axum::http::Method::POST && !same_origin(req.headers()) {
        return html::error_page(StatusCode::FORBIDDEN, "Refused", "Cross-origin form submissions are refused.");
    }
    next.run(req).await
}

/// `Origin` (or, failing that, `Referer`) must name this host when present.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else { return false };
    let source = headers.get(header::ORIGIN).or_else(|| headers.get(header::REFERER)).and_then(|v| v.to_str().ok());
    match source {
        None => true,
        Some(s) => s
            .strip_prefix("http://")
            .or_else(|| s.strip_prefix("https://"))
            .is_some_and(|rest| rest.split('/').next() == Some(host)),
    }
}

impl FromRequestParts<AppState> for OperatorSession {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let to_login = || html::redirect("/console/login");
        let Some(token) = cookie(&parts.headers, COOKIE).map(str::to_string) else { return Err(to_login()) };
        let Some(parsed) = credentials::parse(&token).filter(|p| p.kind == credentials::SecretKind::SessionToken)
        else {
            return Err(to_login());
        };
        let hash = credentials::keyed_hash(&state.server_key, parsed.full);
        let Ok(mut conn) = state.store.read().await else {
            return Err(html::error_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Unavailable",
                "The database does not answer.",
            ));
        };
        let Ok(Some(row)) = fiscus_store::operators::resolve_session(&mut conn, &hash).await else {
            return Err(to_login());
        };
        let now = now_micros();
        let idle = state.settings.console_idle_seconds as i64 * MICROS_PER_SECOND;
        let expired = row.revoked_at.is_some() || now >= row.expires_at || now - row.last_seen_at > idle;
        if expired || row.operator_status != OperatorStatus::Active {
            return Err(to_login());
        }
        if fiscus_store::operators::touch_session(&mut conn, &row.workspace_id, &row.id, now).await.is_err() {
            return Err(to_login());
        }
        fiscus_http::standing::authenticated(&parts.extensions);
        // Counts are a convenience: a failed count shows none rather than refusing the page.
        let pending = crate::pending::pending(&mut conn, &row.workspace_id).await.unwrap_or_default();
        Ok(OperatorSession {
            session_id: row.id,
            workspace_id: row.workspace_id,
            operator_id: row.operator_id,
            email: row.email,
            role: row.role,
            csrf_token: row.csrf_token,
            account_id: row.account_id,
            time_zone: super::times::zone(&row.time_zone).unwrap_or(jiff::tz::TimeZone::UTC),
            flash: super::flash::take(&parts.headers),
            pending,
        })
    }
}
