//! Property tests: public functions fed arbitrary (often nonsensical) input of bounded size return a finite
//! value or a typed error. A panic, a NaN or infinity returned as `Ok`, or a fit or optimisation running
//! past its [`Budget`] fails the property.
#![allow(clippy::unwrap_used)]

use std::fmt::Debug;
use std::time::{Duration, Instant};

use fiscus_quant::anomaly::{self, IsolationForest, IsolationForestConfig, RobustZ};
use fiscus_quant::backtest::{self, BacktestConfig, BacktestResult, Rebalance};
use fiscus_quant::benchmark::{self, RelativeSummary};
use fiscus_quant::calendar::Date;
use fiscus_quant::covariance::Shrunk;
use fiscus_quant::forecast::{
    self, ArimaFit, ArimaForecast, ArimaSpec, ArimaTrend, HoltWintersFit, HoltWintersSpec, InitialState, Season,
    Smoothing,
};
use fiscus_quant::optimise::{self, Constraints, GroupLimit, Objective, OptimalPortfolio, RiskParityPortfolio};
use fiscus_quant::regression::{self, Ols};
use fiscus_quant::risk::RiskSummary;
use fiscus_quant::simulate::{self, BootstrapSpec, EuropeanOption, MonteCarloPrice, ShockOutcome, ShockScenario};
use fiscus_quant::tax_lots::{self, Lot, ReliefMethod, Sale};
use fiscus_quant::value_at_risk::TailRisk;
use fiscus_quant::{Budget, Matrix, covariance, features, returns, risk, value_at_risk};
use proptest::prelude::*;

/// Every number a result carries.
trait Finite {
    fn finite(&self) -> bool;
}

impl Finite for f64 {
    fn finite(&self) -> bool {
        self.is_finite()
    }
}

impl<T: Finite> Finite for Option<T> {
    fn finite(&self) -> bool {
        self.as_ref().is_none_or(Finite::finite)
    }
}

impl<T: Finite> Finite for Vec<T> {
    fn finite(&self) -> bool {
        self.iter().all(Finite::finite)
    }
}

impl<A: Finite, B: Finite> Finite for (A, B) {
    fn finite(&self) -> bool {
        self.0.finite() && self.1.finite()
    }
}

impl Finite for Matrix {
    fn finite(&self) -> bool {
        self.as_slice().iter().all(|v| v.is_finite())
    }
}

macro_rules! finite_fields {
    ($t:ty => $($f:ident),+) => {
        impl Finite for $t {
            fn finite(&self) -> bool {
                true $(&& self.$f.finite())+
            }
        }
    };
}

finite_fields!(RiskSummary => total_return, annual_return, annual_volatility, sharpe_ratio, sortino_ratio, downside_risk, max_drawdown, calmar_ratio, beta, alpha);
finite_fields!(RelativeSummary => beta, alpha, tracking_error, excess_sharpe, information_ratio, up_capture, down_capture, up_down_capture);
finite_fields!(Shrunk => matrix, shrinkage, target_mean_variance);
finite_fields!(OptimalPortfolio => weights, expected_return, volatility, sharpe_ratio);
finite_fields!(RiskParityPortfolio => weights, risk_contributions);
finite_fields!(TailRisk => var, cvar);
finite_fields!(RobustZ => median, scale, scores);
finite_fields!(MonteCarloPrice => price, standard_error);
finite_fields!(ShockOutcome => values_before, values_after, pnl, total_pnl);
finite_fields!(ArimaForecast => mean, standard_error, lower, upper);
finite_fields!(HoltWintersFit => fitted, sse, level, trend, seasons, previous_cycle_season);
finite_fields!(Ols => coefficients, std_errors, t_values, r_squared, adj_r_squared, residual_std_error);

impl Finite for ArimaFit {
    fn finite(&self) -> bool {
        [self.trend_coefficient, self.sigma2, self.log_likelihood, self.aic(), self.bic()].iter().all(|v| v.is_finite())
            && [&self.ar, &self.ma, &self.seasonal_ar, &self.seasonal_ma].iter().all(|v| v.finite())
    }
}

impl Finite for BacktestResult {
    fn finite(&self) -> bool {
        self.values.finite()
            && self.returns.finite()
            && self.cash.finite()
            && self.final_positions.finite()
            && self.total_fees.finite()
            && self.fills.iter().all(|f| f.size.is_finite() && f.price.is_finite() && f.fee.is_finite())
    }
}

impl Finite for IsolationForest {
    fn finite(&self) -> bool {
        true
    }
}

/// The property itself: an `Ok` carries only finite numbers. Returns the value for chaining.
fn ok<T: Finite + Debug>(what: &str, r: fiscus_quant::Result<T>) -> Option<T> {
    match r {
        Ok(v) => {
            assert!(v.finite(), "{what} returned a non-finite number as Ok: {v:?}");
            Some(v)
        }
        Err(_) => None,
    }
}

/// Small enough that a property run stays quick; large enough that a debug build finishes most fits.
const BUDGET: Budget = Budget::new(Duration::from_millis(100), 5_000);
/// How far past its deadline a computation may return: it looks at the clock between likelihood
/// evaluations (or every 256 filter steps, or between solver iterations), and one of those is far shorter.
const GRACE: Duration = Duration::from_millis(250);

/// Runs a budgeted computation and checks both halves of the property.
fn within_budget<T: Finite + Debug>(what: &str, f: impl FnOnce() -> fiscus_quant::Result<T>) -> Option<T> {
    let start = Instant::now();
    let r = f();
    let took = start.elapsed();
    assert!(took <= BUDGET.max_duration + GRACE, "{what} took {took:?}, budget {:?}", BUDGET.max_duration);
    ok(what, r)
}

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => -2.0..2.0f64,
        1 => Just(0.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(-1.0),
        1 => -1e300..1e300f64,
    ]
}

/// Finite values only, so that inputs get past validation and exercise the numerics.
fn finite_matrix(max_rows: usize, max_cols: usize) -> impl Strategy<Value = Matrix> {
    (1..max_rows, 1..max_cols).prop_flat_map(|(r, c)| {
        prop::collection::vec(prop_oneof![4 => -0.1..0.1f64, 1 => Just(0.0), 1 => 0.5..2.0f64], r * c)
            .prop_map(move |d| Matrix::from_row_major(r, c, d).unwrap())
    })
}

fn vec_f64(max: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(any_f64(), 0..max)
}

fn matrix(max_rows: usize, max_cols: usize) -> impl Strategy<Value = Matrix> {
    (0..max_rows, 0..max_cols).prop_flat_map(|(r, c)| {
        prop::collection::vec(any_f64(), r * c).prop_map(move |d| Matrix::from_row_major(r, c, d).unwrap())
    })
}

/// Finite series of every magnitude, so that inputs get past validation and reach the arithmetic.
fn finite_series(min: usize, max: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![
            6 => -2.0..2.0f64,
            2 => Just(0.0),
            1 => Just(-1.0),
            1 => -5.0..-1.0f64,
            1 => -1e300..1e300f64,
            1 => prop_oneof![Just(f64::MAX), Just(-f64::MAX), Just(9e307), Just(f64::MIN_POSITIVE)],
        ],
        min..max,
    )
}

/// A short positive series with a trend, a season and noise of random size, for the fits.
fn fit_series() -> impl Strategy<Value = Vec<f64>> {
    (8usize..60, 0.0..3.0f64, prop::collection::vec(-1.0..1.0f64, 60), prop_oneof![Just(1.0), Just(1e-8), Just(1e8)])
        .prop_map(|(n, slope, noise, scale)| {
            (0..n).map(|t| scale * (10.0 + slope * t as f64 + (t as f64 * 1.3).sin() + noise[t])).collect()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn return_and_risk_functions_never_panic(x in vec_f64(40), b in vec_f64(40), ppy in any_f64(), cut in any_f64()) {
        ok("simple_returns", returns::simple_returns(&x));
        ok("log_returns", returns::log_returns(&x));
        ok("summary", risk::summary(&x, Some(&b), 0.0, ppy));
        ok("summary", risk::summary(&x, None, ppy, 252.0));
        ok("relative_summary", benchmark::relative_summary(&x, &b, 0.0, ppy));
        ok("max_drawdown", risk::max_drawdown(&x, risk::DrawdownStart::AfterFirstReturn));
        ok("historical VaR", value_at_risk::historical(&x, cut));
        ok("parametric VaR", value_at_risk::parametric(&x, cut));
        ok("robust z", anomaly::robust_z_scores(&x));
        ok("trailing robust z", anomaly::trailing_robust_z_scores(&x, 5));
        ok("ols", regression::ols(&x, std::slice::from_ref(&b), true));
        let n = x.len().min(b.len());
        ok("ols", regression::ols(&x[..n], &[b[..n].to_vec()], cut.is_sign_positive()));
    }

    #[test]
    fn finite_returns_give_finite_statistics_or_typed_errors(x in finite_series(0, 30), b in finite_series(0, 30), rf in any_f64(), ppy in prop_oneof![Just(252.0), Just(12.0), any_f64()], cut in 0.01..0.99f64) {
        ok("simple_returns", returns::simple_returns(&x));
        ok("log_returns", returns::log_returns(&x));
        ok("cumulative_growth", returns::cumulative_growth(&x));
        ok("annual_return", risk::annual_return(&x, ppy));
        ok("annual_volatility", risk::annual_volatility(&x, ppy));
        ok("sharpe_ratio", risk::sharpe_ratio(&x, rf, ppy));
        ok("downside_risk", risk::downside_risk(&x, rf, ppy));
        ok("sortino_ratio", risk::sortino_ratio(&x, rf, ppy));
        for start in [risk::DrawdownStart::BeforeFirstReturn, risk::DrawdownStart::AfterFirstReturn] {
            ok("max_drawdown", risk::max_drawdown(&x, start));
        }
        ok("calmar_ratio", risk::calmar_ratio(&x, ppy));
        ok("beta", risk::beta(&x, &b, rf));
        ok("alpha", risk::alpha(&x, &b, rf, ppy));
        ok("summary", risk::summary(&x, Some(&b), rf, ppy));
        ok("summary", risk::summary(&x, None, 0.0, 252.0));
        // Equal lengths, so that the pair gets past the length check and reaches the arithmetic.
        let n = x.len().min(b.len());
        let (xs, bs) = (&x[..n], &b[..n]);
        ok("tracking_error", benchmark::tracking_error(xs, bs, ppy));
        ok("excess_sharpe", benchmark::excess_sharpe(xs, bs));
        ok("information_ratio", benchmark::information_ratio(xs, bs, ppy));
        ok("up_capture", benchmark::up_capture(xs, bs, ppy));
        ok("down_capture", benchmark::down_capture(xs, bs, ppy));
        ok("up_down_capture", benchmark::up_down_capture(xs, bs, ppy));
        ok("relative_summary", benchmark::relative_summary(xs, bs, rf, ppy));
        ok("ols", regression::ols(xs, &[bs.to_vec()], true));
        ok("ols", regression::ols(xs, &[bs.to_vec(), bs.iter().map(|v| v * v).collect()], false));
        ok("ols", regression::ols(xs, &[], true));
        ok("historical VaR", value_at_risk::historical(&x, cut));
        ok("parametric VaR", value_at_risk::parametric(&x, cut));
        ok("robust z", anomaly::robust_z_scores(&x));
        ok("trailing robust z", anomaly::trailing_robust_z_scores(&x, 3));
        let prices: Vec<f64> = x.iter().map(|v| v.abs()).collect();
        ok("simple_return feature", features::simple_return(&prices));
        ok("log_return feature", features::log_return(&prices));
        ok("rolling_volatility", features::rolling_volatility(&prices, 3, 252.0));
        ok("momentum", features::momentum(&prices, 1, 3));
        ok("drawdown feature", features::drawdown(&prices));
        let shock = ShockScenario { name: "s".into(), moves: b.iter().map(|v| v.max(-1.0)).collect() };
        ok("apply_shock", simulate::apply_shock(&x, &prices, &shock));
    }

    #[test]
    fn covariance_and_optimisers_never_panic(m in matrix(12, 5), mu in vec_f64(6), lo in any_f64(), hi in any_f64(), t in any_f64()) {
        ok("sample", covariance::sample(&m, 1));
        ok("ledoit_wolf", covariance::ledoit_wolf(&m));
        ok("mean_historical_return", covariance::mean_historical_return(&m, 252.0));
        ok("simple_returns_matrix", returns::simple_returns_matrix(&m));
        if let Ok(s) = covariance::sample(&m, 1) {
            let n = s.rows();
            let mut c = Constraints::bounded(n, lo, hi);
            c.groups.push(GroupLimit { members: vec![0, 7], min: Some(t), max: None });
            for objective in [
                Objective::MinVariance,
                Objective::MaxSharpe { risk_free: t },
                Objective::EfficientRisk { target_volatility: t },
                Objective::EfficientReturn { target_return: t },
            ] {
                ok("optimise", optimise::optimise(&s, Some(&mu), objective, &Constraints::long_only(n)));
                ok("optimise", optimise::optimise(&s, Some(&mu), objective, &c));
            }
            ok("equal_risk_contribution", optimise::equal_risk_contribution(&s));
            ok("risk_budgeting", optimise::risk_budgeting(&s, &mu));
        }
        ok("optimise", optimise::optimise(&m, Some(&mu), Objective::MinVariance, &Constraints::long_only(m.rows())));
    }

    #[test]
    fn covariance_estimators_on_finite_panels_are_finite_or_typed_errors(rows in 1usize..10, cols in 1usize..5, cells in finite_series(50, 51), constant_column in any::<bool>()) {
        let mut data = cells[..rows * cols].to_vec();
        if constant_column {
            for r in 0..rows {
                data[r * cols] = 0.01;
            }
        }
        let m = Matrix::from_row_major(rows, cols, data).unwrap();
        ok("sample", covariance::sample(&m, 1));
        ok("sample", covariance::sample(&m, 0));
        ok("ledoit_wolf", covariance::ledoit_wolf(&m));
        ok("ledoit_wolf_single_factor", covariance::ledoit_wolf_single_factor(&m));
        ok("ledoit_wolf_constant_correlation", covariance::ledoit_wolf_constant_correlation(&m));
        ok("mean_historical_return", covariance::mean_historical_return(&m, 252.0));
        let prices = Matrix::from_row_major(rows, cols, m.as_slice().iter().map(|v| v.abs()).collect()).unwrap();
        ok("simple_returns_matrix", returns::simple_returns_matrix(&prices));
        ok("bootstrap_paths", simulate::bootstrap_paths(&m, BootstrapSpec { steps: 3, paths: 2, block_length: 2, seed: 1 }));
        let schedule = backtest::periodic_schedule(rows, 2, &vec![1.0 / cols as f64; cols]).unwrap();
        if let Some(bt) = ok("backtest", backtest::run(&prices, &schedule, BacktestConfig { initial_cash: 1e6, fee_rate: 0.001 })) {
            ok("backtest risk summary", bt.risk_summary(252.0));
        }
        ok("isolation forest", IsolationForest::fit(&m, IsolationForestConfig { trees: 5, max_samples: 16, seed: 1 }).and_then(|f| f.scores(&m)));
        // The last column on the others (column 0 constant when constant_column: collinear with the intercept).
        let regressors: Vec<Vec<f64>> = (0..cols - 1).map(|j| m.column(j)).collect();
        ok("ols", regression::ols(&m.column(cols - 1), &regressors, true));
        ok("ols", regression::ols(&m.column(cols - 1), &regressors, false));
    }

    #[test]
    fn optimisers_on_finite_data_never_panic(m in finite_matrix(10, 5), t in -0.5..0.5f64, lo in -1.0..0.5f64) {
        let mu = covariance::mean_historical_return(&m, 252.0).unwrap();
        let s = covariance::sample(&m, 1);
        let lw = covariance::ledoit_wolf(&m);
        for cov in [s.ok(), lw.ok().map(|l| l.matrix)].into_iter().flatten() {
            let n = cov.rows();
            for objective in [
                Objective::MinVariance,
                Objective::MaxSharpe { risk_free: t },
                Objective::EfficientRisk { target_volatility: t.abs() },
                Objective::EfficientReturn { target_return: t },
            ] {
                within_budget("optimise", || optimise::optimise_with_budget(&cov, Some(&mu), objective, &Constraints::bounded(n, lo, 1.0), BUDGET));
            }
            within_budget("equal_risk_contribution", || optimise::equal_risk_contribution_with_budget(&cov, BUDGET));
        }
        ok("historical VaR", value_at_risk::historical(&m.column(0), 0.05));
        ok("isolation forest", IsolationForest::fit(&m, IsolationForestConfig { trees: 5, max_samples: 256, seed: 1 }).and_then(|f| f.scores(&m)));
        let prices: Vec<f64> = m.column(0).iter().map(|v| 1.0 + v.abs()).collect();
        let pm = Matrix::from_row_major(prices.len(), 1, prices.clone()).unwrap();
        ok("backtest", backtest::run(&pm, &[Rebalance { row: 0, weights: vec![Some(t)] }], BacktestConfig { initial_cash: 100.0, fee_rate: 0.01 }));
        within_budget("ARIMA fit", || forecast::fit_arima_with_budget(&prices, ArimaSpec { p: 1, d: 1, q: 1, seasonal_p: 0, seasonal_q: 0, seasonal_d: 0, period: 0, trend: ArimaTrend::Drift }, BUDGET));
        within_budget("Holt-Winters fit", || forecast::fit_holt_winters_with_budget(&prices, HoltWintersSpec { trend: true, damped: true, season: Some(Season::Multiplicative { period: 2 }) }, BUDGET));
    }

    #[test]
    fn simulation_and_backtest_never_panic(m in matrix(8, 3), x in vec_f64(4), seed in any::<u64>(), steps in 0usize..5, w in vec_f64(4)) {
        let o = EuropeanOption { spot: x.first().copied().unwrap_or(1.0), strike: 1.0, rate: 0.0, dividend_yield: 0.0, volatility: x.get(1).copied().unwrap_or(0.2), maturity_years: 1.0 };
        ok("european_call", simulate::european_call(&o, steps, 3, seed));
        ok("european_call_parallel", simulate::european_call_parallel(&o, steps, 3, seed, 2));
        ok("bootstrap_paths", simulate::bootstrap_paths(&m, BootstrapSpec { steps, paths: 2, block_length: steps, seed }));
        ok("apply_shock", simulate::apply_shock(&x, &w, &ShockScenario { name: "s".into(), moves: x.clone() }));
        let schedule = vec![Rebalance { row: steps, weights: w.iter().map(|v| Some(*v)).collect() }];
        ok("backtest", backtest::run(&m, &schedule, BacktestConfig { initial_cash: x.first().copied().unwrap_or(1.0), fee_rate: 0.001 }));
        if let Ok(s) = backtest::periodic_schedule(m.rows(), steps, &w) {
            ok("backtest", backtest::run(&m, &s, BacktestConfig { initial_cash: 100.0, fee_rate: 0.0 }));
        }
        ok("isolation forest", IsolationForest::fit(&m, IsolationForestConfig { trees: 3, max_samples: steps + 1, seed }));
    }

    #[test]
    fn forecasting_never_panics(y in vec_f64(40), a in any_f64(), p in 0usize..3, q in 0usize..2) {
        let spec = HoltWintersSpec { trend: true, damped: true, season: Some(Season::Multiplicative { period: 4 }) };
        let init = InitialState { level: a, trend: 0.0, seasons: vec![1.0; 4] };
        ok("Holt-Winters run", forecast::holt_winters::run(&y, spec, Smoothing { alpha: a, beta: 0.1, gamma: 0.1, phi: 0.9 }, &init));
        within_budget("Holt-Winters fit", || forecast::fit_holt_winters_with_budget(&y, HoltWintersSpec { trend: true, damped: false, season: Some(Season::Additive { period: 4 }) }, BUDGET));
        if let Some(fit) = within_budget("ARIMA fit", || forecast::fit_arima_with_budget(&y, ArimaSpec { p, d: 0, q, seasonal_p: 0, seasonal_q: 0, seasonal_d: q, period: 3, trend: ArimaTrend::None }, BUDGET)) {
            ok("ARIMA forecast", fit.forecast(24, 0.9));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn fits_return_finite_models_or_typed_errors_within_their_budget(
        y in prop_oneof![3 => fit_series(), 1 => finite_series(3, 40)],
        orders in (0usize..4, 0usize..3, 0usize..3, 0usize..2, 0usize..2, 0usize..2, 2usize..13),
        with_trend in any::<bool>(),
        season in prop_oneof![Just(None), (2usize..13).prop_map(|period| Some(Season::Additive { period })), (2usize..13).prop_map(|period| Some(Season::Multiplicative { period }))],
        damped in any::<bool>(),
    ) {
        let (p, d, q, sp, sd, sq, period) = orders;
        // The trend term each differencing order allows, so that most specs get past validation.
        let trend = match (with_trend, d, sd) {
            (true, 0, 0) => ArimaTrend::Constant,
            (true, 1, 0) => ArimaTrend::Drift,
            _ => ArimaTrend::None,
        };
        let spec = ArimaSpec { p, d, q, seasonal_p: sp, seasonal_d: sd, seasonal_q: sq, period, trend };
        if let Some(fit) = within_budget("ARIMA fit", || forecast::fit_arima_with_budget(&y, spec, BUDGET)) {
            ok("ARIMA forecast", fit.forecast(12, 0.95));
        }
        let hw = HoltWintersSpec { trend: damped || d > 0, damped, season };
        if let Some(fit) = within_budget("Holt-Winters fit", || forecast::fit_holt_winters_with_budget(&y, hw, BUDGET)) {
            ok("Holt-Winters intervals", fit.prediction_intervals(6, 0.9, 50, 1));
        }
    }
}

#[test]
fn relief_of_lots_near_i64_max_does_not_overflow() {
    let base = Date::from_ymd(2024, 1, 1).unwrap();
    let lots = vec![
        Lot { id: 1, acquired: base, quantity: i64::MAX - 1, cost: i64::MAX },
        Lot { id: 2, acquired: base, quantity: i64::MAX - 1, cost: 1 },
    ];
    let sale = Sale { date: base, quantity: i64::MAX, proceeds: i64::MAX };
    let r = tax_lots::relieve(&lots, &sale, &ReliefMethod::Fifo).unwrap();
    assert_eq!(r.realised.iter().map(|p| i128::from(p.quantity)).sum::<i128>(), i128::from(i64::MAX));
    let _ = tax_lots::relieve(&lots, &sale, &ReliefMethod::Specific(vec![(1, i64::MAX - 1), (1, i64::MAX - 1)]));
}

#[test]
fn bad_inputs_come_back_as_the_matching_typed_error() {
    use fiscus_quant::QuantError;
    assert!(matches!(risk::sharpe_ratio(&[], 0.0, 252.0), Err(QuantError::Empty { .. })));
    assert!(matches!(risk::sharpe_ratio(&[0.1, f64::NAN], 0.0, 252.0), Err(QuantError::NonFinite { index: 1, .. })));
    assert!(matches!(risk::beta(&[0.1, 0.2], &[0.1], 0.0), Err(QuantError::LengthMismatch { .. })));
    let singular = Matrix::from_rows(&[vec![1.0, 1.0], vec![1.0, 1.0]]).unwrap();
    assert!(matches!(optimise::equal_risk_contribution(&singular), Err(QuantError::NotPositiveDefinite { .. })));
    let indefinite = Matrix::from_rows(&[vec![1.0, 2.0], vec![2.0, 1.0]]).unwrap();
    assert!(matches!(
        optimise::optimise(&indefinite, None, Objective::MinVariance, &Constraints::long_only(2)),
        Err(QuantError::NotPositiveDefinite { .. })
    ));
    // A singular but positive semi-definite covariance is a valid input with a minimum-variance answer.
    let p = optimise::optimise(&singular, None, Objective::MinVariance, &Constraints::long_only(2)).unwrap();
    assert!((p.weights.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    let mut c = Constraints::long_only(2);
    c.upper = vec![0.3, 0.3];
    let ok = Matrix::from_rows(&[vec![0.04, 0.0], vec![0.0, 0.09]]).unwrap();
    assert!(matches!(optimise::optimise(&ok, None, Objective::MinVariance, &c), Err(QuantError::Infeasible { .. })));
}

/// The inputs the robustness probes found, one by one.
#[test]
fn probed_inputs_come_back_as_typed_errors_or_finite_values() {
    use fiscus_quant::QuantError;
    // A feature spread wider than f64::MAX used to panic in the split draw; scikit-learn scores it.
    let wide =
        Matrix::from_rows(&(0..20).map(|i| vec![if i % 2 == 0 { 9e307 } else { -9e307 }]).collect::<Vec<_>>()).unwrap();
    let forest = IsolationForest::fit(&wide, IsolationForestConfig { trees: 10, max_samples: 16, seed: 0 }).unwrap();
    assert!(ok("isolation forest", forest.scores(&wide)).is_some());
    // A zero-variance column has no correlations: it used to give a NaN matrix as Ok.
    let flat = Matrix::from_rows(&[vec![0.01, 0.02], vec![0.01, -0.01], vec![0.01, 0.03]]).unwrap();
    assert!(matches!(covariance::ledoit_wolf_constant_correlation(&flat), Err(QuantError::Undefined { .. })));
    // A loss of more than 100 %: NaN before, and -0.81 with three rows (negative wealth to an even power).
    let below = Matrix::from_rows(&[vec![-1.5], vec![0.1], vec![0.1]]).unwrap();
    assert!(matches!(covariance::mean_historical_return(&below, 252.0), Err(QuantError::InvalidParameter { .. })));
    assert!(matches!(covariance::mean_historical_return(&below, 12.0), Err(QuantError::InvalidParameter { .. })));
    assert!(matches!(
        risk::max_drawdown(&[0.1, -1.5, 0.2], risk::DrawdownStart::BeforeFirstReturn),
        Err(QuantError::InvalidParameter { .. })
    ));
    // A constant series has σ² = 0: the log-likelihood was NaN.
    let constant = ArimaSpec {
        p: 1,
        d: 0,
        q: 0,
        seasonal_p: 0,
        seasonal_q: 0,
        seasonal_d: 0,
        period: 0,
        trend: ArimaTrend::Constant,
    };
    assert!(matches!(forecast::fit_arima(&[5.0; 30], constant), Err(QuantError::Undefined { .. })));
    // A NaN rate is reported as such, not as "zero volatility" or "no period fell short".
    let r = [0.01, -0.02, 0.03, 0.0];
    assert!(matches!(risk::sharpe_ratio(&r, f64::NAN, 252.0), Err(QuantError::NonFinite { what: "risk_free", .. })));
    assert!(matches!(risk::sortino_ratio(&r, f64::NAN, 252.0), Err(QuantError::NonFinite { what: "required", .. })));
    // More lags and parameters than observations: ARIMA(30,1,0) on 40 points took 396 s.
    let y: Vec<f64> = (0..40).map(|t| (t as f64 * 0.7).sin() + t as f64).collect();
    let big = ArimaSpec {
        p: 30,
        d: 1,
        q: 0,
        seasonal_p: 0,
        seasonal_q: 0,
        seasonal_d: 0,
        period: 0,
        trend: ArimaTrend::None,
    };
    assert!(matches!(forecast::fit_arima(&y, big), Err(QuantError::InsufficientData { .. })));
}

/// Every budgeted computation reports running out of its counted budget (iterations, work) as
/// `BudgetExceeded`, and its wall-clock safety net as `SafetyTimeout`.
#[test]
fn every_fit_and_optimisation_reports_its_budget() {
    use fiscus_quant::QuantError;
    let exceeded = |r: Result<(), QuantError>| {
        matches!(r, Err(QuantError::BudgetExceeded { .. }) | Err(QuantError::SafetyTimeout { .. }))
    };
    let y: Vec<f64> =
        (0..48).map(|t| 10.0 + (t as f64 * 0.52).sin() + 0.1 * t as f64 + ((t * t) as f64).cos()).collect();
    let arima = ArimaSpec {
        p: 1,
        d: 1,
        q: 1,
        seasonal_p: 0,
        seasonal_q: 0,
        seasonal_d: 0,
        period: 0,
        trend: ArimaTrend::Drift,
    };
    let hw = HoltWintersSpec { trend: true, damped: false, season: Some(Season::Additive { period: 4 }) };
    // Three assets: with two, equal risk contribution is inverse volatility, Newton's starting point.
    let cov = Matrix::from_rows(&[vec![0.04, 0.01, 0.0], vec![0.01, 0.09, 0.02], vec![0.0, 0.02, 0.16]]).unwrap();
    let mut grouped = Constraints::long_only(3);
    grouped.groups.push(GroupLimit { members: vec![0], min: None, max: Some(0.7) });
    let counted = |r: Result<(), QuantError>| matches!(r, Err(QuantError::BudgetExceeded { .. }));
    let little_work = Budget::new(Duration::from_secs(60), 5_000).with_work(1_000);
    assert!(counted(forecast::fit_arima_with_budget(&y, arima, little_work).map(|_| ())));
    assert!(counted(forecast::fit_holt_winters_with_budget(&y, hw, little_work).map(|_| ())));
    let timed = |r: Result<(), QuantError>| matches!(r, Err(QuantError::SafetyTimeout { .. }));
    let no_time = Budget::new(Duration::ZERO, 5_000);
    assert!(timed(forecast::fit_arima_with_budget(&y, arima, no_time).map(|_| ())));
    assert!(timed(optimise::equal_risk_contribution_with_budget(&cov, no_time).map(|_| ())));
    for budget in [Budget::new(Duration::from_secs(60), 1), no_time] {
        assert!(exceeded(forecast::fit_arima_with_budget(&y, arima, budget).map(|_| ())));
        assert!(exceeded(forecast::fit_holt_winters_with_budget(&y, hw, budget).map(|_| ())));
        assert!(exceeded(
            optimise::optimise_with_budget(&cov, None, Objective::MinVariance, &grouped, budget).map(|_| ())
        ));
        assert!(exceeded(optimise::equal_risk_contribution_with_budget(&cov, budget).map(|_| ())));
    }
}
