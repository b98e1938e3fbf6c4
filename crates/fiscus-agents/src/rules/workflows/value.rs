//! Proof of value: what a workflow's runs did, measured against the manual baseline the caller states.
//! Pure arithmetic on facts the application gathers; every figure's formula is in its schema.

use super::records::{Baseline, ValueFigures};
use super::run::RunState;

/// What one run contributes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunFacts {
    pub state: RunState,
    /// Start to end, for an ended run.
    pub duration_micros: Option<i64>,
    /// Steps the runtime completed (not reviews).
    pub steps_automated: u64,
    /// Review steps people decided.
    pub reviews: u64,
}

/// The figures of `runs` against `baseline`. Counts of automated steps and reviews come from completed
/// runs only: a failed or cancelled run saved nobody the work.
pub fn figures(baseline: &Baseline, runs: &[RunFacts]) -> ValueFigures {
    let count = |s: RunState| runs.iter().filter(|r| r.state == s).count() as u64;
    let completed: Vec<&RunFacts> = runs.iter().filter(|r| r.state == RunState::Completed).collect();
    let mut durations: Vec<f64> =
        completed.iter().filter_map(|r| r.duration_micros).map(|d| d as f64 / 1_000_000.0).collect();
    durations.sort_by(f64::total_cmp);
    let median = match durations.len() {
        0 => None,
        n if n % 2 == 1 => Some(durations[n / 2]),
        n => Some((durations[n / 2 - 1] + durations[n / 2]) / 2.0),
    };
    let reviews: u64 = completed.iter().map(|r| r.reviews).sum();
    let manual = completed.len() as u64 * u64::from(baseline.minutes_per_run);
    let review = reviews * u64::from(baseline.minutes_per_review);
    let saved = manual as i64 - review as i64;
    ValueFigures {
        runs: runs.len() as u64,
        completed: completed.len() as u64,
        failed: count(RunState::Failed),
        cancelled: count(RunState::Cancelled),
        in_progress: runs.iter().filter(|r| !r.state.is_ended()).count() as u64,
        steps_automated: completed.iter().map(|r| r.steps_automated).sum(),
        reviews,
        median_run_seconds: median,
        manual_minutes: manual,
        review_minutes: review,
        minutes_saved: saved,
        cost_saved_minor: cost(saved, baseline.hourly_cost_minor),
    }
}

/// `minutes × hourly / 60`, rounded half to even, exactly (integer arithmetic, saturating at the bounds).
fn cost(minutes: i64, hourly_minor: i64) -> i64 {
    let product = i128::from(minutes) * i128::from(hourly_minor);
    let (q, r) = (product / 60, product % 60);
    let twice = 2 * r.abs();
    let rounded = if twice > 60 || (twice == 60 && q % 2 != 0) { q + product.signum() } else { q };
    rounded.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn baseline() -> Baseline {
        Baseline { minutes_per_run: 90, minutes_per_review: 15, hourly_cost_minor: 12_000, currency: "USD".into() }
    }

    fn run(state: RunState, seconds: i64, steps: u64, reviews: u64) -> RunFacts {
        RunFacts { state, duration_micros: Some(seconds * 1_000_000), steps_automated: steps, reviews }
    }

    #[test]
    fn completed_runs_count_failed_and_cancelled_do_not() {
        let f = figures(
            &baseline(),
            &[
                run(RunState::Completed, 10, 6, 1),
                run(RunState::Completed, 30, 6, 1),
                run(RunState::Completed, 20, 6, 1),
                run(RunState::Failed, 5, 2, 0),
                RunFacts { state: RunState::AwaitingReview, duration_micros: None, steps_automated: 5, reviews: 0 },
            ],
        );
        assert_eq!((f.runs, f.completed, f.failed, f.in_progress), (5, 3, 1, 1));
        assert_eq!((f.steps_automated, f.reviews), (18, 3));
        assert_eq!(f.median_run_seconds, Some(20.0));
        assert_eq!((f.manual_minutes, f.review_minutes, f.minutes_saved), (270, 45, 225));
        assert_eq!(f.cost_saved_minor, 45_000, "225 minutes at 120.00 an hour");
    }

    #[test]
    fn costs_round_half_to_even_and_may_be_negative() {
        assert_eq!(cost(1, 90), 2, "1.5 rounds to 2");
        assert_eq!(cost(1, 150), 2, "2.5 rounds to 2");
        assert_eq!(cost(-1, 90), -2);
        assert_eq!(cost(1, 31), 1, "0.5166 rounds to 1");
        let none = figures(&baseline(), &[]);
        assert_eq!((none.median_run_seconds, none.minutes_saved), (None, 0));
    }
}
