#![allow(clippy::unwrap_used)]
use std::time::Instant;
use fiscus_quant::simulate::{self, EuropeanOption};
fn main() {
    let o = EuropeanOption { spot: 100.0, strike: 100.0, rate: 0.05, dividend_yield: 0.0, volatility: 0.2, maturity_years: 1.0 };
    for _ in 0..4 {
        let t = Instant::now();
        let p = simulate::european_call(&o, 252, 100_000, 42).unwrap();
        println!("{:.1} ms {:?}", t.elapsed().as_secs_f64() * 1e3, p);
    }
}
