//! Times ARIMA/SARIMA fits on the cases the robustness probes named, plus the statsmodels fixture fits, so a
//! change to the likelihood or the optimiser can be measured against `peers/arima_timing.py` (statsmodels on
//! the same series).
//!
//! Usage: `cargo run --release -p fiscus-quant --example arima_timing [-- --peer target/arima_timing.json]
//! [--runs N] [--only NAME]`.
//!
//! Series: `wti_monthly` is the monthly mean of the daily WTI spot price 1986-01 .. 2018-12 (396 months,
//! `data/economics/wti_crude_daily.csv`), the oil price series the repository ships (there is no Brent
//! series in it; holidays, marked ".", are left out of a month's mean); `wti_monthly_first40` is its first 40 months; `lcpi` and `infl` are the inputs of the
//! statsmodels ARIMA fixture. Each figure is the best wall-clock time of `--runs` runs after one warm-up run
//! (`--runs 0`: the warm-up run alone).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use fiscus_quant::forecast::{self, ArimaSpec, ArimaTrend};
use serde_json::Value;

fn wti_monthly(repo: &std::path::Path) -> Vec<f64> {
    let text = std::fs::read_to_string(repo.join("data/economics/wti_crude_daily.csv")).unwrap();
    let mut months: BTreeMap<(u32, u32), (f64, usize)> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let (date, value) = line.split_once(',').unwrap();
        let mut parts = date.split('/');
        let month: u32 = parts.next().unwrap().parse().unwrap();
        let _day = parts.next();
        let year: u32 = parts.next().unwrap().parse().unwrap();
        // FRED marks market holidays with "."; they are left out of the month's mean, never filled.
        if year > 2018 || value == "." {
            continue;
        }
        let e = months.entry((year, month)).or_insert((0.0, 0));
        e.0 += value.parse::<f64>().unwrap();
        e.1 += 1;
    }
    months.values().map(|(s, n)| s / *n as f64).collect()
}

fn spec(order: [usize; 3], seasonal: [usize; 4], trend: ArimaTrend) -> ArimaSpec {
    ArimaSpec {
        p: order[0],
        d: order[1],
        q: order[2],
        seasonal_p: seasonal[0],
        seasonal_d: seasonal[1],
        seasonal_q: seasonal[2],
        period: seasonal[3],
        trend,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).map(|i| args[i + 1].clone());
    let runs: usize = arg("--runs").map(|v| v.parse().unwrap()).unwrap_or(5);
    let only = arg("--only");
    let peer: Option<Value> =
        arg("--peer").map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap());

    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let repo = manifest.join("../..");
    let fx: Value =
        serde_json::from_str(&std::fs::read_to_string(manifest.join("tests/fixtures/arima.json")).unwrap()).unwrap();
    let series = |name: &str| -> Vec<f64> {
        match name {
            "wti_monthly" => wti_monthly(&repo),
            "wti_monthly_first40" => wti_monthly(&repo)[..40].to_vec(),
            other => fx["inputs"][other].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect(),
        }
    };
    use ArimaTrend::{Constant as C, Drift as T, None as N};
    let cases = [
        ("sarima200x210_12_wti", "wti_monthly", spec([2, 0, 0], [2, 1, 0, 12], N)),
        ("sarima100x110_12_wti", "wti_monthly", spec([1, 0, 0], [1, 1, 0, 12], N)),
        ("sarima011x011_12_wti", "wti_monthly", spec([0, 1, 1], [0, 1, 1, 12], N)),
        ("arima30_1_0_wti_first40", "wti_monthly_first40", spec([30, 1, 0], [0, 0, 0, 0], N)),
        ("arima30_1_0_wti", "wti_monthly", spec([30, 1, 0], [0, 0, 0, 0], N)),
        ("ar1_const_on_inflation", "infl", spec([1, 0, 0], [0, 0, 0, 0], C)),
        ("arima111_drift_on_log_cpi", "lcpi", spec([1, 1, 1], [0, 0, 0, 0], T)),
        ("arima210_drift_on_log_cpi", "lcpi", spec([2, 1, 0], [0, 0, 0, 0], T)),
        ("sarima110x100_12_drift_on_log_cpi", "lcpi", spec([1, 1, 0], [1, 0, 0, 12], T)),
        ("arma11_const_on_inflation", "infl", spec([1, 0, 1], [0, 0, 0, 0], C)),
        ("arima111_no_trend_on_inflation", "infl", spec([1, 1, 1], [0, 0, 0, 0], N)),
        // The order issue 34 found failing on the clock under load; its work is what the default budget is
        // sized against.
        ("arima12_1_12_drift_wti", "wti_monthly", spec([12, 1, 12], [0, 0, 0, 0], T)),
    ];
    println!("{:<36} {:>5} {:>12} {:>12} {:>8}  result", "case", "n", "fiscus ms", "peer ms", "ratio");
    for (name, series_name, spec) in cases {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let y = series(series_name);
        // `--runs 0` reports the warm-up run itself (for cases too slow to repeat).
        let t = Instant::now();
        let mut outcome = forecast::fit_arima(&y, spec);
        let mut best = if runs == 0 { t.elapsed().as_secs_f64() } else { f64::INFINITY };
        for _ in 0..runs {
            let t = Instant::now();
            outcome = forecast::fit_arima(&y, spec);
            best = best.min(t.elapsed().as_secs_f64());
        }
        let result = match &outcome {
            Ok(f) => format!("llf {:.6} sigma2 {:.6e} work {:.3e}", f.log_likelihood, f.sigma2, f.work as f64),
            Err(e) => format!("error: {e}"),
        };
        let peer_case = peer.as_ref().map(|p| &p["cases"][name]);
        let peer_ms = peer_case.and_then(|c| c["seconds"].as_f64()).map(|s| s * 1e3);
        let peer_llf = peer_case.and_then(|c| c["llf"].as_f64());
        let (peer_col, ratio) = match peer_ms {
            Some(p) => (format!("{p:.3}"), format!("{:.2}x", p / (best * 1e3))),
            None => ("-".into(), "-".into()),
        };
        let peer_note = peer_llf.map(|l| format!(" (peer llf {l:.6})")).unwrap_or_default();
        println!("{name:<36} {:>5} {:>12.3} {peer_col:>12} {ratio:>8}  {result}{peer_note}", y.len(), best * 1e3);
    }
    println!("\n(ratio = peer time / fiscus time; best of {runs} runs after a warm-up; single-threaded)");
}
