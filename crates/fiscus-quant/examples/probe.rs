#![allow(clippy::unwrap_used)]
use fiscus_quant::{
    Matrix, covariance,
    matrix::cholesky,
    optimise::{self, Constraints, Objective},
};
use std::time::Instant;
fn main() {
    let text = std::fs::read_to_string("/work/quant-wt/target/peers_bench_inputs/returns_500.csv")
        .unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').skip(1).map(|c| c.parse().unwrap()).collect())
        .collect();
    let r = Matrix::from_rows(&rows).unwrap();
    for _ in 0..4 {
        let t0 = Instant::now();
        let mu = covariance::mean_historical_return(&r, 252.0).unwrap();
        let t1 = Instant::now();
        let s = covariance::sample(&r, 1).unwrap().scaled(252.0);
        let t2 = Instant::now();
        let _ = cholesky(&s, "s").unwrap();
        let t3 = Instant::now();
        let p = optimise::optimise(
            &s,
            Some(&mu),
            Objective::MinVariance,
            &Constraints::long_only(500),
        )
        .unwrap();
        let t4 = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        println!(
            "mu {:.1} cov {:.1} chol {:.1} optimise(total incl. chol) {:.1} ms {}",
            ms(t0, t1),
            ms(t1, t2),
            ms(t2, t3),
            ms(t3, t4),
            p.weights.len()
        );
    }
}
