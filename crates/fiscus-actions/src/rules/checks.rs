//! Pre-trade control checks (`POST /actions/investment-execution/{uid}/checks`). Every recording appends a
//! version; earlier versions are kept. A status outside the allowed set, or missing source evidence, is
//! refused and records nothing.

use fiscus_domain::fields;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::rules::autonomy::is_sha256_ref;
use crate::rules::envelope::is_check_key;
use fiscus_domain::evidence::seal;

/// The allowed check statuses. Only `passed` lets an action execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    Warning,
    Pending,
}

impl CheckStatus {
    pub const ALL: [CheckStatus; 4] =
        [CheckStatus::Passed, CheckStatus::Failed, CheckStatus::Warning, CheckStatus::Pending];

    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Passed => "passed",
            CheckStatus::Failed => "failed",
            CheckStatus::Warning => "warning",
            CheckStatus::Pending => "pending",
        }
    }

    pub fn parse(s: &str) -> Option<CheckStatus> {
        CheckStatus::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// The seed's check body. `status` is a string here so that an unknown value is a clear 422 naming the
/// allowed set rather than a parse failure.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// Identifies the control, e.g. `best_execution`, `restricted_list`.
    #[schema(value_type = fields::CheckKey, inline)]
    pub check_key: String,
    #[schema(value_type = CheckStatus)]
    pub status: String,
    /// Kind of source evidence, e.g. `oms_report`.
    #[schema(value_type = fields::Text<1, 64>, inline)]
    pub source_type: String,
    /// Reference to the source evidence (required: a check without source evidence is refused).
    #[serde(default)]
    #[schema(value_type = fields::Text<1, 500>, inline, required = true)]
    pub source_reference: Option<String>,
    /// `sha256:<64 hex>` of the source evidence (required).
    #[serde(default)]
    #[schema(value_type = fields::Sha256Ref, inline, required = true)]
    pub source_hash: Option<String>,
    /// Measurements behind the status (JSON values; with `metadata`, at most 32 KiB).
    #[serde(default)]
    pub metrics: Vec<Value>,
    #[serde(default)]
    pub metadata: Vec<Value>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ValidCheck {
    pub check_key: String,
    pub status: CheckStatus,
    pub source_type: String,
    pub source_reference: String,
    pub source_hash: String,
    pub metrics: Vec<Value>,
    pub metadata: Vec<Value>,
}

/// The check Fiscus records itself on a payment to a counterparty: the approved bank details it pays to
/// (source: the account version and its hash). Reserved: no caller records it, so no caller can vouch for
/// other details.
pub const CREDITOR_ACCOUNT: &str = "creditor_account";

/// The check Fiscus records itself on a payment sent through a bank file: the workspace's own approved
/// account it is debited from (source: that account's version and its hash). Reserved like
/// [`CREDITOR_ACCOUNT`]: a changed debit account moves money from somewhere else.
pub const DEBTOR_ACCOUNT: &str = "debtor_account";

/// Check keys only Fiscus records.
pub const RESERVED: [&str; 2] = [CREDITOR_ACCOUNT, DEBTOR_ACCOUNT];

impl CheckRequest {
    pub fn validate(self) -> Result<ValidCheck, Vec<(&'static str, String)>> {
        let mut errors = Vec::new();
        if !is_check_key(&self.check_key) {
            errors.push(("check_key", "must be 1 to 64 lower-case letters, digits, `_`, `.`, `-`".to_string()));
        } else if RESERVED.contains(&self.check_key.as_str()) {
            errors.push(("check_key", format!("{} is recorded by Fiscus from approved bank details", self.check_key)));
        }
        let status = CheckStatus::parse(&self.status);
        if status.is_none() {
            errors.push(("status", "must be one of passed, failed, warning, pending".to_string()));
        }
        if !fields::text_ok(&self.source_type, 1, 64) {
            errors.push(("source_type", "must be 1 to 64 characters".to_string()));
        }
        let reference = self.source_reference.filter(|r| fields::text_ok(r, 1, 500));
        if reference.is_none() {
            errors.push(("source_reference", "source evidence is required: 1 to 500 characters".to_string()));
        }
        let hash = self.source_hash.filter(|h| is_sha256_ref(h));
        if hash.is_none() {
            errors.push((
                "source_hash",
                "source evidence is required: sha256: followed by 64 lower-case hex digits".to_string(),
            ));
        }
        let size = Value::Array(self.metrics.clone()).to_string().len()
            + Value::Array(self.metadata.clone()).to_string().len();
        if size > 32 * 1024 {
            errors.push(("metrics", "metrics and metadata must be at most 32 KiB together".to_string()));
        }
        match (status, reference, hash) {
            (Some(status), Some(source_reference), Some(source_hash)) if errors.is_empty() => Ok(ValidCheck {
                check_key: self.check_key,
                status,
                source_type: self.source_type,
                source_reference,
                source_hash,
                metrics: self.metrics,
                metadata: self.metadata,
            }),
            _ => Err(errors),
        }
    }
}

impl ValidCheck {
    pub fn payload(&self, action_id: &str, version: i64, recorded_by: &str, recorded_at: &str) -> Value {
        json!({
            "action_id": action_id,
            "check_key": self.check_key,
            "version": version,
            "status": self.status.as_str(),
            "source_type": self.source_type,
            "source_reference": self.source_reference,
            "source_hash": self.source_hash,
            "metrics": self.metrics,
            "metadata": self.metadata,
            "recorded_by": recorded_by,
            "recorded_at": recorded_at,
        })
    }
}

/// The latest version of one check, as the gate and the approval see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatestCheck {
    pub check_key: String,
    pub version: i64,
    pub status: CheckStatus,
    pub check_hash: String,
}

/// The hash of the evidence set an approval covers: every check's latest version. Recording a new version
/// changes it, which is what makes an earlier approval stale.
pub fn check_set_hash(latest: &[LatestCheck]) -> String {
    let mut items: Vec<&LatestCheck> = latest.iter().collect();
    items.sort_by(|a, b| a.check_key.cmp(&b.check_key));
    let list: Vec<Value> = items
        .iter()
        .map(|c| json!({ "check_key": c.check_key, "version": c.version, "status": c.status.as_str(), "check_hash": c.check_hash }))
        .collect();
    seal(&json!({ "checks": list })).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> CheckRequest {
        CheckRequest {
            check_key: "best_execution".into(),
            status: "passed".into(),
            source_type: "oms_report".into(),
            source_reference: Some("oms://runs/1".into()),
            source_hash: Some(format!("sha256:{}", "0".repeat(64))),
            metrics: vec![],
            metadata: vec![],
        }
    }

    #[test]
    fn a_complete_check_validates() {
        assert_eq!(request().validate().expect("valid").status, CheckStatus::Passed);
    }

    #[test]
    fn unknown_status_and_missing_evidence_are_refused() {
        let mut r = request();
        r.status = "approved".into();
        r.source_reference = None;
        r.source_hash = Some("abc".into());
        let fields: Vec<&str> = r.validate().expect_err("invalid").into_iter().map(|e| e.0).collect();
        assert_eq!(fields, ["status", "source_reference", "source_hash"]);
    }

    #[test]
    fn a_new_version_changes_the_check_set_hash() {
        let v1 = LatestCheck {
            check_key: "a".into(),
            version: 1,
            status: CheckStatus::Passed,
            check_hash: "sha256:1".into(),
        };
        let v2 = LatestCheck { version: 2, check_hash: "sha256:2".into(), ..v1.clone() };
        assert_ne!(check_set_hash(std::slice::from_ref(&v1)), check_set_hash(&[v2]));
        assert_eq!(check_set_hash(&[]), check_set_hash(&[]));
    }
}
