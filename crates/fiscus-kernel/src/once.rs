//! Warnings a worker would otherwise repeat at every pass (every half second): a link left in a shared
//! folder, a file a folder refuses, a workspace whose old records cannot be logged. Each is said once per
//! subject and process, so the log keeps the first occurrence without filling up.

use std::sync::Mutex;

/// Logs `what` about `subject` at warning level, once per subject and process. At most 1,024 subjects are
/// remembered; past that, each is logged every time (never silenced).
pub fn warn_once(subject: &str, what: &str) {
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if said.iter().any(|s| s == subject) {
        return;
    }
    if said.len() < 1024 {
        said.push(subject.to_string());
    }
    tracing::warn!(subject = %subject, problem = %what, "a worker goes on without this (said once)");
}
