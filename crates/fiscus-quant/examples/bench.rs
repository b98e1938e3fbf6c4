//! Times Fiscus on the inputs `peers/bench.py` wrote and prints each time next to the peer's.
//!
//! Usage: `cargo run --release -p fiscus-quant --example bench -- --peer target/peers_bench.json`
//! (the inputs are read from `peers_bench_inputs/` next to that JSON). `bench/quant.sh` runs both sides.
//! Like the peer, each figure is the best wall-clock time of several runs after one warm-up run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use fiscus_quant::Matrix;
use fiscus_quant::anomaly::{IsolationForest, IsolationForestConfig};
use fiscus_quant::backtest::{self, BacktestConfig};
use fiscus_quant::covariance;
use fiscus_quant::forecast::{self, HoltWintersSpec, Season};
use fiscus_quant::optimise::{self, Constraints, Objective};
use fiscus_quant::simulate::{self, EuropeanOption};
use serde_json::Value;

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = f();
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        out = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, out)
}

/// Reads a CSV with one index column and numeric columns.
fn read_csv(path: &Path) -> Matrix {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows: Vec<Vec<f64>> =
        text.lines().skip(1).map(|l| l.split(',').skip(1).map(|c| c.parse::<f64>().unwrap()).collect()).collect();
    Matrix::from_rows(&rows).unwrap()
}

struct Report {
    peer: Value,
    lines: Vec<String>,
}

impl Report {
    fn row(&mut self, what: &str, fiscus: f64, peer_key: &str, note: &str) {
        let peer = self.peer["timings"][peer_key].as_f64();
        let line = match peer {
            Some(p) => {
                format!("{what:<46} {:>10.3} ms {:>10.3} ms {:>8.1}x  {note}", fiscus * 1e3, p * 1e3, p / fiscus)
            }
            None => {
                let why = self.peer["details"][peer_key]["failed"].as_str().unwrap_or("no peer timing");
                format!("{what:<46} {:>10.3} ms {:>13} {:>9}  peer failed: {why}", fiscus * 1e3, "-", "-")
            }
        };
        println!("{line}");
        self.lines.push(line);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let peer_path = args
        .iter()
        .position(|a| a == "--peer")
        .map(|i| PathBuf::from(&args[i + 1]))
        .unwrap_or_else(|| PathBuf::from("target/peers_bench.json"));
    let peer: Value = serde_json::from_str(&std::fs::read_to_string(&peer_path).expect("peer JSON")).unwrap();
    let inputs = peer_path.parent().unwrap().join("peers_bench_inputs");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut report = Report { peer, lines: Vec::new() };
    println!("{:<46} {:>13} {:>13} {:>9}", "benchmark (best of runs)", "fiscus", "peer", "speed-up");

    // 1. Mean-variance end to end: returns -> mu, S -> solve.
    for n in [20, 100, 500] {
        let r = read_csv(&inputs.join(format!("returns_{n}.csv")));
        for (method, objective) in
            [("min_volatility", Objective::MinVariance), ("max_sharpe", Objective::MaxSharpe { risk_free: 0.0 })]
        {
            let run = || optimise::optimise_from_returns(&r, 252.0, objective, &Constraints::long_only(n)).unwrap();
            let (t, p) = best_of(if n <= 100 { 7 } else { 3 }, run);
            // Outside the timing: the objective each side reached, so a weight gap can be read as "whose
            // answer is better" (lower variance, or higher Sharpe ratio).
            let mu = covariance::mean_historical_return(&r, 252.0).unwrap();
            let s = covariance::sample(&r, 1).unwrap().scaled(252.0);
            let objective_of = |w: &[f64]| {
                let var = s.quad_form(w);
                match objective {
                    Objective::MaxSharpe { .. } => -w.iter().zip(&mu).map(|(a, b)| a * b).sum::<f64>() / var.sqrt(),
                    _ => var,
                }
            };
            let key = format!("pypfopt_{method}_{n}");
            let nz = p.weights.iter().filter(|w| **w > 1e-6).count();
            for (label, peer_key) in
                [("PyPortfolioOpt", key.clone()), ("PyPortfolioOpt+CLARABEL", format!("{key}_clarabel"))]
            {
                let details = &report.peer["details"][&peer_key];
                let note = match details["weights"].as_array() {
                    Some(w) => {
                        let w: Vec<f64> = w.iter().map(|a| a.as_f64().unwrap_or(f64::NAN)).collect();
                        let gap = w.iter().zip(&p.weights).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                        let (ours, theirs) = (objective_of(&p.weights), objective_of(&w));
                        let better = (theirs - ours) / theirs.abs();
                        // A peer answer below a bound can reach a lower objective than the optimum.
                        let short = w.iter().fold(0.0_f64, |m, v| m.max(-v));
                        let caveat = if short > 1e-9 {
                            format!(" (peer weights go {short:.1e} below the 0 bound)")
                        } else {
                            String::new()
                        };
                        format!(
                            "max |w - peer w| = {gap:.1e}; objective {} by {:.1e} rel.{caveat}",
                            if better >= 0.0 { "better" } else { "worse" },
                            better.abs()
                        )
                    }
                    None => match details["n_nonzero_weights_gt_1e-6"].as_u64() {
                        Some(peer_nz) => format!("{nz} weights > 1e-6 (peer {peer_nz})"),
                        None => String::new(),
                    },
                };
                report.row(&format!("{method} {n} assets vs {label}"), t, &peer_key, &note);
            }
        }
    }

    // 2. GBM Monte Carlo, full paths, 100k x 252.
    let option = EuropeanOption {
        spot: 100.0,
        strike: 100.0,
        rate: 0.05,
        dividend_yield: 0.0,
        volatility: 0.2,
        maturity_years: 1.0,
    };
    let (t, mc) = best_of(3, || simulate::european_call(&option, 252, 100_000, 42).unwrap());
    let note =
        format!("{:.1} M path-steps/s, price {:.4} ± {:.4}", 100_000.0 * 252.0 / t / 1e6, mc.price, mc.standard_error);
    report.row("GBM Monte Carlo 100k paths x 252 steps vs numpy", t, "numpy_gbm_mc_100k_x_252", &note);
    // The same paths cut into chunks of 10,000 with a stream each, on every core (the same result for any
    // thread count; not the single-stream result above).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (t, mc) = best_of(3, || simulate::european_call_parallel(&option, 252, 100_000, 42, 0).unwrap());
    let note =
        format!("{:.1} M path-steps/s, price {:.4} ± {:.4}", 100_000.0 * 252.0 / t / 1e6, mc.price, mc.standard_error);
    report.row(&format!("GBM MC 100k x 252, chunked, {threads} threads vs numpy"), t, "numpy_gbm_mc_100k_x_252", &note);

    // 3. 1,000,000-order rebalancing backtest.
    let close = read_csv(&inputs.join("vbt_close_1000x1000.csv"));
    let schedule =
        backtest::periodic_schedule(close.rows(), 1, &vec![1.0 / close.cols() as f64; close.cols()]).unwrap();
    let cfg = BacktestConfig { initial_cash: 1_000_000.0, fee_rate: 0.001 };
    let (t, bt) = best_of(3, || backtest::run(&close, &schedule, cfg).unwrap());
    let peer_final =
        report.peer["details"]["vectorbt_rebalance_1000x1000_grouped"]["final_value"].as_f64().unwrap_or(f64::NAN);
    let note =
        format!("{} orders, final value {:.4} (peer {:.4})", bt.fills.len(), bt.values.last().unwrap(), peer_final);
    report.row("rebalance 1000 assets x 1000 days vs vectorbt", t, "vectorbt_rebalance_1000x1000_grouped", &note);

    // 4. Holt-Winters estimated fits.
    let emp_text = std::fs::read_to_string(repo.join("data/economics/us_employment_monthly_2006_2015.csv")).unwrap();
    let y: Vec<f64> = emp_text.lines().skip(1).map(|l| l.split(',').nth(1).unwrap().parse().unwrap()).collect();
    for (name, key, spec) in [
        (
            "Holt-Winters add/add fit vs statsmodels",
            "statsmodels_holt_winters_add_add_fit",
            HoltWintersSpec { trend: true, damped: false, season: Some(Season::Additive { period: 12 }) },
        ),
        (
            "Holt-Winters damped/mul fit vs statsmodels",
            "statsmodels_holt_winters_damped_mul_fit",
            HoltWintersSpec { trend: true, damped: true, season: Some(Season::Multiplicative { period: 12 }) },
        ),
    ] {
        let (t, fit) = best_of(5, || forecast::fit_holt_winters(&y, spec).unwrap());
        let peer_sse = report.peer["details"][key]["sse"].as_f64().unwrap_or(f64::NAN);
        report.row(name, t, key, &format!("SSE {:.6e} (peer {:.6e})", fit.sse, peer_sse));
    }

    // 5. Isolation forest on 10,000 x 8.
    let x = read_csv(&inputs.join("iforest_10000x8.csv"));
    let cfg = IsolationForestConfig { trees: 100, max_samples: 256, seed: 0 };
    let (t, forest) = best_of(5, || IsolationForest::fit(&x, cfg).unwrap());
    report.row("isolation forest fit 10000x8 vs scikit-learn", t, "sklearn_isolation_forest_fit_10000x8", "");
    let (t, _) = best_of(5, || forest.scores(&x).unwrap());
    report.row("isolation forest score 10000x8 vs scikit-learn", t, "sklearn_isolation_forest_score_10000x8", "");
    let cpus = report.peer["machine"]["cpu_count"].as_u64().unwrap_or(0);
    if let Some(blas) = report.peer["machine"]["blas"].as_array() {
        for b in blas {
            println!(
                "peer thread pool: {} {} kernel {} ({} threads), {}",
                b["internal_api"].as_str().unwrap_or("?"),
                b["version"].as_str().unwrap_or("-"),
                b["architecture"].as_str().unwrap_or("-"),
                b["num_threads"],
                b["library"].as_str().unwrap_or("?")
            );
        }
    }
    println!(
        "\n(speed-up = peer time / fiscus time; fiscus runs single-threaded except where a row says threads; peer machine \
         reports {cpus} CPUs; {} rows)",
        report.lines.len()
    );
}
