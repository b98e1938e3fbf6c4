//! Holt-Winters against statsmodels 0.15 (`holt_winters.json`).
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fiscus_quant::forecast::{self, HoltWintersSpec, InitialState, Season, Smoothing};

fn spec_of(name: &str) -> HoltWintersSpec {
    if name.starts_with("additive") {
        HoltWintersSpec { trend: true, damped: false, season: Some(Season::Additive { period: 12 }) }
    } else {
        HoltWintersSpec { trend: true, damped: true, season: Some(Season::Multiplicative { period: 12 }) }
    }
}

#[test]
fn holt_winters_with_fixed_parameters_matches_statsmodels_within_1e_8() {
    let fx = fixture("holt_winters.json");
    let y = floats(&fx["inputs"]["y"]);
    for case in fx["known_fits"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let s = &case["smoothing"];
        let p = Smoothing {
            alpha: s["smoothing_level"].as_f64().unwrap(),
            beta: s["smoothing_trend"].as_f64().unwrap(),
            gamma: s["smoothing_seasonal"].as_f64().unwrap(),
            phi: s["damping_trend"].as_f64().unwrap_or(1.0),
        };
        let init = InitialState {
            level: case["initial_level"].as_f64().unwrap(),
            trend: case["initial_trend"].as_f64().unwrap(),
            seasons: floats(&case["initial_seasonal"]),
        };
        let fit = forecast::holt_winters::run(&y, spec_of(name), p, &init).unwrap();
        let rel = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| rel_diff(*x, *y)).fold(0.0, f64::max);
        let fitted = rel(&fit.fitted, &floats(&case["fittedvalues"]));
        let sse = rel_diff(fit.sse, case["sse"].as_f64().unwrap());
        let fc = fit.forecast(24);
        let textbook = rel(&fc, &floats(&case["forecast_textbook"]));
        let sm = floats(&case["forecast"]);
        let skip = floats(&case["horizons_where_statsmodels_differs_from_textbook"]);
        let sm_diff =
            (0..24).filter(|h| !skip.contains(&((h + 1) as f64))).map(|h| rel_diff(fc[h], sm[h])).fold(0.0, f64::max);
        let states = rel(&fit.seasons, &floats(&case["final_seasons"]))
            .max(rel_diff(fit.level, case["final_level"].as_f64().unwrap()));
        eprintln!(
            "{name}: fitted {fitted:.1e}, sse {sse:.1e}, textbook forecast {textbook:.1e}, statsmodels forecast (h not 12, 24) {sm_diff:.1e}, states {states:.1e}, aic {:.1e}",
            rel_diff(fit.aic(), case["aic"].as_f64().unwrap())
        );
        // statsmodels' own forecast, reproduced at every horizon (including 12 and 24) by the compatible rule.
        let exact_sm = rel(&fit.forecast_statsmodels(24), &sm);
        eprintln!("{name}: statsmodels-compatible forecast, all horizons {exact_sm:.1e}");
        for d in [fitted, sse, textbook, sm_diff, exact_sm] {
            assert!(d < 1e-8, "{name}: {d:e}");
        }
        assert!(rel_diff(fit.aic(), case["aic"].as_f64().unwrap()) < 1e-10);
    }
}

#[test]
fn estimated_holt_winters_reaches_an_sse_within_1_percent_of_statsmodels() {
    let fx = fixture("holt_winters.json");
    let y = floats(&fx["inputs"]["y"]);
    for case in fx["estimated_fits"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let fit = forecast::fit_holt_winters(&y, spec_of(name)).unwrap();
        let want = case["sse"].as_f64().unwrap();
        let fc = fit.forecast(24);
        let fdiff = fc.iter().zip(floats(&case["forecast_textbook"])).map(|(a, b)| rel_diff(*a, b)).fold(0.0, f64::max);
        eprintln!(
            "{name}: SSE {:.6} vs statsmodels {want:.6} (ratio {:.5}), {:?}, forecast max rel diff {fdiff:.1e}",
            fit.sse,
            fit.sse / want,
            fit.smoothing
        );
        assert!(fit.sse <= want * 1.01);
        let pi = fit.prediction_intervals(24, 0.95, 2000, 1).unwrap();
        assert!(pi.iter().zip(&fc).all(|((lo, hi), f)| lo < f && f < hi));
    }
}

#[test]
fn arima_coefficients_match_statsmodels_within_1e_3() {
    use fiscus_quant::forecast::{ArimaSpec, ArimaTrend};
    let fx = fixture("arima.json");
    for case in fx["fits"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let y = floats(&fx["inputs"][case["series"].as_str().unwrap()]);
        let o = floats(&case["order"]);
        let so = floats(&case["seasonal_order"]);
        let spec = ArimaSpec {
            p: o[0] as usize,
            d: o[1] as usize,
            q: o[2] as usize,
            seasonal_p: so[0] as usize,
            seasonal_q: so[2] as usize,
            seasonal_d: so[1] as usize,
            period: so[3] as usize,
            trend: match case["trend"].as_str().unwrap() {
                "c" => ArimaTrend::Constant,
                "t" => ArimaTrend::Drift,
                _ => ArimaTrend::None,
            },
        };
        let fit = forecast::fit_arima(&y, spec).unwrap();
        let p = &case["params"];
        let mut pairs = vec![];
        if let Some(c) = p.get("const").or(p.get("x1")) {
            pairs.push(("trend", fit.trend_coefficient, c.as_f64().unwrap()));
        }
        for (i, v) in fit.ar.iter().enumerate() {
            pairs.push(("ar", *v, p[format!("ar.L{}", i + 1)].as_f64().unwrap()));
        }
        for (i, v) in fit.ma.iter().enumerate() {
            pairs.push(("ma", *v, p[format!("ma.L{}", i + 1)].as_f64().unwrap()));
        }
        for (i, v) in fit.seasonal_ar.iter().enumerate() {
            pairs.push(("sar", *v, p[format!("ar.S.L{}", 12 * (i + 1))].as_f64().unwrap()));
        }
        pairs.push(("sigma2", fit.sigma2, p["sigma2"].as_f64().unwrap()));
        let worst = pairs.iter().map(|(_, a, b)| (a - b).abs()).fold(0.0, f64::max);
        let llf = case["loglik"].as_f64().unwrap();
        let fc = fit.forecast(12, 0.95).unwrap();
        let fdiff = max_abs_diff(&fc.mean, &floats(&case["forecast"]["mean"]));
        let sediff = fc
            .standard_error
            .iter()
            .zip(floats(&case["forecast"]["se"]))
            .map(|(a, b)| rel_diff(*a, b))
            .fold(0.0, f64::max);
        eprintln!(
            "{name}: max |param diff| {worst:.1e}, llf {:.6} vs {llf:.6}, aic diff {:.1e}, forecast mean max diff {fdiff:.1e}, se max rel diff {sediff:.1e}",
            fit.log_likelihood,
            fit.aic() - case["aic"].as_f64().unwrap()
        );
        assert!(worst < 1e-3, "{name}: {pairs:?}");
        assert!((fit.log_likelihood - llf).abs() < 1e-3 * llf.abs().max(1.0));
        // The information criteria count what statsmodels counts: k, and the observations the differencing
        // leaves (`nobs - loglikelihood_burn`), so each one's penalty equals statsmodels' to rounding.
        let burn = case["loglikelihood_burn"].as_u64().unwrap() as usize;
        assert_eq!(fit.nobs_effective(), case["nobs"].as_u64().unwrap() as usize - burn, "{name}");
        let penalty = |ic: f64, llf: f64| ic + 2.0 * llf;
        let bic = penalty(case["bic"].as_f64().unwrap(), llf);
        assert!((penalty(fit.bic(), fit.log_likelihood) - bic).abs() < 1e-9, "{name}: BIC penalty");
        let correction = case["aicc"].as_f64().unwrap() - case["aic"].as_f64().unwrap();
        assert!((fit.aicc() - fit.aic() - correction).abs() < 1e-9, "{name}: AICc correction");
    }
}

#[test]
fn seasonal_differencing_recovers_a_simulated_seasonal_model_and_forecasts_its_random_walk() {
    use fiscus_quant::forecast::{ArimaSpec, ArimaTrend};
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    // y_t = y_{t-12} + u_t, u_t = 0.6 u_{t-1} + e_t: SARIMA(1,0,0)(0,1,0)_12.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut y: Vec<f64> = (0..12).map(|i| 100.0 + 5.0 * (i as f64).sin()).collect();
    let mut u = 0.0;
    for t in 12..720 {
        let e: f64 = StandardNormal.sample(&mut rng);
        u = 0.6 * u + e;
        y.push(y[t - 12] + u);
    }
    let spec = ArimaSpec {
        p: 1,
        d: 0,
        q: 0,
        seasonal_p: 0,
        seasonal_q: 0,
        seasonal_d: 1,
        period: 12,
        trend: ArimaTrend::None,
    };
    let fit = forecast::fit_arima(&y, spec).unwrap();
    assert!((fit.ar[0] - 0.6).abs() < 0.08, "{:?}", fit.ar);
    assert!((fit.sigma2 - 1.0).abs() < 0.15, "{}", fit.sigma2);
    let n = y.len();
    let fc = fit.forecast(24, 0.95).unwrap();
    // y_{n+24} - y_{n+12} = u_{n+24}, whose forecast 0.6^24·u_n has all but vanished.
    assert!((fc.mean[23] - fc.mean[11]).abs() < 1e-3);
    // Pure seasonal random walk: forecasts are exactly the same month one year earlier.
    let walk = ArimaSpec {
        p: 0,
        d: 0,
        q: 0,
        seasonal_p: 0,
        seasonal_q: 0,
        seasonal_d: 1,
        period: 12,
        trend: ArimaTrend::None,
    };
    let fit = forecast::fit_arima(&y, walk).unwrap();
    let fc = fit.forecast(24, 0.95).unwrap();
    for h in 0..24 {
        assert!((fc.mean[h] - y[n - 12 + h % 12]).abs() < 1e-9);
    }
    // Its forecast variance grows by σ² once per completed year.
    assert!((fc.standard_error[12].powi(2) - 2.0 * fit.sigma2).abs() < 1e-12);
    assert!((fc.standard_error[11].powi(2) - fit.sigma2).abs() < 1e-12);
}

#[test]
fn holt_without_season_extrapolates_a_straight_line_and_simple_smoothing_a_level() {
    let line: Vec<f64> = (0..40).map(|t| 10.0 + 2.5 * t as f64).collect();
    let spec = HoltWintersSpec { trend: true, damped: false, season: None };
    let fit = forecast::fit_holt_winters(&line, spec).unwrap();
    assert!(fit.sse < 1e-12, "{}", fit.sse);
    let fc = fit.forecast(3);
    for (h, f) in fc.iter().enumerate() {
        assert!((f - (10.0 + 2.5 * (40 + h) as f64)).abs() < 1e-6, "{f}");
    }
    let level = vec![7.0; 30];
    let ses =
        forecast::fit_holt_winters(&level, HoltWintersSpec { trend: false, damped: false, season: None }).unwrap();
    assert!(ses.sse < 1e-20 && (ses.forecast(1)[0] - 7.0).abs() < 1e-12);
}
