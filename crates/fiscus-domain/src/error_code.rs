//! The one error-code table: every refusal Fiscus can give, with its HTTP status, stable `code` and title.
//!
//! Clients match on `code` (snake_case, never renamed once published); `title` is for people. The server maps
//! these into RFC 9457 problem details; 5xx codes never carry internal text to the client.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    MalformedJson,
    MalformedRequest,
    UnsupportedMediaType,
    /// `Accept` names no representation the operation offers (RFC 9110 §15.5.7).
    NotAcceptable,
    InvalidRequest,
    InvalidParameter,
    AuthenticationRequired,
    InvalidCredential,
    ScopeMissing,
    EntitlementMissing,
    ProductionAccessDisabled,
    NotFound,
    ReferenceNotFound,
    MethodNotAllowed,
    Conflict,
    IdempotencyKeyInUse,
    IdempotencyKeyReused,
    InvalidIdempotencyKey,
    PayloadTooLarge,
    RequestTimeout,
    RateLimited,
    Internal,
    Unavailable,
    ExecutionRefused,
    SubmissionRejected,
    ActionClosed,
    ActionStateConflict,
    IntegrityFailure,
    InvalidSignature,
    SignatureReplayed,
    OutsideGrant,
    UnsafeWebhookEndpoint,
    ComputationRefused,
    InsufficientData,
    CreditsExhausted,
    MarketDataUnavailable,
    HandoffUnavailable,
    RebalanceRefused,
    DatasetIneligible,
    NotReviewable,
    LifecycleGateClosed,
    CheckpointRevoked,
    SeparationOfDuties,
    InvalidSuite,
    StepKindUnavailable,
    RunNotPending,
    SpaceNotRunnable,
    CapacityExhausted,
    QueueUnavailable,
    InvalidAudio,
    RecordingMissing,
    ConsentRequired,
    SpeechRuntimeUnavailable,
    LimitExceeded,
    FileRejected,
    PolicyRefused,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 56] = [
        ErrorCode::MalformedJson,
        ErrorCode::MalformedRequest,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::NotAcceptable,
        ErrorCode::InvalidRequest,
        ErrorCode::InvalidParameter,
        ErrorCode::AuthenticationRequired,
        ErrorCode::InvalidCredential,
        ErrorCode::ScopeMissing,
        ErrorCode::EntitlementMissing,
        ErrorCode::ProductionAccessDisabled,
        ErrorCode::NotFound,
        ErrorCode::ReferenceNotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::Conflict,
        ErrorCode::IdempotencyKeyInUse,
        ErrorCode::IdempotencyKeyReused,
        ErrorCode::InvalidIdempotencyKey,
        ErrorCode::PayloadTooLarge,
        ErrorCode::RequestTimeout,
        ErrorCode::RateLimited,
        ErrorCode::Internal,
        ErrorCode::Unavailable,
        ErrorCode::ExecutionRefused,
        ErrorCode::SubmissionRejected,
        ErrorCode::ActionClosed,
        ErrorCode::ActionStateConflict,
        ErrorCode::IntegrityFailure,
        ErrorCode::InvalidSignature,
        ErrorCode::SignatureReplayed,
        ErrorCode::OutsideGrant,
        ErrorCode::UnsafeWebhookEndpoint,
        ErrorCode::ComputationRefused,
        ErrorCode::InsufficientData,
        ErrorCode::CreditsExhausted,
        ErrorCode::MarketDataUnavailable,
        ErrorCode::HandoffUnavailable,
        ErrorCode::RebalanceRefused,
        ErrorCode::DatasetIneligible,
        ErrorCode::NotReviewable,
        ErrorCode::LifecycleGateClosed,
        ErrorCode::CheckpointRevoked,
        ErrorCode::SeparationOfDuties,
        ErrorCode::InvalidSuite,
        ErrorCode::StepKindUnavailable,
        ErrorCode::RunNotPending,
        ErrorCode::SpaceNotRunnable,
        ErrorCode::CapacityExhausted,
        ErrorCode::QueueUnavailable,
        ErrorCode::InvalidAudio,
        ErrorCode::RecordingMissing,
        ErrorCode::ConsentRequired,
        ErrorCode::SpeechRuntimeUnavailable,
        ErrorCode::LimitExceeded,
        ErrorCode::FileRejected,
        ErrorCode::PolicyRefused,
    ];

    /// (HTTP status, stable code, title).
    pub fn describe(self) -> (u16, &'static str, &'static str) {
        match self {
            ErrorCode::MalformedJson => (400, "malformed_json", "The request body is not valid JSON"),
            ErrorCode::MalformedRequest => (400, "malformed_request", "The request is malformed"),
            ErrorCode::UnsupportedMediaType => {
                (415, "unsupported_media_type", "The request body must be application/json")
            }
            ErrorCode::NotAcceptable => {
                (406, "not_acceptable", "None of the representations the Accept header names is offered")
            }
            ErrorCode::InvalidRequest => (422, "invalid_request", "The request body is not acceptable"),
            ErrorCode::InvalidParameter => (422, "invalid_parameter", "A query or path parameter is not acceptable"),
            ErrorCode::AuthenticationRequired => (401, "authentication_required", "A bearer credential is required"),
            ErrorCode::InvalidCredential => {
                (401, "invalid_credential", "The credential is not valid, has expired or has been revoked")
            }
            ErrorCode::ScopeMissing => (403, "scope_missing", "The credential lacks the scope this operation requires"),
            ErrorCode::EntitlementMissing => {
                (403, "entitlement_missing", "The application or workspace is not entitled to this operation")
            }
            ErrorCode::ProductionAccessDisabled => {
                (403, "production_access_disabled", "Production access is not enabled for this workspace")
            }
            ErrorCode::NotFound => (404, "not_found", "No such object in this workspace"),
            // 409, not 404: a 404 says the path's object is gone (clients and Schemathesis read it so), and
            // here the path is fine; the request meets a workspace that does not hold what it names.
            ErrorCode::ReferenceNotFound => {
                (409, "reference_not_found", "The request names an object this workspace does not hold")
            }
            ErrorCode::MethodNotAllowed => (405, "method_not_allowed", "The method is not allowed on this path"),
            ErrorCode::Conflict => (409, "conflict", "The request conflicts with the current state"),
            ErrorCode::IdempotencyKeyInUse => {
                (409, "idempotency_key_in_use", "A request with this Idempotency-Key is still being processed")
            }
            ErrorCode::IdempotencyKeyReused => {
                // 409, not the draft's 422: the body breaks no rule; it conflicts with what the server holds
                // for the key (RFC 9110 §15.5.10). A 422 would tell a client its body is wrong. Told apart
                // from `idempotency_key_in_use` by its code and by carrying no `Retry-After`.
                (409, "idempotency_key_reused", "This Idempotency-Key was used with a different method, path or body")
            }
            ErrorCode::InvalidIdempotencyKey => {
                (422, "invalid_idempotency_key", "The Idempotency-Key header must be 1 to 255 visible ASCII characters")
            }
            ErrorCode::PayloadTooLarge => (413, "payload_too_large", "The request body is too large"),
            ErrorCode::RequestTimeout => (408, "request_timeout", "The request body did not arrive in time"),
            ErrorCode::RateLimited => (429, "rate_limited", "Rate limit exceeded"),
            ErrorCode::Internal => (500, "internal_error", "Internal error"),
            ErrorCode::Unavailable => (503, "service_unavailable", "The service is temporarily unavailable"),
            ErrorCode::ExecutionRefused => {
                (422, "execution_refused", "Execution is not authorised: one or more control gates failed")
            }
            ErrorCode::SubmissionRejected => {
                (422, "submission_rejected", "The submission was rejected by the action's controls")
            }
            ErrorCode::ActionClosed => (422, "action_closed", "The action no longer accepts this change"),
            // A rule of the workspace's approval policy refuses the proposal outright (the problem names the
            // rule and the policy version): the controls decided, as for a refused submission.
            ErrorCode::PolicyRefused => (422, "policy_refused", "A rule of the approval policy refuses this action"),
            // An execution or submission asked of an action whose lifecycle state no such step starts from (a
            // draft or pending action executed, an approved one submitted): 409 with `state`, as for every
            // conflict with an object's state. The seed's 422s stay for what the controls decide on an action
            // that could go on: a gate that fails on an approved action, a submission its controls refuse.
            ErrorCode::ActionStateConflict => {
                (409, "action_state_conflict", "The action's lifecycle state does not allow this step")
            }
            // A sealed record no longer matches its seal (edited outside Fiscus): nothing is decided on it.
            ErrorCode::IntegrityFailure => {
                (500, "integrity_failure", "A sealed record failed verification; nothing was changed")
            }
            ErrorCode::InvalidSignature => (
                401,
                "invalid_signature",
                "The request signature is missing, malformed, stale, or does not verify with an active client key",
            ),
            ErrorCode::SignatureReplayed => {
                (401, "signature_replayed", "This signature nonce was already used; sign each request afresh")
            }
            ErrorCode::OutsideGrant => {
                (422, "outside_grant", "The signed client's grant does not allow this operation or action")
            }
            ErrorCode::UnsafeWebhookEndpoint => (
                422,
                "unsafe_webhook_endpoint",
                "The webhook endpoint is not an HTTPS URL that resolves only to public addresses",
            ),
            // The numeric engine refused the inputs (infeasible, singular, too short…); `engine_error` names
            // the engine's typed reason.
            ErrorCode::ComputationRefused => {
                (422, "computation_refused", "The computation cannot be carried out on these inputs")
            }
            // Too few observations for the computation in the window the request selects (or in the values it
            // gives): a well-formed request that meets too little data, so 409 as for any state the client
            // can change (a longer or later window, an import), not 422, which says the body breaks a rule
            // the document states. `engine_error` stays `insufficient_data` for clients matching on it.
            ErrorCode::InsufficientData => {
                (409, "insufficient_data", "There are too few observations for this computation")
            }
            // 402 as payment-gated APIs use it: the request is valid and would succeed with more credits.
            ErrorCode::CreditsExhausted => {
                (402, "credits_exhausted", "The AI credit balance does not cover this computation")
            }
            // An observed quote or FX rate the operation needs is missing: it is never substituted (the
            // seed's rule), so the operation waits for the data; the detail names what is missing.
            ErrorCode::MarketDataUnavailable => (
                503,
                "market_data_unavailable",
                "Observed market data this operation needs is unavailable; nothing is substituted",
            ),
            // A thematic universe announced by research whose members have not been handed off yet. The seed
            // lists 503; it is a state of the client's own universe (its handoff is an operation the client
            // calls), not the server failing, so it is 409 with the universe's `state`: retrying the same
            // request cannot succeed until the client hands the universe off.
            ErrorCode::HandoffUnavailable => {
                (409, "handoff_unavailable", "The thematic universe's research handoff is not available yet")
            }
            // A rebalance's conditions failed; `condition` names the first that did.
            ErrorCode::RebalanceRefused => (
                422,
                "rebalance_refused",
                "A rebalance needs an operation in governed review and its human-approved model portfolio",
            ),
            // A dataset that may not train a model; `reason` names why (synthetic, unsealed, licence…).
            ErrorCode::DatasetIneligible => {
                (409, "dataset_ineligible", "The dataset is not eligible for a model's data contract")
            }
            // A retraining request that is not pending; `state` says where it stands.
            ErrorCode::NotReviewable => (409, "not_reviewable", "The request is not awaiting review"),
            // A gated LQM operation whose gate is closed; `reasons` lists every reason code.
            ErrorCode::LifecycleGateClosed => {
                (409, "lifecycle_gate_closed", "The model's lifecycle does not allow this operation now")
            }
            // A QLM version pins a checkpoint an operator revoked: it runs nothing until rebound.
            ErrorCode::CheckpointRevoked => {
                (409, "checkpoint_revoked", "A checkpoint this operation needs was revoked")
            }
            // Maker-checker: whoever made a request may not also decide it.
            ErrorCode::SeparationOfDuties => {
                (403, "separation_of_duties", "The requester of a change may not also decide it")
            }
            // A validation suite that cannot run: `problems` names each prohibited step (and its kind) and
            // each malformed case.
            ErrorCode::InvalidSuite => (422, "invalid_suite", "The validation suite is invalid for this version"),
            // A version holding steps this runtime does not run (agent, integration, Financial Action, code
            // runner, sub-workflow, external network); `steps` names them.
            ErrorCode::StepKindUnavailable => {
                (422, "step_kind_unavailable", "The workflow holds steps this runtime does not run")
            }
            // A run that is not where the operation needs it (a review of a run not awaiting one, a cancel
            // of an ended run); `state` says where it stands.
            ErrorCode::RunNotPending => (409, "run_not_pending", "The workflow run is not in a state that allows this"),
            ErrorCode::SpaceNotRunnable => {
                (409, "space_not_runnable", "The agent space cannot run under its active version")
            }
            ErrorCode::CapacityExhausted => {
                (429, "capacity_exhausted", "The agent runtime's capacity for this workspace is exhausted")
            }
            ErrorCode::QueueUnavailable => {
                (503, "queue_unavailable", "No queue driver is configured for asynchronous agent runs")
            }
            // Base64 the schema allows whose bytes are no WAV or FLAC this service decodes: what a recording
            // holds is no rule a schema states, so 409 as for any body the document allows that cannot be
            // carried out as given (422 says the body breaks a rule the document states).
            ErrorCode::InvalidAudio => (409, "invalid_audio", "The upload is not a recording this service reads"),
            // A body the document allows whose sizes multiply past a limit of this service (paths × steps ×
            // assets, values one answer carries): a product no JSON Schema states, so 409 and not 422; the
            // detail names the product and the limit.
            ErrorCode::LimitExceeded => {
                (409, "limit_exceeded", "The request's sizes together exceed a limit of this service")
            }
            // A CSV file the body carries whose rows do not read as its kind (a missing column, a bad date,
            // journals that do not balance): `errors` names each line. 409 for the same reason as above.
            ErrorCode::FileRejected => (409, "file_rejected", "The file's rows cannot be imported as its kind"),
            ErrorCode::RecordingMissing => (409, "recording_missing", "The call has no stored recording"),
            ErrorCode::ConsentRequired => (409, "consent_required", "No consent is in force for this call"),
            ErrorCode::SpeechRuntimeUnavailable => {
                (503, "speech_runtime_unavailable", "The local speech runtime is not installed")
            }
        }
    }

    pub fn status(self) -> u16 {
        self.describe().0
    }

    pub fn code(self) -> &'static str {
        self.describe().1
    }

    pub fn title(self) -> &'static str {
        self.describe().2
    }

    pub fn from_code(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.code() == code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_snake_case_and_statuses_are_errors() {
        let mut seen = HashSet::new();
        for c in ErrorCode::ALL {
            let (status, code, title) = c.describe();
            assert!(seen.insert(code), "duplicate {code}");
            assert!((400..600).contains(&status));
            assert!(code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{code}");
            assert!(!title.is_empty());
            assert_eq!(ErrorCode::from_code(code), Some(c));
        }
    }
}
