//! Mean-variance weights against cvxpy + CLARABEL (tight, 1e-5) and PyPortfolioOpt (loose, 1e-4), and risk
//! parity against the Newton reference and riskfolio-lib (`optimisation_20.json`).
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fiscus_quant::covariance;
use fiscus_quant::optimise::{self, Constraints, GroupLimit, Objective, Rebalance};
use fiscus_quant::{Matrix, QuantError};

struct Inputs {
    assets: Vec<String>,
    mu: Vec<f64>,
    s: Matrix,
    fx: serde_json::Value,
}

fn inputs() -> Inputs {
    let fx = fixture("optimisation_20.json");
    let (assets, r) = fixture_returns(&fx);
    // End to end from returns, exactly as PyPortfolioOpt's pipeline.
    let mu = covariance::mean_historical_return(&r, 252.0).unwrap();
    let s = covariance::sample(&r, 1).unwrap().scaled(252.0);
    assert!(max_abs_diff(&mu, &by_keys(&fx["mu"], &assets)) < 1e-14);
    assert!(max_abs_diff(s.as_slice(), matrix(&fx["S"]["matrix"]).as_slice()) < 1e-15);
    Inputs { assets, mu, s, fx }
}

fn constraints_for(inp: &Inputs, case: &serde_json::Value) -> Constraints {
    let n = inp.assets.len();
    let b = floats(&case["weight_bounds"]);
    let mut c = Constraints::bounded(n, b[0], b[1]);
    if case["sector_constraints"].as_bool().unwrap() {
        let conv = &inp.fx["conventions"];
        let mapper = conv["sector_mapper"].as_object().unwrap();
        let mut sectors: Vec<String> = mapper.values().map(|v| v.as_str().unwrap().to_string()).collect();
        sectors.sort();
        sectors.dedup();
        for s in sectors {
            let members = (0..n).filter(|&i| mapper[&inp.assets[i]].as_str().unwrap() == s).collect();
            let min = conv["sector_lower"].get(&s).and_then(|v| v.as_f64());
            let max = conv["sector_upper"].get(&s).and_then(|v| v.as_f64());
            if min.is_some() || max.is_some() {
                c.groups.push(GroupLimit { members, min, max });
            }
        }
    }
    if let Some(tc) = case["transaction_cost"].as_object() {
        c.rebalance = Some(Rebalance {
            current: by_keys(&tc["w_prev"], &inp.assets),
            cost_per_unit_turnover: tc["k"].as_f64().unwrap(),
            max_turnover: None,
        });
    }
    c
}

fn objective_for(case: &serde_json::Value) -> Objective {
    let p = &case["parameters"];
    match case["method"].as_str().unwrap() {
        "min_volatility" => Objective::MinVariance,
        "max_sharpe" => Objective::MaxSharpe { risk_free: p["risk_free_rate"].as_f64().unwrap() },
        "efficient_risk" => Objective::EfficientRisk { target_volatility: p["target_volatility"].as_f64().unwrap() },
        "efficient_return" => Objective::EfficientReturn { target_return: p["target_return"].as_f64().unwrap() },
        other => panic!("unknown method {other}"),
    }
}

#[test]
fn every_mean_variance_case_matches_cvxpy_clarabel_within_1e_5_and_pypfopt_within_1e_4() {
    let inp = inputs();
    for case in inp.fx["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let c = constraints_for(&inp, case);
        let p = optimise::optimise(&inp.s, Some(&inp.mu), objective_for(case), &c).unwrap();
        let tight = by_keys(&case["cvxpy_clarabel"]["weights"], &inp.assets);
        let loose = by_keys(&case["pypfopt"]["weights"], &inp.assets);
        let (dt, dl) = (max_abs_diff(&p.weights, &tight), max_abs_diff(&p.weights, &loose));
        eprintln!("{name}: max |w - cvxpy_clarabel| = {dt:.2e}, max |w - pypfopt| = {dl:.2e}");
        assert!(dt < 1e-5, "{name}: {dt:e}");
        assert!(dl < 1e-4, "{name}: {dl:e}");
        let perf = &case["cvxpy_clarabel"]["performance"];
        assert!((p.volatility - perf["volatility"].as_f64().unwrap()).abs() < 1e-6, "{name}");
        assert!((p.weights.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }
}

#[test]
fn the_end_to_end_pipeline_from_returns_gives_the_same_weights() {
    let fx = fixture("optimisation_20.json");
    let (assets, r) = fixture_returns(&fx);
    for case in
        fx["cases"].as_array().unwrap().iter().filter(|c| c["name"] == "min_volatility" || c["name"] == "max_sharpe")
    {
        let objective = objective_for(case);
        let p = optimise::optimise_from_returns(&r, 252.0, objective, &Constraints::long_only(assets.len())).unwrap();
        let tight = by_keys(&case["cvxpy_clarabel"]["weights"], &assets);
        assert!(max_abs_diff(&p.weights, &tight) < 1e-5);
    }
}

#[test]
fn risk_parity_meets_its_budgets_within_1e_6_and_matches_the_newton_reference() {
    let inp = inputs();
    let rp = &inp.fx["risk_parity"];
    let sigma = matrix(&rp["Sigma_daily"]["matrix"]);
    for case in rp["cases"].as_array().unwrap() {
        let budgets = by_keys(&case["budgets"], &inp.assets);
        let p = optimise::risk_budgeting(&sigma, &budgets).unwrap();
        let share_err = max_abs_diff(&p.risk_contributions, &budgets);
        let reference = by_keys(&case["reference_newton"]["weights"], &inp.assets);
        let riskfolio = by_keys(&case["riskfolio"]["weights"], &inp.assets);
        let (dr, df) = (max_abs_diff(&p.weights, &reference), max_abs_diff(&p.weights, &riskfolio));
        eprintln!("{}: share error {share_err:.2e}, vs reference {dr:.2e}, vs riskfolio {df:.2e}", case["name"]);
        assert!(share_err < 1e-12);
        assert!(dr < 1e-10);
        assert!(df < 1e-5);
    }
}

#[test]
fn infeasible_constraints_are_reported_as_infeasible_not_as_weights() {
    let inp = inputs();
    let n = inp.assets.len();
    let mut c = Constraints::long_only(n);
    c.groups.push(GroupLimit { members: (0..n).collect(), min: None, max: Some(0.5) });
    let err = optimise::optimise(&inp.s, Some(&inp.mu), Objective::MinVariance, &c).unwrap_err();
    assert!(matches!(err, QuantError::Infeasible { .. }), "{err:?}");
    let err = optimise::optimise(
        &inp.s,
        Some(&inp.mu),
        Objective::EfficientReturn { target_return: 10.0 },
        &Constraints::long_only(n),
    )
    .unwrap_err();
    assert!(matches!(err, QuantError::Infeasible { .. }), "{err:?}");
    let negative: Vec<f64> = inp.mu.iter().map(|m| -m.abs() - 0.01).collect();
    let err = optimise::optimise(
        &inp.s,
        Some(&negative),
        Objective::MaxSharpe { risk_free: 0.0 },
        &Constraints::long_only(n),
    )
    .unwrap_err();
    assert!(matches!(err, QuantError::Infeasible { .. }), "{err:?}");
}

#[test]
fn a_turnover_limit_holds_and_binds() {
    let inp = inputs();
    let n = inp.assets.len();
    let current = vec![1.0 / n as f64; n];
    let mut c = Constraints::long_only(n);
    c.rebalance = Some(Rebalance { current: current.clone(), cost_per_unit_turnover: 0.0, max_turnover: Some(0.2) });
    for objective in [Objective::MinVariance, Objective::MaxSharpe { risk_free: 0.0 }] {
        let p = optimise::optimise(&inp.s, Some(&inp.mu), objective, &c).unwrap();
        let turnover: f64 = p.weights.iter().zip(&current).map(|(a, b)| (a - b).abs()).sum();
        assert!(turnover <= 0.2 + 1e-7 && turnover > 0.19, "{objective:?}: {turnover}");
    }
}

/// From a few hundred assets `optimise_from_returns` computes Σ row by row for the active-set route; its
/// answers must be those of the whole matrix to the bit (the same weights, volatility, Sharpe ratio).
#[test]
fn a_large_universe_from_returns_equals_the_whole_matrix_bit_for_bit() {
    let (days, n) = (420, 260);
    let mut state = 11_u64;
    let mut uniform = || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    // One-factor returns (as peers/bench.py's synthetic universes), with a uniform stand-in for normals.
    let beta: Vec<f64> = (0..n).map(|_| 0.5 + uniform()).collect();
    let idio: Vec<f64> = (0..n).map(|_| 0.01 + 0.02 * uniform()).collect();
    let alpha: Vec<f64> = (0..n).map(|_| 0.0002 + 0.0006 * (uniform() - 0.5)).collect();
    let mut rows = Vec::with_capacity(days);
    for _ in 0..days {
        let f = 0.0004 + 0.02 * (uniform() - 0.5);
        rows.push((0..n).map(|i| alpha[i] + beta[i] * f + idio[i] * 3.4 * (uniform() - 0.5)).collect::<Vec<f64>>());
    }
    let r = Matrix::from_rows(&rows).unwrap();
    let mu = covariance::mean_historical_return(&r, 252.0).unwrap();
    let mut s = covariance::sample(&r, 1).unwrap();
    s.as_mut_slice().iter_mut().for_each(|v| *v *= 252.0);
    let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for objective in [Objective::MinVariance, Objective::MaxSharpe { risk_free: 0.0 }] {
        for c in [Constraints::long_only(n), Constraints::bounded(n, 0.0, 0.02)] {
            let lazy = optimise::optimise_from_returns(&r, 252.0, objective, &c);
            let whole = optimise::optimise(&s, Some(&mu), objective, &c);
            match (lazy, whole) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(bits(&a.weights), bits(&b.weights), "{objective:?}");
                    assert_eq!(a.volatility.to_bits(), b.volatility.to_bits(), "{objective:?}");
                    assert_eq!(a.expected_return.map(f64::to_bits), b.expected_return.map(f64::to_bits));
                    assert_eq!(a.sharpe_ratio.map(f64::to_bits), b.sharpe_ratio.map(f64::to_bits));
                    let held = a.weights.iter().filter(|w| **w > 0.0).count();
                    eprintln!("{objective:?}, {} bound: {held} of {n} assets held", c.upper[0]);
                }
                (a, b) => panic!("{objective:?}: {a:?} vs {b:?}"),
            }
        }
    }
}
