//! Return and risk statistics against empyrical-reloaded and vectorbt (`risk_stats.json`), covariance and
//! Ledoit-Wolf against pandas / scikit-learn (`covariance.json`), robust z-scores against scipy.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fiscus_quant::risk::{self, DrawdownStart};
use fiscus_quant::{covariance, returns, value_at_risk};

const REL: f64 = 1e-9;

fn close(name: &str, got: f64, want: f64) {
    let d = rel_diff(got, want);
    assert!(d <= REL || (got - want).abs() < 1e-15, "{name}: got {got}, want {want}, rel {d:e}");
}

type Named = Vec<(String, Vec<f64>)>;

fn series() -> (Named, Vec<f64>, serde_json::Value) {
    let fx = fixture("risk_stats.json");
    let (cols, r) = fixture_returns(&fx);
    let b = &fx["inputs"]["benchmark"];
    let bp = prices(
        b["file"].as_str().unwrap(),
        &strings(&b["columns"]),
        b["price_rows"]["first_date"].as_str().unwrap(),
        b["price_rows"]["last_date"].as_str().unwrap(),
    );
    let bench = returns::simple_returns(&bp.column(0)).unwrap();
    let mut out: Vec<(String, Vec<f64>)> = cols.iter().enumerate().map(|(j, c)| (c.clone(), r.column(j))).collect();
    out.push(("SP500".into(), bench.clone()));
    (out, bench, fx)
}

#[test]
fn every_statistic_matches_empyrical_within_1e_9_relative() {
    let (series, bench, fx) = series();
    let mut worst = 0.0_f64;
    for (name, r) in &series {
        let e = &fx["results"][name]["empyrical"];
        let s = risk::summary(r, Some(&bench), 0.0, risk::DAILY).unwrap();
        let var = value_at_risk::historical(r, 0.05).unwrap();
        let pairs = [
            ("annual_return", s.annual_return),
            ("annual_volatility", s.annual_volatility),
            ("sharpe_ratio", s.sharpe_ratio.unwrap()),
            ("sortino_ratio", s.sortino_ratio.unwrap()),
            ("downside_risk", s.downside_risk),
            ("max_drawdown", s.max_drawdown),
            ("calmar_ratio", s.calmar_ratio.unwrap()),
            ("cum_returns_final", s.total_return),
            ("value_at_risk", var.var),
            ("conditional_value_at_risk", var.cvar),
            ("beta", s.beta.unwrap()),
            ("alpha", s.alpha.unwrap()),
        ];
        for (k, got) in pairs {
            let want = e[k].as_f64().unwrap();
            close(&format!("{name}.{k}"), got, want);
            if want != 0.0 {
                worst = worst.max(rel_diff(got, want));
            }
        }
    }
    eprintln!("worst relative difference vs empyrical: {worst:e}");
}

#[test]
fn vectorbt_with_252_day_years_and_its_drawdown_convention_match() {
    let (series, bench, fx) = series();
    for (name, r) in &series {
        let v = &fx["results"][name]["vectorbt_year_freq_252_days"];
        let var = value_at_risk::historical(r, 0.05).unwrap();
        let dd = risk::max_drawdown(r, DrawdownStart::AfterFirstReturn).unwrap();
        let pairs = [
            ("annualized", risk::annual_return(r, 252.0).unwrap()),
            ("annualized_volatility", risk::annual_volatility(r, 252.0).unwrap()),
            ("sharpe_ratio", risk::sharpe_ratio(r, 0.0, 252.0).unwrap()),
            ("sortino_ratio", risk::sortino_ratio(r, 0.0, 252.0).unwrap()),
            ("downside_risk", risk::downside_risk(r, 0.0, 252.0).unwrap()),
            ("max_drawdown", dd),
            ("calmar_ratio", risk::annual_return(r, 252.0).unwrap() / dd.abs()),
            ("total", returns::cumulative_growth(r).unwrap() - 1.0),
            ("value_at_risk", var.var),
            ("cond_value_at_risk", var.cvar),
            ("beta", risk::beta(r, &bench, 0.0).unwrap()),
            ("alpha", risk::alpha(r, &bench, 0.0, 252.0).unwrap()),
        ];
        for (k, got) in pairs {
            close(&format!("vectorbt {name}.{k}"), got, v[k].as_f64().unwrap());
        }
        let d = &fx["results"][name]["vectorbt_default_year_freq_365_days"];
        close("annualized365", risk::annual_return(r, 365.0).unwrap(), d["annualized"].as_f64().unwrap());
        close("vol365", risk::annual_volatility(r, 365.0).unwrap(), d["annualized_volatility"].as_f64().unwrap());
        close("sharpe365", risk::sharpe_ratio(r, 0.0, 365.0).unwrap(), d["sharpe_ratio"].as_f64().unwrap());
        close("sortino365", risk::sortino_ratio(r, 0.0, 365.0).unwrap(), d["sortino_ratio"].as_f64().unwrap());
        close("alpha365", risk::alpha(r, &bench, 0.0, 365.0).unwrap(), d["alpha"].as_f64().unwrap());
    }
    let probe = &fx["drawdown_convention_probe"];
    let r = floats(&probe["returns"]);
    close(
        "emp dd",
        risk::max_drawdown(&r, DrawdownStart::BeforeFirstReturn).unwrap(),
        probe["empyrical_max_drawdown"].as_f64().unwrap(),
    );
    close(
        "vbt dd",
        risk::max_drawdown(&r, DrawdownStart::AfterFirstReturn).unwrap(),
        probe["vectorbt_max_drawdown"].as_f64().unwrap(),
    );
}

#[test]
fn log_returns_and_gaussian_var_match_numpy_and_scipy() {
    let fx = fixture("risk_stats.json");
    let cols = strings(&fx["inputs"]["columns"]);
    let p = prices(fx["inputs"]["file"].as_str().unwrap(), &cols, "2018-01-02", "2022-12-28");
    for (j, c) in cols.iter().enumerate() {
        let l = returns::log_returns(&p.column(j)).unwrap();
        let want = &fx["results"][c]["log_returns"];
        close("log sum", l.iter().sum(), want["sum"].as_f64().unwrap());
        let r = returns::simple_returns(&p.column(j)).unwrap();
        for (level, cutoff) in [("0.95", 0.05), ("0.99", 0.01)] {
            let g = value_at_risk::parametric(&r, cutoff).unwrap();
            let w = &fx["results"][c]["parametric_gaussian"][level];
            close("param var", g.var, w["var_return"].as_f64().unwrap());
            close("param cvar", g.cvar, w["cvar_return"].as_f64().unwrap());
        }
    }
}

#[test]
fn sample_covariance_and_ledoit_wolf_match_pandas_and_scikit_learn() {
    let fx = fixture("covariance.json");
    let (_, r) = fixture_returns(&fx);
    let s1 = covariance::sample(&r, 1).unwrap();
    let s0 = covariance::sample(&r, 0).unwrap();
    let want1 = matrix(&fx["sample_cov_daily_ddof1"]["matrix"]);
    let want0 = matrix(&fx["empirical_cov_daily_ddof0"]["matrix"]);
    let rel = |a: &fiscus_quant::Matrix, b: &fiscus_quant::Matrix| {
        let scale = b.as_slice().iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        max_abs_diff(a.as_slice(), b.as_slice()) / scale
    };
    assert!(rel(&s1, &want1) < 1e-12, "{}", rel(&s1, &want1));
    assert!(rel(&s0, &want0) < 1e-12);
    let lw = covariance::ledoit_wolf(&r).unwrap();
    let want = &fx["sklearn_ledoit_wolf"];
    close("shrinkage", lw.shrinkage, want["shrinkage"].as_f64().unwrap());
    close("mu", lw.target_mean_variance, want["target_mu"].as_f64().unwrap());
    let d = rel(&lw.matrix, &matrix(&want["matrix"]));
    assert!(d < 1e-12, "ledoit-wolf matrix rel diff {d:e}");
    for (key, got) in [
        ("pypfopt_ledoit_wolf_single_factor", covariance::ledoit_wolf_single_factor(&r).unwrap()),
        ("pypfopt_ledoit_wolf_constant_correlation", covariance::ledoit_wolf_constant_correlation(&r).unwrap()),
    ] {
        let want = &fx[key];
        let ds = rel_diff(got.shrinkage, want["shrinkage"].as_f64().unwrap());
        let dm = rel(&got.matrix.scaled(252.0), &matrix(&want["matrix"]));
        eprintln!("{key}: shrinkage rel diff {ds:.1e}, matrix rel diff {dm:.1e}");
        assert!(ds < 1e-9 && dm < 1e-12, "{key}");
    }
}
