//! Benchmark-relative statistics against empyrical-reloaded 0.7.1 (excess Sharpe, up/down capture, alpha,
//! beta), numpy (tracking error and annualised information ratio, which empyrical 0.7.1 does not have) and
//! vectorbt 1.2 (information ratio, up/down capture), from `benchmark_stats.json`.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fiscus_quant::benchmark::{self, RelativeSummary};
use fiscus_quant::{QuantError, returns};
use serde_json::Value;
use std::collections::BTreeMap;

const REL: f64 = 1e-10;

/// One series of a case with its benchmark, the periods per year and the expected numbers.
struct Pair {
    label: String,
    returns: Vec<f64>,
    benchmark: Vec<f64>,
    periods_per_year: f64,
    expected: Value,
}

fn window(spec: &Value) -> (Vec<String>, fiscus_quant::Matrix) {
    let cols = strings(&spec["columns"]);
    let rows = &spec["price_rows"];
    let p = prices(
        spec["file"].as_str().unwrap(),
        &cols,
        rows["first_date"].as_str().unwrap(),
        rows["last_date"].as_str().unwrap(),
    );
    assert_eq!(p.rows() as u64, rows["count"].as_u64().unwrap());
    let r = returns::simple_returns_matrix(&p).unwrap();
    for (j, c) in cols.iter().enumerate() {
        let s: f64 = r.column(j).iter().sum();
        assert!((s - spec["checks"]["sum_of_returns"][c].as_f64().unwrap()).abs() < 1e-12, "{c}");
    }
    (cols, r)
}

fn pairs() -> Vec<Pair> {
    let fx = fixture("benchmark_stats.json");
    let mut out = Vec::new();
    for (case, c) in fx["cases"].as_object().unwrap() {
        let ppy = c["periods_per_year"].as_f64().unwrap();
        let inputs = &c["inputs"];
        let mut series: Vec<(String, Vec<f64>)> = Vec::new();
        let bench = if inputs.get("file").is_some() {
            let (cols, r) = window(inputs);
            let (_, b) = window(&inputs["benchmark"]);
            series.extend(cols.iter().enumerate().map(|(j, c)| (c.clone(), r.column(j))));
            b.column(0)
        } else {
            for col in strings(&inputs["columns"]) {
                series.push((col.clone(), floats(&inputs["returns"][&col])));
            }
            floats(&inputs["returns"]["SP500"])
        };
        if !series.iter().any(|(n, _)| n == "SP500") {
            series.push(("SP500".into(), bench.clone()));
        }
        for (name, r) in series {
            out.push(Pair {
                label: format!("{case}.{name}"),
                returns: r,
                benchmark: bench.clone(),
                periods_per_year: ppy,
                expected: c["results"][&name].clone(),
            });
        }
    }
    assert_eq!(out.len(), 10, "three cases of 4, 3 and 3 series");
    out
}

/// Relative difference; absolute where the peer's value is exactly 0 (alpha of the benchmark itself).
fn diff(got: f64, want: f64) -> f64 {
    if want == 0.0 { (got - want).abs() } else { rel_diff(got, want) }
}

/// Worst difference per peer and statistic.
type Worst = BTreeMap<String, f64>;

fn close(label: &str, got: f64, want: f64, worst: &mut Worst, key: &str) {
    let d = diff(got, want);
    assert!(d <= REL, "{label}: got {got}, want {want}, rel {d:e}");
    let w = worst.entry(key.to_string()).or_insert(0.0);
    *w = w.max(d);
}

#[test]
fn excess_sharpe_and_captures_match_empyrical_and_tracking_error_matches_numpy_within_1e_10() {
    let mut worst = Worst::new();
    for p in pairs() {
        let (r, b, ppy, l) = (&p.returns, &p.benchmark, p.periods_per_year, &p.label);
        let e = &p.expected["empyrical"];
        let n = &p.expected["numpy"];
        let v = &p.expected["vectorbt"];
        assert_eq!(v["ann_factor"].as_f64().unwrap(), ppy);
        let up = benchmark::up_capture(r, b, ppy).unwrap();
        let down = benchmark::down_capture(r, b, ppy).unwrap();
        close(&format!("{l} up_capture"), up, e["up_capture"].as_f64().unwrap(), &mut worst, "empyrical up_capture");
        close(
            &format!("{l} down_capture"),
            down,
            e["down_capture"].as_f64().unwrap(),
            &mut worst,
            "empyrical down_capture",
        );
        let ud = benchmark::up_down_capture(r, b, ppy).unwrap();
        close(
            &format!("{l} up_down_capture"),
            ud,
            e["up_down_capture"].as_f64().unwrap(),
            &mut worst,
            "empyrical up_down_capture",
        );
        close(&format!("{l} vbt up_capture"), up, v["up_capture"].as_f64().unwrap(), &mut worst, "vectorbt up_capture");
        close(
            &format!("{l} vbt down_capture"),
            down,
            v["down_capture"].as_f64().unwrap(),
            &mut worst,
            "vectorbt down_capture",
        );
        let te = benchmark::tracking_error(r, b, ppy).unwrap();
        close(
            &format!("{l} tracking_error"),
            te,
            n["tracking_error"].as_f64().unwrap(),
            &mut worst,
            "numpy tracking_error",
        );

        let s = benchmark::relative_summary(r, b, 0.0, ppy).unwrap();
        let want_summary = RelativeSummary {
            beta: s.beta,
            alpha: s.alpha,
            tracking_error: te,
            excess_sharpe: benchmark::excess_sharpe(r, b).ok(),
            information_ratio: benchmark::information_ratio(r, b, ppy).ok(),
            up_capture: Some(up),
            down_capture: Some(down),
            up_down_capture: Some(ud),
        };
        assert_eq!(s, want_summary, "{l}: the summary is the single functions' numbers");
        close(&format!("{l} beta"), s.beta.unwrap(), e["beta"].as_f64().unwrap(), &mut worst, "empyrical beta");
        close(&format!("{l} alpha"), s.alpha.unwrap(), e["alpha"].as_f64().unwrap(), &mut worst, "empyrical alpha");

        if e["excess_sharpe"].is_null() {
            // The benchmark against itself: every active return is 0; empyrical, numpy and vectorbt give NaN.
            assert!(n["information_ratio"].is_null() && v["information_ratio"].is_null(), "{l}");
            assert_eq!(te, 0.0, "{l}");
            let es = benchmark::excess_sharpe(r, b).unwrap_err();
            assert!(matches!(es, QuantError::Undefined { .. }), "{l}");
            let ir = benchmark::information_ratio(r, b, ppy).unwrap_err();
            assert!(matches!(ir, QuantError::Undefined { .. }), "{l}");
            assert_eq!((s.excess_sharpe, s.information_ratio), (None, None));
            continue;
        }
        let es = benchmark::excess_sharpe(r, b).unwrap();
        close(
            &format!("{l} excess_sharpe"),
            es,
            e["excess_sharpe"].as_f64().unwrap(),
            &mut worst,
            "empyrical excess_sharpe",
        );
        close(
            &format!("{l} vbt information_ratio"),
            es,
            v["information_ratio"].as_f64().unwrap(),
            &mut worst,
            "vectorbt information_ratio",
        );
        let ir = benchmark::information_ratio(r, b, ppy).unwrap();
        close(
            &format!("{l} information_ratio"),
            ir,
            n["information_ratio"].as_f64().unwrap(),
            &mut worst,
            "numpy information_ratio",
        );
    }
    for (k, d) in &worst {
        eprintln!("worst relative difference, {k}: {d:e} (asserted {REL:e})");
    }
}

#[test]
fn the_subsets_are_strictly_up_and_strictly_down_as_the_fixture_counts_them() {
    for p in pairs() {
        let n = &p.expected["numpy"];
        let count = |f: fn(f64) -> bool| p.benchmark.iter().filter(|b| f(**b)).count() as u64;
        assert_eq!(count(|b| b > 0.0), n["benchmark_up_periods"].as_u64().unwrap(), "{}", p.label);
        assert_eq!(count(|b| b < 0.0), n["benchmark_down_periods"].as_u64().unwrap(), "{}", p.label);
        assert_eq!(count(|b| b == 0.0), n["benchmark_zero_periods"].as_u64().unwrap(), "{}", p.label);
        assert_eq!(p.returns.len() as u64, n["periods"].as_u64().unwrap());
    }
}

#[test]
fn zero_benchmark_periods_are_in_neither_market_and_a_missing_market_is_refused() {
    let fx = fixture("benchmark_stats.json");
    let probe = &fx["zero_benchmark_probe"];
    let r = floats(&probe["returns"]);
    let b = floats(&probe["benchmark"]);
    let e = &probe["empyrical"];
    let mut worst = Worst::new();
    close(
        "probe up",
        benchmark::up_capture(&r, &b, 252.0).unwrap(),
        e["up_capture"].as_f64().unwrap(),
        &mut worst,
        "probe",
    );
    let down = benchmark::down_capture(&r, &b, 252.0).unwrap();
    close("probe down", down, e["down_capture"].as_f64().unwrap(), &mut worst, "probe");
    let ud = benchmark::up_down_capture(&r, &b, 252.0).unwrap();
    close("probe up/down", ud, e["up_down_capture"].as_f64().unwrap(), &mut worst, "probe");
    let es = benchmark::excess_sharpe(&r, &b).unwrap();
    close("probe excess sharpe", es, e["excess_sharpe"].as_f64().unwrap(), &mut worst, "probe");

    let never_down = floats(&probe["never_down_benchmark"]);
    let e = &probe["never_down_empyrical"];
    let up = benchmark::up_capture(&r, &never_down, 252.0).unwrap();
    close("never-down up", up, e["up_capture"].as_f64().unwrap(), &mut worst, "probe");
    assert!(e["down_capture"].is_null() && e["up_down_capture"].is_null(), "empyrical gives NaN");
    assert!(matches!(
        benchmark::down_capture(&r, &never_down, 252.0),
        Err(QuantError::Undefined { what: "down capture", .. })
    ));
    assert!(matches!(benchmark::up_down_capture(&r, &never_down, 252.0), Err(QuantError::Undefined { .. })));
    let s = benchmark::relative_summary(&r, &never_down, 0.0, 252.0).unwrap();
    assert_eq!((s.up_capture, s.down_capture, s.up_down_capture), (Some(up), None, None));
}
