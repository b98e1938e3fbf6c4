//! Compute jobs: what kinds there are, the states a job goes through, what cancelling means in each, and
//! what a job costs in AI credits.
//!
//! A job is `queued` when created, `running` while a worker holds it, and ends `succeeded`, `failed` or
//! `cancelled`. A queued job cancelled is cancelled at once (and its credits are refunded: nothing ran); a
//! running one is asked to stop and its worker ends it at the next check; an ended job cannot be cancelled.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    Optimization,
    Simulation,
    Backtest,
    /// A run of a model of the catalogue (`/quant/models/{key}/run`, `/ml/anomaly`).
    ModelRun,
    /// Scenarios generated from history (`/ml/scenarios`).
    Scenarios,
    /// A planning forecast (`/planning/forecasts`).
    Forecast,
    /// Synthetic paths or scenarios (`/generative/*`).
    Generative,
    /// A model tournament (`/quant/model-tournaments`).
    Tournament,
    /// A research run (`/quant/research/runs`): several computations in one reproducible bundle.
    ResearchRun,
}

impl JobKind {
    pub const ALL: [JobKind; 9] = [
        JobKind::Optimization,
        JobKind::Simulation,
        JobKind::Backtest,
        JobKind::ModelRun,
        JobKind::Scenarios,
        JobKind::Forecast,
        JobKind::Generative,
        JobKind::Tournament,
        JobKind::ResearchRun,
    ];

    /// The scopes whose operations queue jobs of this kind: an application that queued one must still hold
    /// one of them (within its workspace's entitlement) when a worker takes the job up.
    pub fn submitting_scopes(self) -> &'static [&'static str] {
        match self {
            JobKind::Optimization | JobKind::Simulation | JobKind::Backtest => &["quant:compute:run"],
            JobKind::ModelRun => &["quant:models:run", "ml:inference"],
            JobKind::Scenarios => &["ml:inference"],
            JobKind::Forecast => &["planning:forecast:create"],
            JobKind::Generative => &["generative:inference"],
            JobKind::Tournament => &["quant:models:run"],
            JobKind::ResearchRun => &["quant:research:run"],
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Optimization => "optimization",
            JobKind::Simulation => "simulation",
            JobKind::Backtest => "backtest",
            JobKind::ModelRun => "model_run",
            JobKind::Scenarios => "scenarios",
            JobKind::Forecast => "forecast",
            JobKind::Generative => "generative",
            JobKind::Tournament => "tournament",
            JobKind::ResearchRun => "research_run",
        }
    }

    pub fn parse(s: &str) -> Option<JobKind> {
        JobKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

impl JobState {
    pub const ALL: [JobState; 5] =
        [JobState::Queued, JobState::Running, JobState::Succeeded, JobState::Failed, JobState::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<JobState> {
        JobState::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether the job has ended (nothing about it changes any more).
    pub fn is_final(self) -> bool {
        matches!(self, JobState::Succeeded | JobState::Failed | JobState::Cancelled)
    }
}

/// What a cancel request does to a job in `state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cancel {
    /// Queued: cancelled now, its credits refunded.
    Now,
    /// Running: its worker is asked to stop (the job says `cancel_requested` until it does).
    Requested,
}

/// Why a cancel was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlreadyEnded(pub JobState);

pub fn cancel(state: JobState) -> Result<Cancel, AlreadyEnded> {
    match state {
        JobState::Queued => Ok(Cancel::Now),
        JobState::Running => Ok(Cancel::Requested),
        ended => Err(AlreadyEnded(ended)),
    }
}

/// A job's price in AI credits, from the size of its work (the published rule, `GET /ai-credits/balance`
/// explains it): an optimisation costs 1 credit per started 100 assets; a simulation 1 per started 10
/// million simulated values (paths × steps × assets); a backtest 1 per started million asset-periods; a model
/// run 1; scenarios 1 per started 10 million resampled values; a forecast 1; a generative run 1 per started 10 million generated
/// values; a tournament 1 per candidate; a research run the sum of its steps' prices. Every job costs at least
/// 1.
pub fn credits(kind: JobKind, size: u64) -> i64 {
    let unit: u64 = match kind {
        JobKind::Optimization => 100,
        JobKind::Simulation => 10_000_000,
        JobKind::Backtest => 1_000_000,
        JobKind::ModelRun => 1,
        JobKind::Scenarios => 10_000_000,
        JobKind::Forecast => 1,
        JobKind::Generative => 10_000_000,
        JobKind::Tournament => 1,
        // Priced by its steps (`research_run_credits`); a size alone never prices one.
        JobKind::ResearchRun => 1,
    };
    i64::try_from(size.div_ceil(unit).max(1)).unwrap_or(i64::MAX)
}

/// A research run's price: the sum of its steps' prices (each from [`credits`]), at least 1 like every job.
pub fn research_run_credits(step_prices: impl IntoIterator<Item = i64>) -> i64 {
    step_prices.into_iter().fold(0i64, i64::saturating_add).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_only_live_jobs_cancel() {
        for k in JobKind::ALL {
            assert_eq!(JobKind::parse(k.as_str()), Some(k));
        }
        for s in JobState::ALL {
            assert_eq!(JobState::parse(s.as_str()), Some(s));
            assert_eq!(cancel(s).is_err(), s.is_final());
        }
        assert_eq!(cancel(JobState::Queued), Ok(Cancel::Now));
        assert_eq!(cancel(JobState::Running), Ok(Cancel::Requested));
        assert_eq!(JobState::parse("done"), None);
    }

    #[test]
    fn credits_follow_the_size_of_the_work() {
        assert_eq!(credits(JobKind::Optimization, 0), 1);
        assert_eq!(credits(JobKind::Optimization, 100), 1);
        assert_eq!(credits(JobKind::Optimization, 101), 2);
        assert_eq!(credits(JobKind::Simulation, 100_000 * 252), 3);
        assert_eq!(credits(JobKind::Backtest, 5_000 * 10), 1);
        assert_eq!(research_run_credits([credits(JobKind::Optimization, 150), credits(JobKind::ModelRun, 1)]), 3);
        assert_eq!(research_run_credits([]), 1);
        assert_eq!(research_run_credits([i64::MAX, 5]), i64::MAX);
    }
}

/// The numeric engine's typed reason for refusing a computation, as the API names it: the `engine_error`
/// member of a problem, and a failed job's `error.code`. One variant per reason the engine gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineReason {
    /// Kept for jobs that failed before issue 55: an empty input is now `insufficient_data`, its cause.
    Empty,
    NonFinite,
    LengthMismatch,
    InvalidParameter,
    InsufficientData,
    NotPositiveDefinite,
    Undefined,
    Infeasible,
    Unbounded,
    NoConvergence,
    MissingObservation,
    Rejected,
    /// The counted budget (iterations, work) ran out: the same request always ends so.
    BudgetExceeded,
    /// The wall-clock safety net ran out first: the machine was slow or busy; worth retrying.
    SafetyTimeout,
}

impl EngineReason {
    pub const ALL: [EngineReason; 14] = [
        EngineReason::Empty,
        EngineReason::NonFinite,
        EngineReason::LengthMismatch,
        EngineReason::InvalidParameter,
        EngineReason::InsufficientData,
        EngineReason::NotPositiveDefinite,
        EngineReason::Undefined,
        EngineReason::Infeasible,
        EngineReason::Unbounded,
        EngineReason::NoConvergence,
        EngineReason::MissingObservation,
        EngineReason::Rejected,
        EngineReason::BudgetExceeded,
        EngineReason::SafetyTimeout,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EngineReason::Empty => "empty",
            EngineReason::NonFinite => "non_finite",
            EngineReason::LengthMismatch => "length_mismatch",
            EngineReason::InvalidParameter => "invalid_parameter",
            EngineReason::InsufficientData => "insufficient_data",
            EngineReason::NotPositiveDefinite => "not_positive_definite",
            EngineReason::Undefined => "undefined",
            EngineReason::Infeasible => "infeasible",
            EngineReason::Unbounded => "unbounded",
            EngineReason::NoConvergence => "no_convergence",
            EngineReason::MissingObservation => "missing_observation",
            EngineReason::Rejected => "rejected",
            EngineReason::BudgetExceeded => "budget_exceeded",
            EngineReason::SafetyTimeout => "safety_timeout",
        }
    }
}

/// Why a queued job failed, stored as [`JobFailure::as_str`] and served as the job's `error.code`: the
/// engine's reason, or what ended the job around the engine. A job's failure is not an HTTP refusal (the
/// request that queued it was accepted), so these are not `ErrorCode`s; the two vocabularies share only the
/// engine's reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobFailure {
    /// The engine refused the inputs (`infeasible`, `not_positive_definite`, …).
    Engine(EngineReason),
    /// The computation ran past the job's wall-clock safety net (the same word as the engine's own).
    SafetyTimeout,
    /// The application that queued it lost the scope, or was suspended, before a worker took it up.
    AuthorityWithdrawn,
    /// Its sealed request failed verification; nothing was computed.
    IntegrityFailure,
    /// Its workspace is no longer entitled to the data it reads (withdrawn after it was queued); nothing
    /// was read.
    EntitlementMissing,
    /// It could not be computed for a reason of the service's own (logged, never detailed).
    Internal,
}

impl JobFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            JobFailure::Engine(reason) => reason.as_str(),
            JobFailure::SafetyTimeout => "safety_timeout",
            JobFailure::AuthorityWithdrawn => "authority_withdrawn",
            JobFailure::IntegrityFailure => "integrity_failure",
            JobFailure::EntitlementMissing => "entitlement_missing",
            JobFailure::Internal => "internal_error",
        }
    }

    /// Whether the same request may succeed if submitted again: only a safety net's timeout, which says the
    /// machine was slow, not that the request was. Every other failure is the request's own (the same
    /// request ends the same way) or the service's (`internal_error`, logged).
    pub fn retryable(self) -> bool {
        matches!(self, JobFailure::SafetyTimeout | JobFailure::Engine(EngineReason::SafetyTimeout))
    }

    /// Every code a failed job can carry, for the document's enumeration (the engine's `safety_timeout`
    /// and the job's are the same word, listed once).
    pub fn codes() -> Vec<&'static str> {
        let mut codes: Vec<&'static str> = EngineReason::ALL.iter().map(|r| r.as_str()).collect();
        for other in [
            JobFailure::AuthorityWithdrawn,
            JobFailure::IntegrityFailure,
            JobFailure::EntitlementMissing,
            JobFailure::Internal,
        ] {
            codes.push(other.as_str());
        }
        codes
    }

    /// The failure a stored code names; `None` for a word no version of Fiscus wrote.
    pub fn parse(code: &str) -> Option<JobFailure> {
        match code {
            "safety_timeout" => Some(JobFailure::SafetyTimeout),
            "authority_withdrawn" => Some(JobFailure::AuthorityWithdrawn),
            "integrity_failure" => Some(JobFailure::IntegrityFailure),
            "entitlement_missing" => Some(JobFailure::EntitlementMissing),
            "internal_error" => Some(JobFailure::Internal),
            other => EngineReason::ALL.into_iter().find(|r| r.as_str() == other).map(JobFailure::Engine),
        }
    }
}

/// The schema of a failed job's `error.code`: every [`JobFailure::codes`] word.
pub struct JobFailureCode;

impl utoipa::PartialSchema for JobFailureCode {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(JobFailure::codes()))
            .examples(["infeasible"])
            .build()
            .into()
    }
}

impl utoipa::ToSchema for JobFailureCode {}

#[cfg(test)]
mod failure_tests {
    use super::*;

    #[test]
    fn every_failure_code_reads_back_as_itself_and_unknown_words_do_not() {
        let mut all: Vec<JobFailure> = EngineReason::ALL.into_iter().map(JobFailure::Engine).collect();
        all.extend([
            JobFailure::AuthorityWithdrawn,
            JobFailure::IntegrityFailure,
            JobFailure::EntitlementMissing,
            JobFailure::Internal,
        ]);
        for f in all {
            let back = JobFailure::parse(f.as_str()).expect("known");
            assert_eq!(back.as_str(), f.as_str());
        }
        // Jobs stopped by the clock before issue 34 say `budget_exceeded`: read as the engine's word.
        assert_eq!(JobFailure::parse("budget_exceeded"), Some(JobFailure::Engine(EngineReason::BudgetExceeded)));
        assert_eq!(JobFailure::parse("safety_timeout"), Some(JobFailure::SafetyTimeout));
        assert!(JobFailure::SafetyTimeout.retryable() && !JobFailure::Engine(EngineReason::BudgetExceeded).retryable());
        assert_eq!(JobFailure::parse("Infeasible"), None);
        assert_eq!(JobFailure::parse(""), None);
        let codes = JobFailure::codes();
        let unique: std::collections::BTreeSet<_> = codes.iter().collect();
        assert_eq!(unique.len(), codes.len(), "{codes:?}");
        assert_eq!(codes.len(), 18);
    }
}
