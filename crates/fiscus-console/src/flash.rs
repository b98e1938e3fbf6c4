//! Flash messages: what a decision or a change just did, shown once on the page the browser is sent to after
//! the form post (post/redirect/get). The cookie carries only a notice's name from a fixed list and the id it
//! concerns; the words are the console's, so nothing a cookie says is ever rendered as markup.

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;

use super::html::{self, escape};

pub const COOKIE: &str = "fiscus_flash";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A decision (approve, deny, promote, suspend …) recorded and sealed.
    Decided,
    /// An action proposed, now waiting for people.
    Proposed,
    /// The operator's preferences saved.
    Preferences,
}

impl Notice {
    fn key(self) -> &'static str {
        match self {
            Notice::Decided => "decided",
            Notice::Proposed => "proposed",
            Notice::Preferences => "preferences",
        }
    }

    fn parse(key: &str) -> Option<Self> {
        [Notice::Decided, Notice::Proposed, Notice::Preferences].into_iter().find(|n| n.key() == key)
    }

    fn words(self, subject: &str) -> String {
        let subject = escape(subject);
        match self {
            Notice::Decided => format!("Your decision on {subject} is recorded and sealed in the audit trail."),
            Notice::Proposed => format!("{subject} is proposed and waits for approval."),
            Notice::Preferences => format!("Saved: times are shown in {subject}."),
        }
    }
}

/// Ids, keys and zone names only: anything else is not carried.
fn subject_ok(s: &str) -> bool {
    (1..=80).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-./+".contains(&b))
}

/// A 303 to `to` that shows `notice` about `subject` there.
pub fn redirect(to: &str, notice: Notice, subject: &str) -> Response {
    let mut response = html::redirect(to);
    if subject_ok(subject) {
        let cookie = format!(
            "{COOKIE}={}~{subject}; Path=/console; HttpOnly; Secure; SameSite=Strict; Max-Age=60",
            notice.key()
        );
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    response
}

/// The message waiting in the request's cookie, as HTML-safe text.
pub fn take(headers: &HeaderMap) -> Option<String> {
    let value = super::session::cookie(headers, COOKIE)?;
    let (key, subject) = value.split_once('~')?;
    subject_ok(subject).then_some(())?;
    Some(Notice::parse(key)?.words(subject))
}

/// Spends the flash once the page showing it is sent.
pub fn clear(response: &mut Response) {
    let cookie = format!("{COOKIE}=; Path=/console; HttpOnly; Secure; SameSite=Strict; Max-Age=0");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
}

#[cfg(test)]
mod tests {
    use super::{Notice, redirect, take};
    use axum::http::{HeaderMap, HeaderValue, header};

    fn with_cookie(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_str(&format!("other=1; fiscus_flash={value}")).expect("header"));
        h
    }

    #[test]
    fn a_flash_names_its_subject_in_the_console_s_words_only() {
        let r = redirect("/console", Notice::Decided, "act_01ABC");
        let set = r.headers().get(header::SET_COOKIE).and_then(|v| v.to_str().ok()).expect("cookie");
        assert!(set.starts_with("fiscus_flash=decided~act_01ABC;") && set.contains("HttpOnly"), "{set}");
        assert_eq!(
            take(&with_cookie("decided~act_01ABC")).as_deref(),
            Some("Your decision on act_01ABC is recorded and sealed in the audit trail.")
        );
        assert_eq!(
            take(&with_cookie("preferences~Europe/Paris")).as_deref(),
            Some("Saved: times are shown in Europe/Paris.")
        );
        assert_eq!(take(&with_cookie("hacked~act_1")), None, "an unknown notice");
        assert_eq!(take(&with_cookie("decided~<script>")), None, "markup is never carried");
        assert_eq!(take(&HeaderMap::new()), None);
        let refused = redirect("/console", Notice::Decided, "<b>");
        assert!(refused.headers().get(header::SET_COOKIE).is_none());
    }
}
