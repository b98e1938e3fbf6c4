//! Monthly target-weight rebalancing against vectorbt 1.2 (`backtest.json`), with and without fees.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fiscus_quant::backtest::{self, BacktestConfig, Rebalance};

#[test]
fn rebalancing_returns_match_vectorbt_within_1e_6_per_period_with_and_without_fees() {
    let fx = fixture("backtest.json");
    let inputs = &fx["inputs"];
    let cols = strings(&inputs["columns"]);
    let close = prices(inputs["file"].as_str().unwrap(), &cols, "2019-01-02", "2022-12-28");
    assert_eq!(close.rows(), 1006);
    let schedule: Vec<Rebalance> = inputs["rebalance_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| Rebalance {
            row: r["row"].as_u64().unwrap() as usize,
            weights: floats(&r["weights"]).into_iter().map(Some).collect(),
        })
        .collect();
    for key in ["with_fees", "no_fees"] {
        let want = &fx[key];
        let cfg = BacktestConfig {
            initial_cash: inputs["init_cash"].as_f64().unwrap(),
            fee_rate: want["fees"].as_f64().unwrap(),
        };
        let got = backtest::run(&close, &schedule, cfg).unwrap();
        let d = max_abs_diff(&got.returns, &floats(&want["returns"]));
        let v = floats(&want["value"]);
        let dv = got.values.iter().zip(&v).map(|(a, b)| rel_diff(*a, *b)).fold(0.0, f64::max);
        eprintln!("{key}: max |return diff| = {d:.2e}, max relative value diff = {dv:.2e}");
        assert!(d < 1e-6);
        assert!(dv < 1e-9);
        assert_eq!(got.fills.len() as u64, want["n_orders"].as_u64().unwrap());
        assert!(rel_diff(got.total_fees, want["total_fees"].as_f64().unwrap()) < 1e-9 || cfg.fee_rate == 0.0);
        let first = &want["orders"][0];
        assert_eq!(cols[got.fills[0].asset], first["asset"].as_str().unwrap());
        assert!((got.fills[0].size - first["size"].as_f64().unwrap()).abs() < 1e-9);
    }
}

#[test]
fn a_backtest_refuses_an_out_of_order_schedule() {
    let close = fiscus_quant::Matrix::from_rows(&[vec![1.0], vec![1.1], vec![1.2]]).unwrap();
    let s = vec![Rebalance { row: 2, weights: vec![Some(1.0)] }, Rebalance { row: 1, weights: vec![Some(1.0)] }];
    assert!(backtest::run(&close, &s, BacktestConfig { initial_cash: 1.0, fee_rate: 0.0 }).is_err());
}
