//! Client calls of client intelligence: a call, its recordings (each upload a new version, earlier ones
//! kept), the consent under which it may be transcribed, and its transcripts (each a new version with the
//! SHA-256 of its text).
//!
//! Consent is a rule of two planes: an application records consent it captured (how and when, with a
//! reference to its evidence); only a person at the console may record that consent is not required, under
//! a named policy. A transcription needs the latest consent record to be one of those two.

use serde::{Deserialize, Serialize};

/// How consent stands on a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = CallConsentBasis)]
pub enum ConsentBasis {
    /// The participants consented; the application captured it.
    Captured,
    /// A person decided at the console that a policy makes consent unnecessary for this call.
    NotRequired,
    /// Consent was withdrawn: nothing more is transcribed.
    Withdrawn,
}

impl ConsentBasis {
    pub fn as_str(self) -> &'static str {
        match self {
            ConsentBasis::Captured => "captured",
            ConsentBasis::NotRequired => "not_required",
            ConsentBasis::Withdrawn => "withdrawn",
        }
    }

    pub fn parse(s: &str) -> Option<ConsentBasis> {
        [ConsentBasis::Captured, ConsentBasis::NotRequired, ConsentBasis::Withdrawn]
            .into_iter()
            .find(|b| b.as_str() == s)
    }
}

/// How captured consent was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = CallConsentMethod)]
pub enum ConsentMethod {
    Verbal,
    Written,
    RecordedNotice,
}

/// Why a call cannot be transcribed now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Precondition {
    /// No recording was uploaded.
    NoRecording,
    /// No consent was recorded, or the latest record withdrew it.
    NoConsent,
}

/// Whether a call with `recordings` recordings and the latest consent `latest` may be transcribed.
/// How far ahead of this service's clock a caller's clock may be when it says when consent was captured.
pub const CONSENT_CLOCK_SKEW_MICROS: i64 = 5 * 60 * fiscus_domain::clock::MICROS_PER_SECOND;

/// Consent is recorded after it was captured: a capture time later than `now` by more than the allowed
/// clock skew is refused (a consent "captured" in 2999 would otherwise authorise transcription today and be
/// evidence of nothing).
pub fn captured_in_time(captured_at: i64, now: i64) -> bool {
    captured_at <= now.saturating_add(CONSENT_CLOCK_SKEW_MICROS)
}

pub fn may_transcribe(recordings: usize, latest: Option<ConsentBasis>) -> Result<(), Precondition> {
    if recordings == 0 {
        return Err(Precondition::NoRecording);
    }
    match latest {
        Some(ConsentBasis::Captured | ConsentBasis::NotRequired) => Ok(()),
        Some(ConsentBasis::Withdrawn) | None => Err(Precondition::NoConsent),
    }
}

/// Records as stored (canonical JSON, hashed and sealed).
pub mod records {
    use super::{ConsentBasis, ConsentMethod};
    use serde::{Deserialize, Serialize};

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct CallBody {
        pub title: String,
        pub counterparty: Option<String>,
        /// When the call took place (UTC microseconds).
        pub occurred_at: Option<i64>,
    }

    /// One uploaded recording; the audio itself is kept beside the record and covered by `audio_sha256`.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct RecordingBody {
        pub call_id: String,
        /// Counts up from 1 per call.
        pub version: i64,
        pub media_type: String,
        pub byte_length: i64,
        pub audio_sha256: String,
        pub sample_rate: u32,
        pub channels: u16,
        pub duration_ms: u64,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct ConsentBody {
        pub call_id: String,
        /// Counts up from 1 per call; the highest is in force.
        pub seq: i64,
        pub basis: ConsentBasis,
        pub method: Option<ConsentMethod>,
        /// When consent was given (UTC microseconds), for captured consent.
        pub captured_at: Option<i64>,
        /// Where the evidence of consent is (captured), or the policy that waives it (not required).
        pub reference: Option<String>,
        pub note: Option<String>,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct TranscriptBody {
        pub call_id: String,
        /// Counts up from 1 per call.
        pub version: i64,
        pub recording_id: String,
        pub recording_sha256: String,
        /// The consent record it was made under.
        pub consent_id: String,
        pub language: String,
        pub text: String,
        /// `sha256:` of `text` (UTF-8).
        pub text_sha256: String,
        /// The local runtime and model that heard it.
        pub engine: String,
        pub model: String,
        pub duration_ms: u64,
        /// Transcription costs no AI credits.
        pub credits: i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_transcribed_only_with_a_recording_and_consent_in_force() {
        assert_eq!(may_transcribe(0, Some(ConsentBasis::Captured)), Err(Precondition::NoRecording));
        assert_eq!(may_transcribe(1, None), Err(Precondition::NoConsent));
        assert_eq!(may_transcribe(1, Some(ConsentBasis::Withdrawn)), Err(Precondition::NoConsent));
        assert_eq!(may_transcribe(1, Some(ConsentBasis::Captured)), Ok(()));
        assert_eq!(may_transcribe(2, Some(ConsentBasis::NotRequired)), Ok(()));
    }
}
