//! Institutional autonomy assessment evidence (`POST /actions/autonomy/assessment-evidence`).
//!
//! Evidence is classified into the seed's eight domains and sealed. It feeds the assurance read and grants
//! nothing: no approval, no execution authority, no delegation.

use fiscus_domain::fields;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use fiscus_domain::clock::{Micros, parse_rfc3339, rfc3339};

/// The eight assessment domains of the seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssessmentDomain {
    Organisation,
    FinancialControls,
    Security,
    Technology,
    LegalCompliance,
    FinancialRisk,
    OperationalResilience,
    Governance,
}

impl AssessmentDomain {
    pub const ALL: [AssessmentDomain; 8] = [
        AssessmentDomain::Organisation,
        AssessmentDomain::FinancialControls,
        AssessmentDomain::Security,
        AssessmentDomain::Technology,
        AssessmentDomain::LegalCompliance,
        AssessmentDomain::FinancialRisk,
        AssessmentDomain::OperationalResilience,
        AssessmentDomain::Governance,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AssessmentDomain::Organisation => "organisation",
            AssessmentDomain::FinancialControls => "financial_controls",
            AssessmentDomain::Security => "security",
            AssessmentDomain::Technology => "technology",
            AssessmentDomain::LegalCompliance => "legal_compliance",
            AssessmentDomain::FinancialRisk => "financial_risk",
            AssessmentDomain::OperationalResilience => "operational_resilience",
            AssessmentDomain::Governance => "governance",
        }
    }

    pub fn parse(s: &str) -> Option<AssessmentDomain> {
        AssessmentDomain::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

/// The request body. Unknown members are refused.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EvidenceRequest {
    /// One of the eight assessment domains.
    pub domain: AssessmentDomain,
    /// Short name of the evidence.
    #[schema(value_type = fields::Text<1, 200>, inline)]
    pub title: String,
    /// What the evidence shows (up to 4,000 characters; lines allowed).
    #[serde(default)]
    #[schema(value_type = Option<fields::Prose<4000>>, inline)]
    pub summary: Option<String>,
    /// Kind of source, e.g. `audit_report`, `policy`, `test_result`.
    #[schema(value_type = fields::Text<1, 64>, inline)]
    pub source_type: String,
    /// Where the source evidence is kept.
    #[schema(value_type = fields::Text<1, 500>, inline)]
    pub source_reference: String,
    /// `sha256:<64 hex>` of the source evidence; Fiscus seals the reference, never a copy of the source.
    #[schema(value_type = fields::Sha256Ref, inline)]
    pub source_hash: String,
    /// When the evidence was observed (RFC 3339); defaults to the time of recording.
    #[serde(default)]
    #[schema(value_type = Option<fields::Timestamp>, inline)]
    pub observed_at: Option<String>,
    /// Free-form JSON object (up to 16 KiB).
    #[serde(default)]
    #[schema(value_type = Option<fields::Object>, inline)]
    pub metadata: Option<Value>,
}

/// Evidence that passed every rule.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidEvidence {
    pub domain: AssessmentDomain,
    pub title: String,
    pub summary: Option<String>,
    pub source_type: String,
    pub source_reference: String,
    pub source_hash: String,
    pub observed_at: Option<Micros>,
    pub metadata: Value,
}

pub fn is_sha256_ref(s: &str) -> bool {
    s.strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

fn length(field: &'static str, value: &str, min: usize, max: usize, errors: &mut Vec<(&'static str, String)>) {
    if !fields::text_ok(value, min, max) {
        errors.push((field, format!("must be {min} to {max} characters without control characters")));
    }
}

impl EvidenceRequest {
    /// Checks every rule and reports every failure at once, by field.
    pub fn validate(self) -> Result<ValidEvidence, Vec<(&'static str, String)>> {
        let mut errors = Vec::new();
        length("title", &self.title, 1, 200, &mut errors);
        if let Some(summary) = &self.summary
            && !fields::prose_ok(summary, 4000)
        {
            errors.push(("summary", "must be at most 4000 characters without control characters".into()));
        }
        length("source_type", &self.source_type, 1, 64, &mut errors);
        length("source_reference", &self.source_reference, 1, 500, &mut errors);
        if !is_sha256_ref(&self.source_hash) {
            errors.push(("source_hash", "must be sha256: followed by 64 lower-case hex digits".into()));
        }
        let observed_at = match &self.observed_at {
            None => None,
            Some(s) => match parse_rfc3339(s) {
                Some(t) => Some(t),
                None => {
                    errors.push(("observed_at", "must be an RFC 3339 timestamp".into()));
                    None
                }
            },
        };
        let metadata = self.metadata.unwrap_or_else(|| json!({}));
        if !metadata.is_object() {
            errors.push(("metadata", "must be a JSON object".into()));
        } else if metadata.to_string().len() > 16 * 1024 {
            errors.push(("metadata", "must be at most 16 KiB".into()));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(ValidEvidence {
            domain: self.domain,
            title: self.title,
            summary: self.summary,
            source_type: self.source_type,
            source_reference: self.source_reference,
            source_hash: self.source_hash,
            observed_at,
            metadata,
        })
    }
}

/// The stored, sealed record as the API shows it.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EvidenceView {
    /// Always `autonomy_assessment_evidence`.
    pub object: String,
    pub id: String,
    pub environment: String,
    pub domain: AssessmentDomain,
    pub title: String,
    pub summary: Option<String>,
    pub source_type: String,
    pub source_reference: String,
    pub source_hash: String,
    pub observed_at: String,
    pub metadata: Value,
    /// `sha256:` of the RFC 8785 form of the record without this field.
    pub evidence_hash: String,
    /// Always false: evidence informs assurance and never grants authority.
    pub grants_authority: bool,
    pub recorded_by: String,
    pub created_at: String,
}

/// The payload the evidence hash is computed over.
pub fn seal_payload(
    workspace_id: &str,
    id: &str,
    environment: &str,
    e: &ValidEvidence,
    observed_at: Micros,
    recorded_by: &str,
    created_at: Micros,
) -> Value {
    json!({
        "object": "autonomy_assessment_evidence",
        "workspace_id": workspace_id,
        "id": id,
        "environment": environment,
        "domain": e.domain.as_str(),
        "title": e.title,
        "summary": e.summary,
        "source_type": e.source_type,
        "source_reference": e.source_reference,
        "source_hash": e.source_hash,
        "observed_at": rfc3339(observed_at),
        "metadata": e.metadata,
        "grants_authority": false,
        "recorded_by": recorded_by,
        "created_at": rfc3339(created_at),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> EvidenceRequest {
        EvidenceRequest {
            domain: AssessmentDomain::Security,
            title: "SOC 2 Type II".into(),
            summary: None,
            source_type: "audit_report".into(),
            source_reference: "vault://reports/soc2-2026.pdf".into(),
            source_hash: format!("sha256:{}", "a".repeat(64)),
            observed_at: Some("2026-10-01T00:00:00Z".into()),
            metadata: None,
        }
    }

    #[test]
    fn a_complete_request_validates() {
        let valid = request().validate().expect("valid");
        assert_eq!(valid.domain, AssessmentDomain::Security);
        assert!(valid.metadata.is_object());
    }

    #[test]
    fn every_broken_field_is_reported() {
        let mut r = request();
        r.title = " ".into();
        r.source_hash = "md5:abc".into();
        r.observed_at = Some("yesterday".into());
        r.metadata = Some(json!([1]));
        let fields: Vec<&str> = r.validate().expect_err("invalid").into_iter().map(|(f, _)| f).collect();
        assert_eq!(fields, ["title", "source_hash", "observed_at", "metadata"]);
    }

    #[test]
    fn the_eight_domains_round_trip() {
        for d in AssessmentDomain::ALL {
            assert_eq!(AssessmentDomain::parse(d.as_str()), Some(d));
        }
    }
}
