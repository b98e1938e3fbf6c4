//! Ordinary least squares against statsmodels 0.15 `sm.OLS(y, X).fit()` from `ols_factors.json`: Fama-French
//! three-factor regressions of monthly excess returns (three stocks with an intercept, one without), a small
//! embedded case, an implicit constant (dummies summing to one, no intercept column), and the rank-deficient
//! designs statsmodels accepts and we refuse.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fiscus_quant::QuantError;
use fiscus_quant::regression::{self, Ols};
use serde_json::Value;
use std::collections::BTreeMap;

const REL: f64 = 1e-10;

struct Case {
    name: String,
    y: Vec<f64>,
    x: Vec<Vec<f64>>,
    intercept: bool,
    statsmodels: Value,
}

fn cases() -> Vec<Case> {
    let fx = fixture("ols_factors.json");
    let out: Vec<Case> = fx["cases"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, c)| Case {
            name: name.clone(),
            y: floats(&c["y"]),
            x: c["x"].as_array().unwrap().iter().map(floats).collect(),
            intercept: c["intercept"].as_bool().unwrap(),
            statsmodels: c["statsmodels"].clone(),
        })
        .collect();
    assert_eq!(out.len(), 6, "three stocks with an intercept, one without, two hand cases");
    out
}

/// Worst relative difference per statistic.
type Worst = BTreeMap<&'static str, f64>;

fn close(label: &str, key: &'static str, got: f64, want: f64, worst: &mut Worst) {
    let d = rel_diff(got, want);
    assert!(d <= REL, "{label} {key}: got {got}, want {want}, rel {d:e}");
    let w = worst.entry(key).or_insert(0.0);
    *w = w.max(d);
}

fn close_all(label: &str, key: &'static str, got: &[f64], want: &Value, worst: &mut Worst) {
    let want = floats(want);
    assert_eq!(got.len(), want.len(), "{label} {key}");
    for (g, w) in got.iter().zip(&want) {
        close(label, key, *g, *w, worst);
    }
}

#[test]
fn ols_matches_statsmodels_within_1e_10() {
    let mut worst = Worst::new();
    for c in cases() {
        let s = &c.statsmodels;
        let fit: Ols = regression::ols(&c.y, &c.x, c.intercept).unwrap();
        let l = &c.name;
        close_all(l, "coefficients", &fit.coefficients, &s["params"], &mut worst);
        close_all(l, "std_errors", &fit.std_errors, &s["bse"], &mut worst);
        close_all(l, "t_values", &fit.t_values, &s["tvalues"], &mut worst);
        close(l, "r_squared", fit.r_squared, s["rsquared"].as_f64().unwrap(), &mut worst);
        close(l, "adj_r_squared", fit.adj_r_squared, s["rsquared_adj"].as_f64().unwrap(), &mut worst);
        close(l, "residual_std_error", fit.residual_std_error, s["residual_std_error"].as_f64().unwrap(), &mut worst);
        assert_eq!(fit.observations as f64, s["nobs"].as_f64().unwrap(), "{l}");
        assert_eq!(fit.degrees_of_freedom as f64, s["df_resid"].as_f64().unwrap(), "{l}");
        assert_eq!(u64::from(fit.has_constant), s["k_constant"].as_u64().unwrap(), "{l}: statsmodels' k_constant");
        // statsmodels' own two solvers (pinv, QR) agree to ~1e-14; we stay within the same distance of its QR.
        let qr = &s["method_qr"];
        close_all(l, "coefficients vs statsmodels qr", &fit.coefficients, &qr["params"], &mut worst);
        close_all(l, "std_errors vs statsmodels qr", &fit.std_errors, &qr["bse"], &mut worst);
    }
    for (k, d) in &worst {
        eprintln!("worst relative difference, {k}: {d:e} (asserted {REL:e})");
    }
}

#[test]
fn the_conventions_are_statsmodels_without_an_intercept() {
    for c in cases() {
        let s = &c.statsmodels;
        let fit = regression::ols(&c.y, &c.x, c.intercept).unwrap();
        let ssr = s["ssr"].as_f64().unwrap();
        let (n, dof) = (fit.observations as f64, fit.degrees_of_freedom as f64);
        // R² centred with a constant, uncentred (y'y) without; adjusted with (n - k_constant)/df_resid.
        let (tss, k_constant) = if fit.has_constant {
            (s["centered_tss"].as_f64().unwrap(), 1.0)
        } else {
            (s["uncentered_tss"].as_f64().unwrap(), 0.0)
        };
        let r2 = 1.0 - ssr / tss;
        assert!(rel_diff(fit.r_squared, r2) < 1e-12, "{}", c.name);
        assert!(rel_diff(fit.adj_r_squared, 1.0 - (n - k_constant) / dof * (1.0 - r2)) < 1e-12, "{}", c.name);
        assert!(rel_diff(fit.residual_std_error, (ssr / dof).sqrt()) < 1e-12, "{}", c.name);
    }
    let names: Vec<String> = cases().into_iter().filter(|c| !c.intercept).map(|c| c.name).collect();
    assert_eq!(names, ["MSFT_ff3_no_intercept", "hand_implicit_constant"]);
}

#[test]
fn the_embedded_excess_returns_follow_the_stated_construction() {
    let fx = fixture("ols_factors.json");
    let inputs = &fx["inputs"];
    let rf = floats(&inputs["rf"]);
    assert_eq!(rf.len(), 119);
    assert_eq!(strings(&inputs["months"]).first().map(String::as_str), Some("200901"));
    assert_eq!(strings(&inputs["months"]).last().map(String::as_str), Some("201811"));
    let factors: Vec<Vec<f64>> = ["Mkt-RF", "SMB", "HML"].iter().map(|f| floats(&inputs["factors"][f])).collect();
    for c in cases().into_iter().filter(|c| c.name.contains("_ff3")) {
        let ticker = c.name.split('_').next().unwrap();
        let r = floats(&inputs["stock_returns"][ticker]);
        let excess: Vec<f64> = r.iter().zip(&rf).map(|(r, f)| r - f).collect();
        assert_eq!(c.y, excess, "{}: y = r - RF/100", c.name);
        assert_eq!(c.x, factors, "{}", c.name);
    }
}

#[test]
fn the_rank_deficient_designs_statsmodels_accepts_are_refused() {
    let fx = fixture("ols_factors.json");
    for (name, probe) in fx["rank_deficient_probe"].as_object().unwrap() {
        let columns: Vec<Vec<f64>> =
            probe["x_columns_with_constant_first"].as_array().unwrap().iter().map(floats).collect();
        assert!(columns[0].iter().all(|v| *v == 1.0));
        assert!(probe["statsmodels_rank"].as_u64().unwrap() < columns.len() as u64, "{name}");
        let e = regression::ols(&floats(&probe["y"]), &columns[1..], true).unwrap_err();
        assert!(matches!(e, QuantError::InvalidParameter { name: "x", .. }), "{name}: {e:?}");
    }
}
