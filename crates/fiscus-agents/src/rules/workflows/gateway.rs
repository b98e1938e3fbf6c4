//! The workflow gateway's allowlist: which workflow versions an application's agents may dispatch through
//! `POST /agent-execution/workflows/a2a`. It is separate from a signed client's operation grant (the seed
//! asks for "a separate explicit workflow-tool allowlist") and names versions, not workflows, so that a
//! version written after the admin's decision is never dispatched on the strength of it.

use fiscus_domain::credentials::Environment;
use fiscus_domain::evidence::{self, seal};
use serde_json::json;

/// At most this many versions on one allowlist.
pub const MAX_VERSIONS: usize = 100;

/// The allowlist in canonical form (sorted, unique), or why it cannot be one.
pub fn allowlist(versions: Vec<String>) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(versions.len());
    for v in versions {
        if !fiscus_domain::ids::is_id_of("wfv", &v) {
            return Err(format!("`{v}` is not a workflow version id (wfv_…)"));
        }
        out.push(v);
    }
    out.sort();
    out.dedup();
    if out.len() > MAX_VERSIONS {
        return Err(format!("at most {MAX_VERSIONS} workflow versions"));
    }
    Ok(out)
}

/// The evidence hash of one decision about an application's allowlist (RFC 8785 + SHA-256, recomputable
/// outside Fiscus).
pub fn decision_hash(application_id: &str, environment: Environment, version: i64, versions: &[String]) -> String {
    let payload = json!({
        "object": "workflow_tool_allowlist_decision",
        "application_id": application_id,
        "environment": environment.as_str(),
        "version": version,
        "versions": versions,
    });
    // Only strings and integers: canonicalisation cannot fail.
    seal(&payload).unwrap_or_else(|_| evidence::seal_bytes(payload.to_string().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowlist_is_sorted_unique_and_holds_only_version_ids() {
        let a = "wfv_01M8C3ZQ5V6J1P8N2T4W0XK7RD".to_string();
        let b = "wfv_01M8C3ZQ5V6J1P8N2T4W0XK7RA".to_string();
        assert_eq!(allowlist(vec![a.clone(), b.clone(), a.clone()]), Ok(vec![b.clone(), a.clone()]));
        assert!(allowlist(vec!["wfl_01M8C3ZQ5V6J1P8N2T4W0XK7RD".into()]).is_err());
        let h1 = decision_hash("app_1", Environment::Sandbox, 1, std::slice::from_ref(&a));
        assert_ne!(h1, decision_hash("app_1", Environment::Sandbox, 2, std::slice::from_ref(&a)));
        assert_ne!(h1, decision_hash("app_1", Environment::Sandbox, 1, &[a, b]));
    }
}
