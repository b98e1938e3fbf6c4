//! Property tests: public functions fed arbitrary (often nonsensical) input return a value or a typed error,
//! and never panic. Any panic fails the property.
#![allow(clippy::unwrap_used)]

use fiscus_quant::anomaly::{self, IsolationForest, IsolationForestConfig};
use fiscus_quant::backtest::{self, BacktestConfig, Rebalance};
use fiscus_quant::calendar::Date;
use fiscus_quant::forecast::{self, ArimaSpec, ArimaTrend, HoltWintersSpec, InitialState, Season, Smoothing};
use fiscus_quant::optimise::{self, Constraints, GroupLimit, Objective};
use fiscus_quant::simulate::{self, BootstrapSpec, EuropeanOption, ShockScenario};
use fiscus_quant::tax_lots::{self, Lot, ReliefMethod, Sale};
use fiscus_quant::{Matrix, covariance, returns, risk, value_at_risk};
use proptest::prelude::*;

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

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn return_and_risk_functions_never_panic(x in vec_f64(40), b in vec_f64(40), ppy in any_f64(), cut in any_f64()) {
        let _ = returns::simple_returns(&x);
        let _ = returns::log_returns(&x);
        let _ = risk::summary(&x, Some(&b), 0.0, ppy);
        let _ = risk::summary(&x, None, ppy, 252.0);
        let _ = risk::max_drawdown(&x, risk::DrawdownStart::AfterFirstReturn);
        let _ = value_at_risk::historical(&x, cut);
        let _ = value_at_risk::parametric(&x, cut);
        let _ = anomaly::robust_z_scores(&x);
        let _ = anomaly::trailing_robust_z_scores(&x, 5);
    }

    #[test]
    fn covariance_and_optimisers_never_panic(m in matrix(12, 5), mu in vec_f64(6), lo in any_f64(), hi in any_f64(), t in any_f64()) {
        let _ = covariance::sample(&m, 1);
        let _ = covariance::ledoit_wolf(&m);
        let _ = covariance::mean_historical_return(&m, 252.0);
        let _ = returns::simple_returns_matrix(&m);
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
                let _ = optimise::optimise(&s, Some(&mu), objective, &Constraints::long_only(n));
                let _ = optimise::optimise(&s, Some(&mu), objective, &c);
            }
            let _ = optimise::equal_risk_contribution(&s);
            let _ = optimise::risk_budgeting(&s, &mu);
        }
        let _ = optimise::optimise(&m, Some(&mu), Objective::MinVariance, &Constraints::long_only(m.rows()));
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
                let _ = optimise::optimise(&cov, Some(&mu), objective, &Constraints::bounded(n, lo, 1.0));
            }
            let _ = optimise::equal_risk_contribution(&cov);
        }
        let _ = value_at_risk::historical(&m.column(0), 0.05);
        let _ = IsolationForest::fit(&m, IsolationForestConfig { trees: 5, max_samples: 256, seed: 1 }).and_then(|f| f.scores(&m));
        let prices: Vec<f64> = m.column(0).iter().map(|v| 1.0 + v.abs()).collect();
        let pm = Matrix::from_row_major(prices.len(), 1, prices.clone()).unwrap();
        let _ = backtest::run(&pm, &[Rebalance { row: 0, weights: vec![Some(t)] }], BacktestConfig { initial_cash: 100.0, fee_rate: 0.01 });
        let _ = forecast::fit_arima(&prices, ArimaSpec { p: 1, d: 1, q: 1, seasonal_p: 0, seasonal_q: 0, seasonal_d: 0, period: 0, trend: ArimaTrend::Drift });
        let _ = forecast::fit_holt_winters(&prices, HoltWintersSpec { trend: true, damped: true, season: Some(Season::Multiplicative { period: 2 }) });
    }

    #[test]
    fn simulation_and_backtest_never_panic(m in matrix(8, 3), x in vec_f64(4), seed in any::<u64>(), steps in 0usize..5, w in vec_f64(4)) {
        let o = EuropeanOption { spot: x.first().copied().unwrap_or(1.0), strike: 1.0, rate: 0.0, dividend_yield: 0.0, volatility: x.get(1).copied().unwrap_or(0.2), maturity_years: 1.0 };
        let _ = simulate::european_call(&o, steps, 3, seed);
        let _ = simulate::bootstrap_paths(&m, BootstrapSpec { steps, paths: 2, block_length: steps, seed });
        let _ = simulate::apply_shock(&x, &w, &ShockScenario { name: "s".into(), moves: x.clone() });
        let schedule = vec![Rebalance { row: steps, weights: w.iter().map(|v| Some(*v)).collect() }];
        let _ = backtest::run(&m, &schedule, BacktestConfig { initial_cash: x.first().copied().unwrap_or(1.0), fee_rate: 0.001 });
        if let Ok(s) = backtest::periodic_schedule(m.rows(), steps, &w) {
            let _ = backtest::run(&m, &s, BacktestConfig { initial_cash: 100.0, fee_rate: 0.0 });
        }
        let _ = IsolationForest::fit(&m, IsolationForestConfig { trees: 3, max_samples: steps + 1, seed });
    }

    #[test]
    fn forecasting_never_panics(y in vec_f64(40), a in any_f64(), p in 0usize..3, q in 0usize..2) {
        let spec = HoltWintersSpec { trend: true, damped: true, season: Some(Season::Multiplicative { period: 4 }) };
        let init = InitialState { level: a, trend: 0.0, seasons: vec![1.0; 4] };
        let _ = forecast::holt_winters::run(&y, spec, Smoothing { alpha: a, beta: 0.1, gamma: 0.1, phi: 0.9 }, &init);
        let _ = forecast::fit_holt_winters(&y, HoltWintersSpec { trend: true, damped: false, season: Some(Season::Additive { period: 4 }) });
        let _ = forecast::fit_arima(&y, ArimaSpec { p, d: 0, q, seasonal_p: 0, seasonal_q: 0, seasonal_d: q, period: 3, trend: ArimaTrend::None });
    }

    #[test]
    fn tax_lot_relief_never_panics(qs in prop::collection::vec((any::<i64>(), any::<i64>(), -1000i32..1000), 0..5), sale_q in any::<i64>(), proceeds in any::<i64>()) {
        let base = Date::from_ymd(2024, 1, 1).unwrap();
        let lots: Vec<Lot> = qs.iter().enumerate().map(|(i, (q, c, d))| Lot { id: i as u64, acquired: base.add_days(*d), quantity: *q, cost: *c }).collect();
        let sale = Sale { date: base, quantity: sale_q, proceeds };
        for m in [ReliefMethod::Fifo, ReliefMethod::Lifo, ReliefMethod::Hifo, ReliefMethod::Specific(vec![(0, sale_q)])] {
            let _ = tax_lots::relieve(&lots, &sale, &m);
        }
        let _ = tax_lots::harvest_candidates(&lots, proceeds, base, 1, &[base]);
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
