//! Monte Carlo against QuantLib's analytic Black-Scholes price (`monte_carlo.json`), and reproducibility.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fiscus_quant::Matrix;
use fiscus_quant::simulate::{self, BootstrapSpec, EuropeanOption, GbmSpec};

#[test]
fn monte_carlo_call_lies_within_three_standard_errors_of_quantlib() {
    let fx = fixture("monte_carlo.json");
    let h = &fx["headline_call"];
    let analytic = h["npv"].as_f64().unwrap();
    for (steps, paths, seed) in [(1, 200_000, 42_u64), (252, 20_000, 20240102)] {
        let o = EuropeanOption {
            spot: 100.0,
            strike: 100.0,
            rate: 0.05,
            dividend_yield: 0.0,
            volatility: 0.2,
            maturity_years: 1.0,
        };
        let mc = simulate::european_call(&o, steps, paths, seed).unwrap();
        let z = (mc.price - analytic) / mc.standard_error;
        eprintln!(
            "steps {steps} paths {paths}: {:.5} ± {:.5} vs {analytic:.6} (z = {z:.3})",
            mc.price, mc.standard_error
        );
        assert!(z.abs() < 3.0);
    }
    // Also across the grid of strikes and maturities (calls only).
    for g in fx["grid"].as_array().unwrap().iter().filter(|g| g["type"] == "call") {
        let f = |k: &str| g[k].as_f64().unwrap();
        let o = EuropeanOption {
            spot: f("S"),
            strike: f("K"),
            rate: f("r"),
            dividend_yield: f("q"),
            volatility: f("sigma"),
            maturity_years: f("T"),
        };
        let mc = simulate::european_call(&o, 1, 100_000, 7).unwrap();
        let z = (mc.price - g["npv"].as_f64().unwrap()) / mc.standard_error;
        assert!(z.abs() < 3.5, "{g}: z = {z}");
    }
}

#[test]
fn a_seed_reproduces_a_gbm_run_bit_for_bit_and_another_seed_does_not() {
    let cov = Matrix::from_rows(&[vec![0.04, 0.01], vec![0.01, 0.09]]).unwrap();
    let spec = |seed| GbmSpec {
        initial: &[100.0, 50.0],
        drift: &[0.05, 0.03],
        covariance: &cov,
        horizon_years: 1.0,
        steps: 50,
        paths: 500,
        seed,
    };
    let a = simulate::gbm_terminal_prices(&spec(1)).unwrap();
    let b = simulate::gbm_terminal_prices(&spec(1)).unwrap();
    let c = simulate::gbm_terminal_prices(&spec(2)).unwrap();
    let bits = |m: &Matrix| m.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a), bits(&b));
    assert_ne!(bits(&a), bits(&c));
}

#[test]
fn the_parallel_call_lies_within_three_standard_errors_of_quantlib_whatever_the_thread_count() {
    let fx = fixture("monte_carlo.json");
    let analytic = fx["headline_call"]["npv"].as_f64().unwrap();
    let o = EuropeanOption {
        spot: 100.0,
        strike: 100.0,
        rate: 0.05,
        dividend_yield: 0.0,
        volatility: 0.2,
        maturity_years: 1.0,
    };
    for (steps, paths, seed) in [(1, 200_000, 42_u64), (252, 20_000, 20240102)] {
        let mc = simulate::european_call_parallel(&o, steps, paths, seed, 2).unwrap();
        let z = (mc.price - analytic) / mc.standard_error;
        eprintln!("parallel, steps {steps} paths {paths}: {:.5} ± {:.5} (z = {z:.3})", mc.price, mc.standard_error);
        assert!(z.abs() < 3.0);
        for threads in [0, 1, 3] {
            let again = simulate::european_call_parallel(&o, steps, paths, seed, threads).unwrap();
            assert_eq!(again.price.to_bits(), mc.price.to_bits(), "{threads} threads");
            assert_eq!(again.standard_error.to_bits(), mc.standard_error.to_bits(), "{threads} threads");
        }
    }
    // One chunk (at most 10,000 paths) is the sequential function's run.
    let single = simulate::european_call(&o, 3, 10_000, 5).unwrap();
    assert_eq!(simulate::european_call_parallel(&o, 3, 10_000, 5, 2).unwrap(), single);
}

#[test]
fn parallel_paths_are_the_same_for_any_thread_count_and_each_chunk_is_a_sequential_run() {
    let cov = Matrix::from_rows(&[vec![0.04, 0.01], vec![0.01, 0.09]]).unwrap();
    let spec = |paths, seed| GbmSpec {
        initial: &[100.0, 50.0],
        drift: &[0.05, 0.03],
        covariance: &cov,
        horizon_years: 1.0,
        steps: 3,
        paths,
        seed,
    };
    let size = simulate::chunk_paths(3, 2);
    assert_eq!(size, 10_000);
    let paths = 2 * size + 1_234;
    let bits = |m: &Matrix| m.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let one = simulate::gbm_terminal_prices_parallel(&spec(paths, 11), 1).unwrap();
    assert_eq!((one.rows(), one.cols()), (paths, 2));
    for threads in [0, 2, 3, 8] {
        let many = simulate::gbm_terminal_prices_parallel(&spec(paths, 11), threads).unwrap();
        assert_eq!(bits(&many), bits(&one), "{threads} threads");
    }
    for k in 0..3 {
        let first = k * size;
        let n = size.min(paths - first);
        let chunk = simulate::gbm_terminal_prices(&spec(n, simulate::chunk_seed(11, k))).unwrap();
        assert_eq!(
            bits(&chunk),
            one.as_slice()[2 * first..2 * (first + n)].iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
    assert_eq!(simulate::chunk_seed(11, 0), 11);
    assert_ne!(simulate::chunk_seed(11, 1), simulate::chunk_seed(11, 2));
    // The fold sees every path once, with its index over the whole run, chunk by chunk.
    let seen =
        simulate::fold_gbm_paths(&spec(paths, 11), 3, |_| Vec::new(), |v: &mut Vec<usize>, i, _| v.push(i)).unwrap();
    assert_eq!(seen.concat(), (0..paths).collect::<Vec<_>>());
    // A path that overflows fails the run, as in the sequential function.
    let wild = GbmSpec { drift: &[1e300, 0.0], ..spec(paths, 11) };
    assert!(matches!(
        simulate::gbm_terminal_prices_parallel(&wild, 2),
        Err(fiscus_quant::QuantError::Undefined { .. })
    ));
}

#[test]
fn correlated_paths_reproduce_the_input_correlation() {
    let cov = Matrix::from_rows(&[vec![0.04, 0.018], vec![0.018, 0.09]]).unwrap();
    let spec = GbmSpec {
        initial: &[1.0, 1.0],
        drift: &[0.0, 0.0],
        covariance: &cov,
        horizon_years: 1.0,
        steps: 1,
        paths: 100_000,
        seed: 3,
    };
    let t = simulate::gbm_terminal_prices(&spec).unwrap();
    let l0: Vec<f64> = t.column(0).iter().map(|v| v.ln()).collect();
    let l1: Vec<f64> = t.column(1).iter().map(|v| v.ln()).collect();
    let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (m0, m1) = (m(&l0), m(&l1));
    let cov01 = l0.iter().zip(&l1).map(|(a, b)| (a - m0) * (b - m1)).sum::<f64>() / (l0.len() - 1) as f64;
    assert!((cov01 - 0.018).abs() < 0.001, "{cov01}");
}

#[test]
fn block_bootstrap_copies_runs_of_consecutive_history_rows() {
    let hist = Matrix::from_rows(&(0..50).map(|i| vec![i as f64, -(i as f64)]).collect::<Vec<_>>()).unwrap();
    let paths =
        simulate::bootstrap_paths(&hist, BootstrapSpec { steps: 20, paths: 3, block_length: 5, seed: 9 }).unwrap();
    for p in &paths {
        for block in 0..4 {
            let first = p[(block * 5, 0)];
            for k in 1..5 {
                assert_eq!(p[(block * 5 + k, 0)], (first + k as f64) % 50.0);
                assert_eq!(p[(block * 5 + k, 1)], -p[(block * 5 + k, 0)]);
            }
        }
    }
    let again =
        simulate::bootstrap_paths(&hist, BootstrapSpec { steps: 20, paths: 3, block_length: 5, seed: 9 }).unwrap();
    assert_eq!(paths, again);
}
