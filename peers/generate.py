#!/usr/bin/env python3
"""Generate the peer fixtures that fiscus-quant's Rust tests compare against.

Usage (from anywhere):  python3 peers/generate.py [--only NAME[,NAME...]]

Creates peers/.venv when missing, installs the pins of peers/requirements.txt into it, re-executes itself
inside it (single-threaded BLAS so that the output is byte-identical from run to run) and writes pretty,
deterministic JSON to crates/fiscus-quant/tests/fixtures/. Every number in a fixture comes from running the
pinned libraries on the CSV files in data/ (paths relative to the repository root) or on seeded inputs that
are embedded in the fixture itself. Floats are written with Python's shortest round-trip repr, so they parse
back to the exact same f64. NaN/inf never occur in the output (JSON has none); missing values are null.

Conventions follow /work/shared/design/quant-peers.md; see peers/README.md for what each fixture holds.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep peers/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _bootstrap  # noqa: E402

_bootstrap.ensure_venv(__file__, single_thread=True)

# ----------------------------------------------------------------------------------------------------------
# From here on we run inside peers/.venv.
# ----------------------------------------------------------------------------------------------------------
import argparse  # noqa: E402
import importlib.metadata as md  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = _bootstrap.REPO_ROOT
FIXTURES = os.path.join(ROOT, "crates", "fiscus-quant", "tests", "fixtures")

LARGE_CAPS = "data/market/us_large_caps_20_daily_adjclose.csv"
SP500 = "data/market/sp500_index_daily.csv"
EMPLOYMENT = "data/economics/us_employment_monthly_2006_2015.csv"
CORE_CPI = "data/economics/us_core_cpi_monthly.csv"

# The common daily window for the optimisation, covariance, risk-stats and robust-z fixtures.
WIN_START, WIN_END = "2018-01-02", "2022-12-28"

PEER_DISTS = [
    "PyPortfolioOpt", "cvxpy", "clarabel", "riskfolio-lib", "empyrical-reloaded", "vectorbt", "statsmodels",
    "QuantLib", "scikit-learn", "numpy", "pandas", "scipy", "numba", "osqp",
]


def peer_versions():
    return {name: md.version(name) for name in PEER_DISTS}


# ----------------------------------------------------------------------------------------------------------
# JSON helpers
# ----------------------------------------------------------------------------------------------------------
def py(x):
    """Recursively convert numpy/pandas objects to plain JSON-able Python; NaN/inf -> None."""
    if isinstance(x, dict):
        return {str(k): py(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [py(v) for v in x]
    if isinstance(x, pd.Series):
        return {str(k.date()) if isinstance(k, pd.Timestamp) else str(k): py(v) for k, v in x.items()}
    if isinstance(x, pd.DataFrame):
        raise TypeError("convert DataFrames explicitly")
    if isinstance(x, np.ndarray):
        return [py(v) for v in x.tolist()]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    if isinstance(x, pd.Timestamp):
        return str(x.date())
    if x is None or isinstance(x, str):
        return x
    raise TypeError(f"cannot serialise {type(x)}")


def matrix(a):
    return [[float(v) for v in row] for row in np.asarray(a, dtype=float)]


def write_fixture(name, body):
    doc = {
        "fixture": name,
        "generated_by": "peers/generate.py (python3 peers/generate.py)",
        "python": platform.python_version(),
        "peers": peer_versions(),
    }
    doc.update(body)
    os.makedirs(FIXTURES, exist_ok=True)
    path = os.path.join(FIXTURES, name)
    text = json.dumps(py(doc), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    with open(path, "w") as fh:
        fh.write(text)
    print(f"wrote {os.path.relpath(path, ROOT)} ({len(text):,} bytes)")


# ----------------------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------------------
def read_daily(path):
    df = pd.read_csv(os.path.join(ROOT, path), parse_dates=["Date"], index_col="Date")
    assert df.index.is_monotonic_increasing and not df.index.duplicated().any()
    return df


def window_returns(path, columns=None, start=WIN_START, end=WIN_END):
    """Simple returns r_t = p_t/p_{t-1} - 1 over consecutive rows of the [start, end] price window."""
    prices = read_daily(path).loc[start:end]
    if columns is not None:
        prices = prices[columns]
    assert not prices.isna().any().any(), "observed data has gaps in this window"
    rets = prices.pct_change(fill_method=None).iloc[1:]
    return prices, rets


def returns_input_spec(path, prices, rets):
    return {
        "file": path,
        "date_column": "Date",
        "columns": list(prices.columns),
        "price_rows": {
            "first_date": str(prices.index[0].date()),
            "last_date": str(prices.index[-1].date()),
            "count": len(prices),
            "selection": "all rows with first_date <= Date <= last_date (inclusive), file order",
        },
        "returns": {
            "kind": "simple, r_t = p_t / p_{t-1} - 1 between consecutive selected rows; the first selected row "
                    "only seeds (no return dated first_date)",
            "first_date": str(rets.index[0].date()),
            "last_date": str(rets.index[-1].date()),
            "count": len(rets),
        },
        "checks": {
            "sum_of_returns": {c: float(rets[c].sum()) for c in rets.columns},
            "first_return_row": {c: float(rets[c].iloc[0]) for c in rets.columns},
            "last_return_row": {c: float(rets[c].iloc[-1]) for c in rets.columns},
        },
    }


# ----------------------------------------------------------------------------------------------------------
# a. optimisation_20.json
# ----------------------------------------------------------------------------------------------------------
SECTORS = {
    "AAPL": "Information Technology", "AMD": "Information Technology", "MSFT": "Information Technology",
    "BAC": "Financials", "JPM": "Financials",
    "BBY": "Consumer Discretionary", "HD": "Consumer Discretionary",
    "CVX": "Energy", "RRC": "Energy", "XOM": "Energy",
    "GE": "Industrials",
    "JNJ": "Health Care", "LLY": "Health Care", "MRK": "Health Care", "PFE": "Health Care", "UNH": "Health Care",
    "KO": "Consumer Staples", "PEP": "Consumer Staples", "PG": "Consumer Staples", "WMT": "Consumer Staples",
}
SECTOR_UPPER = {"Health Care": 0.30, "Consumer Staples": 0.30, "Energy": 0.15}
SECTOR_LOWER = {"Information Technology": 0.10, "Financials": 0.05}

TARGET_VOLATILITY = 0.22       # annualised; feasible: between min-vol (~0.170) and the max asset vol
TARGET_RETURN = 0.25           # annualised CAGR-style mu; feasible: below the max mu (AMD ~0.418)
TARGET_RETURN_LONG_SHORT = 0.40
TC_K = 0.005                   # transaction_cost k (L1 penalty weight)
TC_W_PREV = "equal weights 1/20"


def fixture_optimisation():
    import cvxpy as cp
    import riskfolio as rp
    from pypfopt import EfficientFrontier, expected_returns, objective_functions, risk_models

    prices, rets = window_returns(LARGE_CAPS)
    tickers = list(rets.columns)
    n = len(tickers)

    mu = expected_returns.mean_historical_return(rets, returns_data=True)  # compounding=True, frequency=252
    S = risk_models.sample_cov(rets, returns_data=True)  # returns.cov() * 252, PSD-fixed only if needed
    mu_v = mu.to_numpy()
    S_v = S.to_numpy()
    S_unfixed = rets.cov().to_numpy() * 252
    psd_fix_applied = not np.array_equal(S_v, S_unfixed)
    check_mu = (1 + rets).prod().to_numpy() ** (252 / len(rets)) - 1
    assert np.allclose(check_mu, mu_v, rtol=0, atol=1e-15)

    w_prev = np.full(n, 1.0 / n)
    sector_idx = {s: [i for i, t in enumerate(tickers) if SECTORS[t] == s] for s in set(SECTORS.values())}

    def perf(w, rf=0.0):
        ret = float(w @ mu_v)
        vol = float(np.sqrt(w @ S_v @ w))
        return {"expected_return": ret, "volatility": vol, "sharpe": (ret - rf) / vol}

    # ---- PyPortfolioOpt, default solver selection (what a user gets) ----
    def run_pypfopt(method, kwargs, bounds, sectors=False, tc=False):
        ef = EfficientFrontier(mu, S, weight_bounds=bounds)
        if sectors:
            ef.add_sector_constraints(SECTORS, SECTOR_LOWER, SECTOR_UPPER)
        if tc:
            ef.add_objective(objective_functions.transaction_cost, w_prev=w_prev, k=TC_K)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(ef, method)(**kwargs)
        w = np.array(ef.weights, dtype=float)  # raw weights, not clean_weights()
        r, v, s = ef.portfolio_performance(risk_free_rate=kwargs.get("risk_free_rate", 0.0))
        return {
            "solver_used": ef._opt.solver_stats.solver_name,
            "status": ef._opt.status,
            "weights": dict(zip(tickers, w.tolist())),
            "weights_sum": float(w.sum()),
            "performance": {"expected_return": float(r), "volatility": float(v), "sharpe": float(s)},
        }, w

    # ---- the same problems written out explicitly in cvxpy, solved with CLARABEL (default settings) ----
    def run_cvxpy(kind, bounds, target=None, sectors=False, tc=False, rf=0.0):
        lb, ub = bounds
        Sp = cp.psd_wrap(S_v)
        stats = {}
        if kind == "max_sharpe":
            y = cp.Variable(n)
            kap = cp.Variable()
            cons = [(mu_v - rf) @ y == 1, cp.sum(y) == kap, kap >= 0, y >= lb * kap, y <= ub * kap]
            if sectors:
                for s, cap in SECTOR_UPPER.items():
                    cons.append(cp.sum(y[sector_idx[s]]) <= cap * kap)
                for s, flo in SECTOR_LOWER.items():
                    cons.append(cp.sum(y[sector_idx[s]]) >= flo * kap)
            prob = cp.Problem(cp.Minimize(cp.quad_form(y, Sp)), cons)
            prob.solve(solver=cp.CLARABEL)
            w = y.value / kap.value
            stats["kappa"] = float(kap.value)
        else:
            w_var = cp.Variable(n)
            cons = [cp.sum(w_var) == 1, w_var >= lb, w_var <= ub]
            if sectors:
                for s, cap in SECTOR_UPPER.items():
                    cons.append(cp.sum(w_var[sector_idx[s]]) <= cap)
                for s, flo in SECTOR_LOWER.items():
                    cons.append(cp.sum(w_var[sector_idx[s]]) >= flo)
            if kind == "min_volatility":
                obj = cp.quad_form(w_var, Sp)
                if tc:
                    t = cp.Variable(n)
                    cons += [t >= w_var - w_prev, t >= w_prev - w_var]
                    obj = obj + TC_K * cp.sum(t)
                prob = cp.Problem(cp.Minimize(obj), cons)
            elif kind == "efficient_return":
                cons.append(mu_v @ w_var >= target)
                prob = cp.Problem(cp.Minimize(cp.quad_form(w_var, Sp)), cons)
            elif kind == "efficient_risk":
                cons.append(cp.quad_form(w_var, Sp) <= target ** 2)
                prob = cp.Problem(cp.Minimize(-(mu_v @ w_var)), cons)
            else:
                raise ValueError(kind)
            prob.solve(solver=cp.CLARABEL)
            w = np.array(w_var.value, dtype=float)
        assert prob.status == "optimal", (kind, prob.status)
        out = {
            "solver_used": prob.solver_stats.solver_name,
            "status": prob.status,
            "objective_value": float(prob.value),
            "iterations": prob.solver_stats.num_iters,
            "weights": dict(zip(tickers, w.tolist())),
            "weights_sum": float(w.sum()),
            "performance": perf(w, rf),
        }
        out.update(stats)
        return out, w

    qp = {
        "min_volatility": "minimise w'Σw  s.t. 1'w = 1, lb <= w <= ub",
        "max_sharpe": "Cornuejols-Tütüncü homogenisation: minimise y'Σy s.t. (μ - rf)'y = 1, 1'y = κ, κ >= 0, "
                      "lb·κ <= y <= ub·κ (and every linear constraint g'w <= c rewritten g'y <= c·κ); "
                      "w = y/κ",
        "efficient_risk": "maximise μ'w  s.t. w'Σw <= σ_target², 1'w = 1, lb <= w <= ub  (an SOCP)",
        "efficient_return": "minimise w'Σw  s.t. μ'w >= r_target, 1'w = 1, lb <= w <= ub",
        "transaction_cost": "minimise w'Σw + k·Σ t_i  s.t. t >= w - w_prev, t >= w_prev - w, 1'w = 1, "
                            "lb <= w <= ub  (i.e. w'Σw + k·||w - w_prev||_1; k is NOT scaled by anything)",
        "sector": "adds Σ_{i in sector} w_i <= cap_sector and Σ_{i in sector} w_i >= floor_sector",
    }

    cases = []
    specs = [
        ("min_volatility", "min_volatility", {}, (0, 1), dict(), qp["min_volatility"]),
        ("max_sharpe", "max_sharpe", {"risk_free_rate": 0.0}, (0, 1), dict(), qp["max_sharpe"]),
        ("efficient_risk", "efficient_risk", {"target_volatility": TARGET_VOLATILITY}, (0, 1), dict(),
         qp["efficient_risk"]),
        ("efficient_return", "efficient_return", {"target_return": TARGET_RETURN}, (0, 1), dict(),
         qp["efficient_return"]),
        ("long_short_efficient_return", "efficient_return", {"target_return": TARGET_RETURN_LONG_SHORT}, (-1, 1),
         dict(), qp["efficient_return"]),
        ("sector_min_volatility", "min_volatility", {}, (0, 1), dict(sectors=True),
         qp["min_volatility"] + "; " + qp["sector"]),
        ("sector_max_sharpe", "max_sharpe", {"risk_free_rate": 0.0}, (0, 1), dict(sectors=True),
         qp["max_sharpe"] + "; " + qp["sector"] + " (homogenised with κ)"),
        ("transaction_cost_min_volatility", "min_volatility", {}, (0, 1), dict(tc=True), qp["transaction_cost"]),
    ]
    for name, method, kwargs, bounds, extra, formulation in specs:
        pp, w_pp = run_pypfopt(method, kwargs, bounds, **extra)
        target = kwargs.get("target_volatility", kwargs.get("target_return"))
        cv, w_cv = run_cvxpy(method, bounds, target=target, rf=kwargs.get("risk_free_rate", 0.0), **extra)
        case = {
            "name": name,
            "pypfopt_call": f"EfficientFrontier(mu, S, weight_bounds={bounds})"
                            + (".add_sector_constraints(sector_mapper, sector_lower, sector_upper)"
                               if extra.get("sectors") else "")
                            + (f".add_objective(objective_functions.transaction_cost, w_prev=w_prev, k={TC_K})"
                               if extra.get("tc") else "")
                            + f".{method}(" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")",
            "method": method,
            "parameters": kwargs,
            "weight_bounds": list(bounds),
            "sector_constraints": bool(extra.get("sectors")),
            "transaction_cost": {"k": TC_K, "w_prev": dict(zip(tickers, w_prev.tolist()))} if extra.get("tc") else None,
            "formulation": formulation,
            "pypfopt": pp,
            "cvxpy_clarabel": cv,
            "max_abs_weight_diff_pypfopt_vs_cvxpy": float(np.max(np.abs(w_pp - w_cv))),
        }
        if extra.get("sectors"):
            case["sector_sums_cvxpy"] = {s: float(w_cv[idx].sum()) for s, idx in sorted(sector_idx.items())}
        cases.append(case)
        print(f"  {name}: pypfopt[{pp['solver_used']}] vs cvxpy[CLARABEL] max|dw| = "
              f"{case['max_abs_weight_diff_pypfopt_vs_cvxpy']:.2e}")

    # PyPortfolioOpt pinned to CLARABEL as well: isolates solver tolerance from formulation differences.
    ef = EfficientFrontier(mu, S, weight_bounds=(0, 1), solver="CLARABEL")
    ef.min_volatility()
    w_pp_cl = np.array(ef.weights, dtype=float)
    ef2 = EfficientFrontier(mu, S, weight_bounds=(0, 1), solver="CLARABEL")
    ef2.max_sharpe(risk_free_rate=0.0)
    w_pp_cl2 = np.array(ef2.weights, dtype=float)

    # ---- riskfolio-lib risk parity (daily covariance, NOT annualised) ----
    Sigma_d = rets.cov().to_numpy()  # ddof=1, daily

    def rp_weights(b):
        port = rp.Portfolio(returns=rets)
        port.assets_stats(method_mu="hist", method_cov="hist")
        assert np.allclose(port.cov.to_numpy(), Sigma_d, rtol=0, atol=0)
        wdf = port.rp_optimization(model="Classic", rm="MV", rf=0, b=b, hist=True)
        return wdf["weights"].to_numpy(dtype=float), port

    def self_check(w, Sig):
        sw = Sig @ w
        return w * sw / (w @ sw)

    def newton_rb(b, Sig):
        """Reference: Spinu's convex risk budgeting, min ½x'Σx - Σ b_i ln x_i, Newton with backtracking."""
        x = b / np.sqrt(b @ Sig @ b)
        f = lambda z: 0.5 * z @ Sig @ z - b @ np.log(z)  # noqa: E731
        for _ in range(100):
            g = Sig @ x - b / x
            H = Sig + np.diag(b / x ** 2)
            dx = np.linalg.solve(H, -g)
            t = 1.0
            while np.any(x + t * dx <= 0) or (t > 1e-3 and f(x + t * dx) > f(x) + 1e-4 * t * (g @ dx)
                                              and np.max(np.abs(dx / x)) > 1e-6):
                t *= 0.5
            x = x + t * dx
            if np.max(np.abs(dx / x)) < 1e-15:
                break
        return x / x.sum()

    budgets_equal = np.full(n, 1.0 / n)
    raw = np.array([1 + (i % 3) for i in range(n)], dtype=float)  # 1,2,3,1,2,3,...
    budgets_given = raw / raw.sum()

    rp_cases = []
    for name, b in [("equal_budgets", None), ("given_budgets", budgets_given.reshape(-1, 1))]:
        w, port = rp_weights(b)
        bud = budgets_equal if b is None else budgets_given
        ref = newton_rb(bud, Sigma_d)
        rc = self_check(w, Sigma_d)
        rc_ref = self_check(ref, Sigma_d)
        rp_cases.append({
            "name": name,
            "riskfolio_call": "rp.Portfolio(returns=R); assets_stats(method_mu='hist', method_cov='hist'); "
                              "rp_optimization(model='Classic', rm='MV', rf=0, b="
                              + ("None" if b is None else "budgets (n x 1 column)") + ", hist=True)",
            "budgets": dict(zip(tickers, bud.tolist())),
            "riskfolio": {
                "solvers_tried_in_order": list(port.solvers),
                "weights": dict(zip(tickers, w.tolist())),
                "weights_sum": float(w.sum()),
                "risk_contribution_share": dict(zip(tickers, rc.tolist())),
                "max_abs_share_minus_budget": float(np.max(np.abs(rc - bud))),
                "portfolio_variance_daily": float(w @ Sigma_d @ w),
            },
            "reference_newton": {
                "method": "numpy Newton on min ½x'Σx - Σ b_i ln x_i (x > 0), backtracking far from the optimum, "
                          "full steps near it, until max|Δx_i/x_i| < 1e-15 (or 100 steps); "
                          "w = x / Σx. Exact risk budgeting: w_i(Σw)_i / w'Σw = b_i.",
                "weights": dict(zip(tickers, ref.tolist())),
                "risk_contribution_share": dict(zip(tickers, rc_ref.tolist())),
                "max_abs_share_minus_budget": float(np.max(np.abs(rc_ref - bud))),
            },
            "max_abs_weight_diff_riskfolio_vs_reference": float(np.max(np.abs(w - ref))),
        })
        print(f"  risk parity {name}: max|RC-b| riskfolio {np.max(np.abs(rc - bud)):.2e}, "
              f"reference {np.max(np.abs(rc_ref - bud)):.2e}")

    write_fixture("optimisation_20.json", {
        "description": "Mean-variance optimisation on the 20 large caps: PyPortfolioOpt inputs (mu, S), "
                       "EfficientFrontier raw weights for several problems, the same QPs solved directly in "
                       "cvxpy with CLARABEL, and riskfolio-lib risk parity.",
        "inputs": returns_input_spec(LARGE_CAPS, prices, rets),
        "conventions": {
            "mu": "expected_returns.mean_historical_return(R, returns_data=True): compounding=True, frequency=252: "
                  "mu_i = prod_t(1 + r_ti)^(252/n) - 1 with n = number of returns (1256)",
            "S": "risk_models.sample_cov(R, returns_data=True) = R.cov() (ddof=1) * 252; "
                 "fix_nonpositive_semidefinite was " + ("APPLIED" if psd_fix_applied else "not needed (matrix is PSD, S == R.cov()*252 exactly)"),
            "weights": "raw ef.weights after the solve (PyPortfolioOpt rounds them to 16 decimals and adds 0.0); "
                       "clean_weights() is NOT applied",
            "performance": "portfolio_performance: expected_return = w'mu, volatility = sqrt(w'Sw), "
                           "sharpe = (w'mu - rf)/volatility, rf = 0; all annualised via mu/S",
            "pypfopt_solver": "PyPortfolioOpt passes solver=None to cvxpy; cvxpy 1.9 then picks the solver recorded "
                              "in pypfopt.solver_used (OSQP for these QPs, default eps ~1e-5 => weights agree with "
                              "the CLARABEL solution only to ~1e-4..1e-5). cvxpy_clarabel is the tight reference "
                              "(Clarabel defaults: tol_gap_abs = tol_gap_rel = tol_feas = 1e-8).",
            "max_sharpe_note": "PyPortfolioOpt rewrites every constraint of the problem for the homogenised variable "
                               "(bounds and sector sums are multiplied by κ), so sector-constrained max_sharpe is "
                               "the exact constrained tangency portfolio.",
            "sector_mapper": SECTORS,
            "sector_upper": SECTOR_UPPER,
            "sector_lower": SECTOR_LOWER,
        },
        "mu": dict(zip(tickers, mu_v.tolist())),
        "S": {"assets": tickers, "annualised": True, "matrix": matrix(S_v)},
        "cases": cases,
        "pypfopt_with_solver_clarabel": {
            "note": "EfficientFrontier(..., solver='CLARABEL') to separate solver tolerance from formulation",
            "min_volatility": dict(zip(tickers, w_pp_cl.tolist())),
            "max_sharpe": dict(zip(tickers, w_pp_cl2.tolist())),
        },
        "risk_parity": {
            "covariance": "daily sample covariance R.cov() (ddof=1), NOT annualised (riskfolio-lib uses the data "
                          "frequency); the scale does not change the weights",
            "Sigma_daily": {"assets": tickers, "matrix": matrix(Sigma_d)},
            "riskfolio_formulation": "minimise g² s.t. ||Σ^{1/2}w|| <= g, b'·log(w) >= 1 (exp cones), w >= 0, "
                                     "1'w = k; then weights = |w| / Σ|w|",
            "self_check": "risk_contribution_share_i = w_i (Σw)_i / (w'Σw); equals b_i (= 1/n for equal budgets)",
            "given_budgets_rule": "b_i ∝ 1 + (i mod 3) over the asset order above (1,2,3,1,2,3,...), normalised",
            "cases": rp_cases,
        },
    })


# ----------------------------------------------------------------------------------------------------------
# b. covariance.json
# ----------------------------------------------------------------------------------------------------------
def fixture_covariance():
    from pypfopt import risk_models
    from sklearn.covariance import LedoitWolf, empirical_covariance

    prices, rets = window_returns(LARGE_CAPS)
    tickers = list(rets.columns)
    X = rets.to_numpy()
    n_obs, n = X.shape

    S1 = rets.cov().to_numpy()  # ddof = 1
    S0 = empirical_covariance(X, assume_centered=False)  # ddof = 0 (MLE)

    lw = LedoitWolf().fit(X)  # assume_centered=False, store_precision=True, block_size=1000
    mu_target = float(np.trace(S0) / n)
    target = mu_target * np.eye(n)
    recon = (1 - lw.shrinkage_) * S0 + lw.shrinkage_ * target
    assert np.allclose(recon, lw.covariance_, rtol=1e-12, atol=1e-18)

    cs = risk_models.CovarianceShrinkage(rets, returns_data=True)  # frequency=252
    pp_lw = cs.ledoit_wolf()  # shrinkage_target='constant_variance'
    pp_lw_delta = float(cs.delta)
    cs_sf = risk_models.CovarianceShrinkage(rets, returns_data=True)
    pp_sf = cs_sf.ledoit_wolf(shrinkage_target="single_factor")
    cs_cc = risk_models.CovarianceShrinkage(rets, returns_data=True)
    pp_cc = cs_cc.ledoit_wolf(shrinkage_target="constant_correlation")

    write_fixture("covariance.json", {
        "description": "Sample covariance and Ledoit-Wolf shrinkage (scikit-learn and PyPortfolioOpt) of the "
                       "20 large caps' daily simple returns.",
        "inputs": returns_input_spec(LARGE_CAPS, prices, rets),
        "assets": tickers,
        "sample_cov_daily_ddof1": {
            "what": "R.cov(): Σ_ij = Σ_t (r_ti - mean_i)(r_tj - mean_j) / (n - 1), daily (not annualised)",
            "matrix": matrix(S1),
        },
        "sample_cov_annualised_ddof1": {
            "what": "pypfopt.risk_models.sample_cov(R, returns_data=True) = R.cov() * 252",
            "matrix": matrix(risk_models.sample_cov(rets, returns_data=True).to_numpy()),
        },
        "empirical_cov_daily_ddof0": {
            "what": "sklearn.covariance.empirical_covariance(X, assume_centered=False): divides by n (MLE)",
            "matrix": matrix(S0),
        },
        "sklearn_ledoit_wolf": {
            "call": "sklearn.covariance.LedoitWolf().fit(X)  (assume_centered=False, block_size=1000)",
            "convention": "daily (NOT annualised); shrinks the ddof=0 empirical covariance S0 (returns de-meaned) "
                          "towards μ·I with μ = trace(S0)/p: Σ_LW = (1 - δ)·S0 + δ·μ·I; δ = shrinkage_ is the "
                          "Ledoit-Wolf (2004) optimal intensity, computed from the de-meaned X with /n moments and "
                          "clipped to [0, 1]",
            "shrinkage": float(lw.shrinkage_),
            "target_mu": mu_target,
            "matrix": matrix(lw.covariance_),
        },
        "pypfopt_ledoit_wolf_constant_variance": {
            "call": "risk_models.CovarianceShrinkage(R, returns_data=True).ledoit_wolf()  "
                    "(shrinkage_target='constant_variance')",
            "convention": "calls sklearn.covariance.ledoit_wolf(nan_to_num(X)) then multiplies by frequency=252 "
                          "(annualised) and runs fix_nonpositive_semidefinite; equals sklearn_ledoit_wolf * 252 "
                          "with the same δ",
            "shrinkage": pp_lw_delta,
            "annualised": True,
            "matrix": matrix(pp_lw.to_numpy()),
            "max_abs_diff_vs_sklearn_times_252": float(np.max(np.abs(pp_lw.to_numpy() - lw.covariance_ * 252))),
        },
        "pypfopt_ledoit_wolf_single_factor": {
            "call": "CovarianceShrinkage(R, returns_data=True).ledoit_wolf(shrinkage_target='single_factor')",
            "convention": "PyPortfolioOpt's own implementation of Ledoit-Wolf (2001) towards the Sharpe "
                          "single-index target (equal-weighted mean of the assets as the market), ddof=0 "
                          "moments on de-meaned returns, annualised ×252",
            "shrinkage": float(cs_sf.delta),
            "annualised": True,
            "matrix": matrix(pp_sf.to_numpy()),
        },
        "pypfopt_ledoit_wolf_constant_correlation": {
            "call": "CovarianceShrinkage(R, returns_data=True).ledoit_wolf(shrinkage_target='constant_correlation')",
            "convention": "PyPortfolioOpt's own implementation of Ledoit-Wolf (2003) towards the constant-"
                          "correlation target (average sample correlation), annualised ×252",
            "shrinkage": float(cs_cc.delta),
            "annualised": True,
            "matrix": matrix(pp_cc.to_numpy()),
        },
    })


# ----------------------------------------------------------------------------------------------------------
# c. risk_stats.json
# ----------------------------------------------------------------------------------------------------------
RISK_ASSETS = ["AAPL", "JPM", "XOM"]
VAR_CUTOFF = 0.05


def fixture_risk_stats():
    import empyrical as ep
    import vectorbt as vbt
    from scipy import stats

    prices, rets = window_returns(LARGE_CAPS, columns=RISK_ASSETS)
    bprices, brets = window_returns(SP500)
    bench = brets["SP500"]
    assert bench.index.equals(rets.index)

    def empyrical_stats(r, b):
        return {
            "annual_return": ep.annual_return(r),
            "annual_volatility": ep.annual_volatility(r),
            "sharpe_ratio": ep.sharpe_ratio(r),
            "sortino_ratio": ep.sortino_ratio(r),
            "downside_risk": ep.downside_risk(r),
            "max_drawdown": ep.max_drawdown(r),
            "calmar_ratio": ep.calmar_ratio(r),
            "cum_returns_final": ep.cum_returns_final(r),
            "value_at_risk": ep.value_at_risk(r, cutoff=VAR_CUTOFF),
            "conditional_value_at_risk": ep.conditional_value_at_risk(r, cutoff=VAR_CUTOFF),
            "beta": ep.beta(r, b),
            "alpha": ep.alpha(r, b),
        }

    def vbt_stats(r, b, year_freq):
        acc = r.vbt.returns(freq="1D", year_freq=year_freq, benchmark_rets=b)
        return {
            "ann_factor": acc.ann_factor,
            "annualized": acc.annualized(),
            "annualized_volatility": acc.annualized_volatility(),
            "sharpe_ratio": acc.sharpe_ratio(),
            "sortino_ratio": acc.sortino_ratio(),
            "downside_risk": acc.downside_risk(),
            "max_drawdown": acc.max_drawdown(),
            "calmar_ratio": acc.calmar_ratio(),
            "total": acc.total(),
            "value_at_risk": acc.value_at_risk(cutoff=VAR_CUTOFF),
            "cond_value_at_risk": acc.cond_value_at_risk(cutoff=VAR_CUTOFF),
            "beta": acc.beta(),
            "alpha": acc.alpha(),
        }

    def parametric(r):
        m = float(np.mean(r))
        s = float(np.std(r, ddof=1))
        out = {"mean": m, "std_ddof1": s}
        for conf in (0.95, 0.99):
            a = 1 - conf
            z = float(stats.norm.ppf(a))
            out[f"{conf}"] = {
                "z_alpha": z,
                "var_return": m + s * z,
                "cvar_return": m - s * float(stats.norm.pdf(z)) / a,
            }
        return out

    per_asset = {}
    for col in RISK_ASSETS + ["SP500"]:
        r = rets[col] if col != "SP500" else bench
        lr = np.log1p(r.to_numpy())
        per_asset[col] = {
            "empyrical": empyrical_stats(r, bench),
            "vectorbt_year_freq_252_days": vbt_stats(r, bench, "252 days"),
            "vectorbt_default_year_freq_365_days": {
                k: v for k, v in vbt_stats(r, bench, "365 days").items()
                if k in ("ann_factor", "annualized", "annualized_volatility", "sharpe_ratio", "sortino_ratio",
                         "alpha")
            },
            "log_returns": {
                "definition": "l_t = ln(p_t / p_{t-1}) = ln(1 + r_t)",
                "count": len(lr),
                "sum": float(lr.sum()),
                "mean": float(lr.mean()),
                "std_ddof1": float(lr.std(ddof=1)),
                "annualised_mean_x252": float(lr.mean() * 252),
                "annualised_vol_sqrt252": float(lr.std(ddof=1) * np.sqrt(252)),
                "exp_sum_minus_1": float(np.expm1(lr.sum())),
                "first": float(lr[0]),
                "last": float(lr[-1]),
            },
            "parametric_gaussian": parametric(r.to_numpy()),
        }

    # A tiny embedded series that exposes the drawdown convention difference.
    probe = pd.Series([-0.10, 0.05, -0.02, 0.03, 0.01],
                      index=pd.date_range("2020-01-01", periods=5, freq="D"))
    probe_out = {
        "returns": probe.to_numpy(),
        "empyrical_max_drawdown": ep.max_drawdown(probe),
        "vectorbt_max_drawdown": probe.vbt.returns(freq="1D", year_freq="252 days").max_drawdown(),
    }

    spec = returns_input_spec(LARGE_CAPS, prices, rets)
    spec["benchmark"] = returns_input_spec(SP500, bprices, brets)
    write_fixture("risk_stats.json", {
        "description": "Return/risk statistics of daily simple returns vs the S&P 500 index: empyrical-reloaded, "
                       "vectorbt's returns accessor, log-return summaries and Gaussian VaR/CVaR (scipy).",
        "inputs": spec,
        "parameters": {"var_cutoff": VAR_CUTOFF, "risk_free": 0.0, "required_return": 0.0, "period": "daily",
                       "annualisation": 252, "benchmark": "SP500 column, simple returns, same dates"},
        "conventions": {
            "returns_space": "VaR/CVaR are quantiles/means of RETURNS (negative numbers = losses), not positive "
                             "loss amounts",
            "annual_return": "(Π(1+r))^(252/n) - 1 (CAGR; n = number of returns)",
            "annual_volatility": "std(r, ddof=1)·√252",
            "sharpe_ratio": "mean(r - rf)/std(r - rf, ddof=1)·√252",
            "downside_risk": "sqrt(mean(min(r - required, 0)²))·√252 — mean over ALL n observations, not only the "
                             "negative ones",
            "sortino_ratio": "mean(r - required)·252 / downside_risk",
            "max_drawdown": "empyrical prepends a start value of 100 to the wealth path, so a loss on the first "
                            "day counts; vectorbt computes wealth = 100·cumprod(1+r) WITHOUT the start value, so the "
                            "first day's loss is not a drawdown (see drawdown_convention_probe). Equal here "
                            "whenever the peak is after day 1.",
            "calmar_ratio": "annual_return / |max_drawdown|",
            "beta": "cov(r, b)/var(b) with both moments as ddof=0 means (the ddof cancels)",
            "alpha": "(1 + mean(r - rf - β(b - rf)))^252 - 1 (geometric annualisation of the mean daily alpha)",
            "value_at_risk": "np.percentile(r, 100·cutoff) with numpy's default 'linear' interpolation: "
                             "h = (n-1)·cutoff, VaR = x_(floor h) + (h - floor h)(x_(floor h + 1) - x_(floor h)) on "
                             "the ascending sort (0-based)",
            "conditional_value_at_risk": "mean of the k+1 smallest returns with k = floor((n-1)·cutoff) "
                                         "(includes the order statistic at the cutoff index; NOT the mean of "
                                         "returns <= VaR)",
            "vectorbt": "same formulas as empyrical (ddof=1, ann_factor = year_freq/freq); with the default "
                        "year_freq='365 days' daily data is annualised with 365 — use year_freq='252 days' to "
                        "match empyrical",
            "parametric_gaussian": "VaR = mean + std(ddof=1)·z_α, CVaR = mean - std·φ(z_α)/α with α = 1 - "
                                   "confidence, z_α = Φ⁻¹(α) (scipy.stats.norm), daily returns space, no "
                                   "annualisation",
        },
        "results": per_asset,
        "drawdown_convention_probe": probe_out,
    })


# ----------------------------------------------------------------------------------------------------------
# c2. benchmark_stats.json
# ----------------------------------------------------------------------------------------------------------
BENCH_DAILY_CASES = [
    # (case name, large-cap columns, first date, last date); the first is risk_stats.json's data exactly.
    ("daily_2018_2022", ["AAPL", "JPM", "XOM"], WIN_START, WIN_END),
    ("daily_2008_2012", ["MSFT", "JNJ"], "2008-01-02", "2012-12-31"),
]
BENCH_MONTHLY = ("monthly_2003_2022", ["MSFT", "XOM"], "2002-12-01", WIN_END)
BENCH_PERIODS = {"daily": 252, "monthly": 12}


def fixture_benchmark_stats():
    import empyrical as ep
    import vectorbt as vbt

    def numpy_stats(r, b, ann):
        a = r - b
        te = float(np.std(a, ddof=1)) * math.sqrt(ann)
        mean_ann = float(np.mean(a)) * ann
        return {
            "active_mean": float(np.mean(a)),
            "active_std_ddof1": float(np.std(a, ddof=1)),
            "tracking_error": te,
            "information_ratio": mean_ann / te if te > 0 else None,
            "periods": int(len(a)),
            "benchmark_up_periods": int((b > 0).sum()),
            "benchmark_down_periods": int((b < 0).sum()),
            "benchmark_zero_periods": int((b == 0).sum()),
        }

    def empyrical_stats(r, b, period):
        with np.errstate(divide="ignore", invalid="ignore"):
            es = ep.excess_sharpe(r, b)
        return {
            "excess_sharpe": es,
            "up_capture": ep.up_capture(r, b, period=period),
            "down_capture": ep.down_capture(r, b, period=period),
            "up_down_capture": ep.up_down_capture(r, b, period=period),
            "alpha": ep.alpha(r, b, period=period),
            "beta": ep.beta(r, b),
        }

    def vbt_stats(r, b, freq, year_freq):
        acc = r.vbt.returns(freq=freq, year_freq=year_freq, benchmark_rets=b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return {
                "ann_factor": acc.ann_factor,
                "information_ratio": acc.information_ratio(),
                "up_capture": acc.up_capture(),
                "down_capture": acc.down_capture(),
            }

    def results(rets, bench, period, freq, year_freq):
        ann = BENCH_PERIODS[period]
        out = {}
        for col in list(rets.columns) + ["SP500"]:
            r = rets[col] if col != "SP500" else bench
            out[col] = {
                "empyrical": empyrical_stats(r, bench, period),
                "numpy": numpy_stats(r.to_numpy(), bench.to_numpy(), ann),
                "vectorbt": vbt_stats(r, bench, freq, year_freq),
            }
        return out

    cases = {}
    for name, cols, start, end in BENCH_DAILY_CASES:
        prices, rets = window_returns(LARGE_CAPS, columns=cols, start=start, end=end)
        bprices, brets = window_returns(SP500, start=start, end=end)
        bench = brets["SP500"]
        assert bench.index.equals(rets.index)
        spec = returns_input_spec(LARGE_CAPS, prices, rets)
        spec["benchmark"] = returns_input_spec(SP500, bprices, brets)
        cases[name] = {
            "period": "daily",
            "periods_per_year": 252,
            "inputs": spec,
            "results": results(rets, bench, "daily", "1D", "252 days"),
        }

    # Monthly: the last trading day's price of each calendar month, embedded because a month-end selection
    # is not a plain date window.
    name, cols, start, end = BENCH_MONTHLY
    daily = read_daily(LARGE_CAPS).loc[start:end, cols].join(read_daily(SP500).loc[start:end])
    assert not daily.isna().any().any()
    month_end = daily.groupby(daily.index.to_period("M")).tail(1)
    mrets = month_end.pct_change(fill_method=None).iloc[1:]
    mbench = mrets["SP500"]
    cases[name] = {
        "period": "monthly",
        "periods_per_year": 12,
        "inputs": {
            "files": [LARGE_CAPS, SP500],
            "columns": cols + ["SP500"],
            "selection": f"daily rows with {start} <= Date <= {end}; of each calendar month the last row; "
                         "simple returns between consecutive month ends (the first month end only seeds)",
            "month_end_dates": [str(d.date()) for d in mrets.index],
            "returns": {c: mrets[c].to_numpy() for c in cols + ["SP500"]},
        },
        "results": results(mrets[cols], mbench, "monthly", "30 days", "360 days"),
    }

    # Benchmark periods with a return of exactly 0 belong to neither the up nor the down market, and a
    # benchmark that never falls has no down capture (empyrical: NaN, here null; fiscus-quant refuses).
    probe_r = pd.Series([0.02, -0.01, 0.005, 0.03, -0.02, 0.01, 0.0, -0.005])
    probe_b = pd.Series([0.01, 0.0, 0.0, 0.02, -0.01, 0.0, 0.005, -0.02])
    never_down_b = probe_b.abs()
    with np.errstate(divide="ignore", invalid="ignore"):
        probe = {
            "returns": probe_r.to_numpy(),
            "benchmark": probe_b.to_numpy(),
            "empyrical": {
                "up_capture": ep.up_capture(probe_r, probe_b, period="daily"),
                "down_capture": ep.down_capture(probe_r, probe_b, period="daily"),
                "up_down_capture": ep.up_down_capture(probe_r, probe_b, period="daily"),
                "excess_sharpe": ep.excess_sharpe(probe_r, probe_b),
            },
            "never_down_benchmark": never_down_b.to_numpy(),
            "never_down_empyrical": {
                "up_capture": ep.up_capture(probe_r, never_down_b, period="daily"),
                "down_capture": ep.down_capture(probe_r, never_down_b, period="daily"),
                "up_down_capture": ep.up_down_capture(probe_r, never_down_b, period="daily"),
            },
        }

    write_fixture("benchmark_stats.json", {
        "description": "Benchmark-relative statistics of large caps vs the S&P 500 index (daily on two windows, "
                       "monthly on one): empyrical-reloaded's excess_sharpe, up/down capture, alpha and beta; "
                       "numpy tracking error and annualised information ratio (empyrical 0.7.1 has neither); "
                       "vectorbt's information_ratio and up/down capture; a probe of zero and missing "
                       "benchmark moves.",
        "parameters": {"risk_free": 0.0, "benchmark": "SP500 column, simple returns, same dates",
                       "vectorbt": "daily freq='1D', year_freq='252 days'; monthly freq='30 days', "
                                   "year_freq='360 days' (ann_factor 12)"},
        "conventions": {
            "active_return": "a_t = r_t - b_t",
            "excess_sharpe": "empyrical: mean(a)/std(a, ddof=1), NOT annualised; NaN when every a_t is equal "
                             "(empyrical sets the std of a constant column to exactly 0)",
            "tracking_error": "not in empyrical 0.7.1: std(a, ddof=1)·√ppy, computed with numpy",
            "information_ratio": "not in empyrical 0.7.1: mean(a)·ppy / tracking_error, computed with numpy; "
                                 "equals excess_sharpe·√ppy. vectorbt's information_ratio is the NON-annualised "
                                 "excess_sharpe",
            "up_capture": "annual_return(r[b > 0]) / annual_return(b[b > 0]) where annual_return(x) = "
                          "(Π(1 + x))^(ppy/len(x)) - 1, i.e. each subset is annualised over ITS OWN length",
            "down_capture": "the same over b < 0; periods with b = 0 are in neither subset",
            "up_down_capture": "up_capture / down_capture",
            "empty_subset": "empyrical returns NaN (null here) when the benchmark never rises (up) or never "
                            "falls (down)",
            "alpha_beta": "as in risk_stats.json; alpha uses the case's periods per year",
        },
        "cases": cases,
        "zero_benchmark_probe": probe,
    })


# ----------------------------------------------------------------------------------------------------------
# d. holt_winters.json
# ----------------------------------------------------------------------------------------------------------
HW_COLUMN = "nonfarm"
HW_H = 24


def load_employment():
    df = pd.read_csv(os.path.join(ROOT, EMPLOYMENT), parse_dates=["month"], index_col="month")
    s = df[HW_COLUMN].astype(float)
    s.index = pd.DatetimeIndex(s.index, freq="MS")
    assert not s.isna().any()
    return s


def hw_reference(y, alpha, beta, gamma, phi, l0, b0, s0, seasonal, h):
    """Independent re-implementation of statsmodels' recursion (used to verify the notes we write)."""
    n, m = len(y), len(s0)
    lv, tr = l0, b0
    seas = list(s0)
    fitted = np.empty(n)
    for t in range(n):
        base = lv + phi * tr
        st = seas[t]
        fitted[t] = base + st if seasonal == "add" else base * st
        if seasonal == "add":
            new_l = alpha * (y[t] - st) + (1 - alpha) * base
            new_s = gamma * (y[t] - base) + (1 - gamma) * st
        else:
            new_l = alpha * (y[t] / st) + (1 - alpha) * base
            new_s = gamma * (y[t] / base) + (1 - gamma) * st
        new_b = beta * (new_l - lv) + (1 - beta) * phi * tr
        lv, tr = new_l, new_b
        seas.append(new_s)
    fc_textbook = np.empty(h)
    fc_statsmodels = np.empty(h)
    for k in range(1, h + 1):
        damp = sum(phi ** j for j in range(1, k + 1))
        base = lv + damp * tr
        # seas[j] is the seasonal state of period j + 1 - m; period n + k - m*ceil(k/m) is the latest one of
        # the season of n + k, i.e. index n + (k - 1) % m.
        st = seas[n + (k - 1) % m]
        # statsmodels 0.15 overwrites the latest state s_n before forecasting, so for k % m == 0 it uses
        # s_{n-m} (index n - 1) instead of s_n (index n + m - 1).
        st_sm = seas[n - 1] if k % m == 0 else st
        fc_textbook[k - 1] = base + st if seasonal == "add" else base * st
        fc_statsmodels[k - 1] = base + st_sm if seasonal == "add" else base * st_sm
    return fitted, fc_textbook, fc_statsmodels


def fixture_holt_winters():
    from statsmodels.tsa.holtwinters import ExponentialSmoothing

    y = load_employment()
    yv = y.to_numpy()
    m = 12
    l0 = float(yv[:m].mean())
    b0 = float((yv[m:2 * m].mean() - yv[:m].mean()) / m)
    s_add = (yv[:m] - l0).tolist()
    s_mul = (yv[:m] / l0).tolist()

    def known_case(name, trend, damped, seasonal, params, s0):
        model = ExponentialSmoothing(
            y, trend=trend, damped_trend=damped, seasonal=seasonal, seasonal_periods=m,
            initialization_method="known", initial_level=l0, initial_trend=b0, initial_seasonal=s0,
        )
        res = model.fit(optimized=False, **params)
        fc = res.forecast(HW_H)
        phi = params.get("damping_trend", 1.0)
        ref_fit, ref_fc_textbook, ref_fc = hw_reference(yv, params["smoothing_level"], params["smoothing_trend"],
                                                        params["smoothing_seasonal"], phi, l0, b0, s0, seasonal,
                                                        HW_H)
        dev = max(np.max(np.abs(ref_fit - res.fittedvalues.to_numpy())), np.max(np.abs(ref_fc - fc.to_numpy())))
        assert dev < 1e-6, (name, dev)
        differ = [k + 1 for k in range(HW_H) if abs(ref_fc_textbook[k] - fc.to_numpy()[k]) > 1e-6]
        print(f"  HW {name}: SSE {res.sse:.6g}; notes' recursion reproduces statsmodels to {dev:.1e}")
        return {
            "name": name,
            "call": f"ExponentialSmoothing(y, trend={trend!r}, damped_trend={damped}, seasonal={seasonal!r}, "
                    f"seasonal_periods=12, initialization_method='known', initial_level=l0, initial_trend=b0, "
                    f"initial_seasonal=s0).fit(optimized=False, "
                    + ", ".join(f"{k}={v}" for k, v in params.items()) + ")",
            "smoothing": params,
            "initial_level": l0,
            "initial_trend": b0,
            "initial_seasonal": s0,
            "fittedvalues": res.fittedvalues.to_numpy(),
            "sse": float(res.sse),
            "forecast": fc.to_numpy(),
            "forecast_dates": [str(d.date()) for d in fc.index],
            "forecast_textbook": ref_fc_textbook,
            "horizons_where_statsmodels_differs_from_textbook": differ,
            "final_level": float(res.level.iloc[-1]),
            "final_trend": float(res.trend.iloc[-1]),
            "final_seasons": res.season.to_numpy()[-m:],
            "aic": float(res.aic),
            "max_abs_dev_of_reference_recursion": float(dev),
        }

    case_i = known_case("additive_trend_additive_seasonal_known", "add", False, "add",
                        {"smoothing_level": 0.5, "smoothing_trend": 0.1, "smoothing_seasonal": 0.2}, s_add)
    case_ii = known_case("damped_additive_trend_multiplicative_seasonal_known", "add", True, "mul",
                         {"smoothing_level": 0.5, "smoothing_trend": 0.1, "smoothing_seasonal": 0.2,
                          "damping_trend": 0.95}, s_mul)

    def estimated_case(name, trend, damped, seasonal):
        model = ExponentialSmoothing(y, trend=trend, damped_trend=damped, seasonal=seasonal, seasonal_periods=m)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = model.fit()
        p = res.params
        fc = res.forecast(HW_H)
        _, fc_textbook, fc_sm = hw_reference(
            yv, p["smoothing_level"], p["smoothing_trend"], p["smoothing_seasonal"],
            p["damping_trend"] if damped else 1.0, p["initial_level"], p["initial_trend"],
            list(p["initial_seasons"]), seasonal, HW_H)
        assert np.max(np.abs(fc_sm - fc.to_numpy())) < 1e-6
        print(f"  HW {name}: SSE {res.sse:.6g}")
        return {
            "name": name,
            "call": f"ExponentialSmoothing(y, trend={trend!r}, damped_trend={damped}, seasonal={seasonal!r}, "
                    f"seasonal_periods=12).fit()  (initialization_method='estimated', optimized=True, "
                    f"use_brute=True, remove_bias=False)",
            "params": {
                "smoothing_level": p["smoothing_level"],
                "smoothing_trend": p["smoothing_trend"],
                "smoothing_seasonal": p["smoothing_seasonal"],
                "damping_trend": p["damping_trend"] if damped else None,
                "initial_level": p["initial_level"],
                "initial_trend": p["initial_trend"],
                "initial_seasons": np.asarray(p["initial_seasons"]),
            },
            "sse": float(res.sse),
            "aic": float(res.aic),
            "aicc": float(res.aicc),
            "bic": float(res.bic),
            "forecast": fc.to_numpy(),
            "forecast_textbook": fc_textbook,
            "fittedvalues": res.fittedvalues.to_numpy(),
            "optimizer": {
                "success": bool(res.mle_retvals.success) if hasattr(res.mle_retvals, "success") else None,
                "message": str(getattr(res.mle_retvals, "message", "")),
            },
            "warnings": sorted({str(w.message) for w in caught}),
        }

    est_i = estimated_case("additive_trend_additive_seasonal_estimated", "add", False, "add")
    est_ii = estimated_case("damped_additive_trend_multiplicative_seasonal_estimated", "add", True, "mul")

    write_fixture("holt_winters.json", {
        "description": "statsmodels Holt-Winters (ExponentialSmoothing) on US total nonfarm employment.",
        "inputs": {
            "file": EMPLOYMENT,
            "date_column": "month",
            "column": HW_COLUMN,
            "rows": "all 120 rows, 2006-01-01 .. 2015-12-01, monthly (freq 'MS'), thousands of jobs",
            "note": "the BLS series in this file is seasonally ADJUSTED, so the seasonal components are small; "
                    "the fixture tests the recursion and the estimator, not a modelling choice. None of the "
                    "shipped monthly series is unadjusted.",
            "y": yv,
            "initial_state_rule": "l0 = mean(y[0:12]); b0 = (mean(y[12:24]) - mean(y[0:12]))/12; "
                                  "additive s0_j = y[j] - l0, multiplicative s0_j = y[j]/l0, j = 0..11",
        },
        "conventions": {
            "indexing": "observations y_1..y_n (n = 120); the 12 initial seasonals s0[0..11] are the seasonal "
                        "states of periods 1-m..0, so s0[0] is the one used for y_1, s0[1] for y_2, ...; "
                        "initial_level/initial_trend are l_0/b_0 (the state BEFORE y_1)",
            "additive_seasonal_recursion": "ŷ_t = l_{t-1} + φ·b_{t-1} + s_{t-m};  "
                                           "l_t = α(y_t - s_{t-m}) + (1-α)(l_{t-1} + φ b_{t-1});  "
                                           "b_t = β(l_t - l_{t-1}) + (1-β)·φ·b_{t-1};  "
                                           "s_t = γ(y_t - l_{t-1} - φ b_{t-1}) + (1-γ) s_{t-m}",
            "multiplicative_seasonal_recursion": "ŷ_t = (l_{t-1} + φ b_{t-1})·s_{t-m};  "
                                                 "l_t = α y_t/s_{t-m} + (1-α)(l_{t-1} + φ b_{t-1});  "
                                                 "b_t = β(l_t - l_{t-1}) + (1-β)·φ·b_{t-1};  "
                                                 "s_t = γ y_t/(l_{t-1} + φ b_{t-1}) + (1-γ) s_{t-m}",
            "seasonal_update_surprise": "the seasonal update uses the PREVIOUS level+trend (l_{t-1} + φ b_{t-1}), "
                                        "not the new level l_t as in the textbook Holt-Winters form "
                                        "(γ(y_t - l_t)); the two are not equivalent for the same γ",
            "damping": "φ = 1 without damped_trend; β multiplies the level change, (1-β) the DAMPED previous "
                       "trend φ·b_{t-1}",
            "forecast": "textbook: ŷ_{n+h} = l_n + (φ + φ² + ... + φ^h)·b_n  (+ or ×)  s_{n - m + 1 + ((h-1) mod m)} "
                        "(for φ = 1 the sum is h). statsmodels 0.15 QUIRK: for h = m, 2m, ... (here h = 12 and 24) "
                        "it uses s_{n-m} — the state of the same season one cycle EARLIER — instead of the latest "
                        "s_n, because _predict overwrites s_n before building the forecast (the in-sample fitted "
                        "values and SSE are unaffected). `forecast` is what statsmodels returns; "
                        "`forecast_textbook` uses s_n for every h; "
                        "`horizons_where_statsmodels_differs_from_textbook` lists the affected h. A Rust "
                        "implementation must choose: reproduce the quirk to match `forecast` to ~1e-10, or use "
                        "the textbook rule and match `forecast_textbook`",
            "fittedvalues": "the one-step-ahead predictions ŷ_t above (t = 1..n)",
            "sse": "Σ (y_t - ŷ_t)²",
            "aic": "n·ln(SSE/n) + 2k with k = m·[seasonal] + 2·[trend] + 2 + [damped]",
            "reported_initial_trend": "params['initial_trend'] is b_0 itself (statsmodels divides its internal "
                                      "φ·b_0 back by φ)",
            "verification": "generate.py re-implements the recursion above independently (with the forecast "
                            "quirk) and asserts it matches statsmodels to < 1e-6 "
                            "(max_abs_dev_of_reference_recursion)",
            "estimated_fits": "initialization_method='estimated': α, β, γ, φ and l0, b0, s0 are all optimised "
                              "(SSE, L-BFGS-B/SLSQP-style bounded search after a brute-force start); compare SSE "
                              "and forecasts within a tolerance, not parameters exactly",
        },
        "known_fits": [case_i, case_ii],
        "estimated_fits": [est_i, est_ii],
        "horizon": HW_H,
    })


# ----------------------------------------------------------------------------------------------------------
# e. arima.json
# ----------------------------------------------------------------------------------------------------------
ARIMA_START, ARIMA_END = "1990-01-01", "2018-11-01"


def load_core_cpi():
    df = pd.read_csv(os.path.join(ROOT, CORE_CPI))
    df["Date"] = pd.to_datetime(df["Date"], format="%m/%d/%Y")
    s = df.set_index("Date")["CPILFESL"].astype(float)
    s = s.loc[ARIMA_START:ARIMA_END]
    s.index = pd.DatetimeIndex(s.index, freq="MS")
    assert not s.isna().any()
    return s


def fixture_arima():
    from statsmodels.tsa.arima.model import ARIMA

    cpi = load_core_cpi()
    lcpi = 100.0 * np.log(cpi)
    infl = lcpi.diff().iloc[1:]

    def fit(name, series_name, series, order, seasonal_order, trend):
        model = ARIMA(series, order=order, seasonal_order=seasonal_order, trend=trend)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = model.fit()
        fc = res.get_forecast(12)
        ci = fc.conf_int(alpha=0.05)
        print(f"  ARIMA {name}: llf {res.llf:.6f}, aic {res.aic:.4f}")
        return {
            "name": name,
            "series": series_name,
            "call": f"ARIMA(y, order={order}, seasonal_order={seasonal_order}, trend={trend!r}).fit()",
            "order": list(order),
            "seasonal_order": list(seasonal_order),
            "trend": trend,
            "nobs": int(res.nobs),
            "params": {k: float(v) for k, v in res.params.items()},
            "bse": {k: float(v) for k, v in res.bse.items()},
            "sigma2": float(res.params["sigma2"]),
            "loglik": float(res.llf),
            "aic": float(res.aic),
            "bic": float(res.bic),
            "aicc": float(res.aicc),
            "loglikelihood_burn": int(res.loglikelihood_burn),
            "forecast": {
                "dates": [str(d.date()) for d in fc.predicted_mean.index],
                "mean": fc.predicted_mean.to_numpy(),
                "se": fc.se_mean.to_numpy(),
                "lower_95": ci.iloc[:, 0].to_numpy(),
                "upper_95": ci.iloc[:, 1].to_numpy(),
            },
            "optimizer_converged": bool(res.mle_retvals.get("converged", True)) if isinstance(res.mle_retvals, dict) else None,
            "warnings": sorted({str(w.message) for w in caught}),
        }

    fits = [
        fit("ar1_const_on_inflation", "infl", infl, (1, 0, 0), (0, 0, 0, 0), "c"),
        fit("arima111_drift_on_log_cpi", "lcpi", lcpi, (1, 1, 1), (0, 0, 0, 0), "t"),
        fit("arima210_drift_on_log_cpi", "lcpi", lcpi, (2, 1, 0), (0, 0, 0, 0), "t"),
        fit("sarima110x100_12_drift_on_log_cpi", "lcpi", lcpi, (1, 1, 0), (1, 0, 0, 12), "t"),
        fit("arma11_const_on_inflation", "infl", infl, (1, 0, 1), (0, 0, 0, 0), "c"),
        fit("arima111_no_trend_on_inflation", "infl", infl, (1, 1, 1), (0, 0, 0, 0), "n"),
    ]

    write_fixture("arima.json", {
        "description": "statsmodels.tsa.arima.model.ARIMA fits on US core CPI (log level and monthly log change).",
        "inputs": {
            "file": CORE_CPI,
            "date_column": "Date (m/d/YYYY)",
            "column": "CPILFESL",
            "rows": f"all rows with {ARIMA_START} <= Date <= {ARIMA_END} (monthly, freq 'MS'): {len(cpi)} rows",
            "series": {
                "lcpi": "100·ln(CPILFESL), dated 1990-01-01 .. 2018-11-01",
                "infl": "lcpi_t - lcpi_{t-1} (monthly log change in percent), dated 1990-02-01 .. 2018-11-01",
            },
            "lcpi": lcpi.to_numpy(),
            "infl": infl.to_numpy(),
        },
        "conventions": {
            "estimation": "exact Gaussian maximum likelihood via the state-space (Kalman filter) representation: "
                          "ARIMA.fit() default method='statespace', enforce_stationarity=True, "
                          "enforce_invertibility=True, concentrate_scale=False; sigma2 is a free parameter",
            "trend_terms": "trend terms are exogenous regressors on the UNDIFFERENCED series: 'c' gives "
                           "y_t = c + u_t (c is the MEAN, not the ARMA intercept c(1-φ)); 't' gives "
                           "y_t = δ·t + u_t with t = 1, 2, ..., n (trend_offset=1) and u ~ ARIMA(p,d,q), which for "
                           "d = 1 is a drift δ in Δy_t. Parameter names: 'const', 'x1' (the trend coefficient), "
                           "'ar.L1', 'ma.L1', 'ar.S.L12', 'sigma2'",
            "ma_sign": "MA polynomial is (1 + θ_1 L + ...), i.e. u_t = ε_t + θ_1 ε_{t-1}",
            "integration": "d > 0 is handled inside the state space (simple_differencing=False) with the "
                           "non-stationary states given a diffuse initialisation; nobs counts every observation "
                           "of y; loglikelihood_burn records how many initial periods are excluded from llf",
            "information_criteria": "aic = -2 llf + 2k, bic = -2 llf + k ln(nobs), k = number of estimated "
                                    "parameters INCLUDING sigma2",
            "forecast": "get_forecast(12): mean, se_mean and conf_int(alpha=0.05) (Gaussian, mean ± 1.959963985·se) "
                        "for the level of the modelled series (lcpi for d = 1)",
            "optimizer": "L-BFGS-B on the transformed parameters from Hannan-Rissanen-style start values; compare "
                         "llf tightly (~1e-6 relative) and parameters loosely (~1e-4)",
            "equivalence": "ARIMA(1,1,1) with trend 't' on lcpi and ARMA(1,1) with trend 'c' on infl = Δlcpi are "
                           "the same model (drift δ = mean of Δy; the diffuse first observation of lcpi carries no "
                           "likelihood), so their params and llf agree up to optimizer tolerance — a Rust ARIMA "
                           "can difference first and fit the ARMA with a mean",
        },
        "fits": fits,
    })


# ----------------------------------------------------------------------------------------------------------
# f. monte_carlo.json
# ----------------------------------------------------------------------------------------------------------
def fixture_monte_carlo():
    import QuantLib as ql

    today = ql.Date(2, 1, 2024)
    ql.Settings.instance().evaluationDate = today
    dc = ql.Actual365Fixed()

    def price(S, K, r, q, sigma, days, kind):
        spot = ql.QuoteHandle(ql.SimpleQuote(S))
        rts = ql.YieldTermStructureHandle(ql.FlatForward(today, r, dc))  # continuous compounding
        qts = ql.YieldTermStructureHandle(ql.FlatForward(today, q, dc))
        vts = ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(), sigma, dc))
        proc = ql.BlackScholesMertonProcess(spot, qts, rts, vts)
        opt_type = ql.Option.Call if kind == "call" else ql.Option.Put
        opt = ql.VanillaOption(ql.PlainVanillaPayoff(opt_type, K), ql.EuropeanExercise(today + days))
        opt.setPricingEngine(ql.AnalyticEuropeanEngine(proc))
        return opt, proc

    base = dict(S=100.0, K=100.0, r=0.05, q=0.0, sigma=0.20, days=365)
    opt, proc = price(kind="call", **base)
    headline = {
        "inputs": {"S": 100.0, "K": 100.0, "r": 0.05, "q": 0.0, "sigma": 0.20, "T": 1.0, "type": "call"},
        "npv": opt.NPV(),
        "delta": opt.delta(),
        "gamma": opt.gamma(),
        "vega": opt.vega(),
        "theta": opt.theta(),
        "rho": opt.rho(),
    }
    put, _ = price(kind="put", **base)
    headline["put_npv"] = put.NPV()
    headline["put_call_parity_residual"] = opt.NPV() - put.NPV() - (100.0 - 100.0 * math.exp(-0.05))

    grid = []
    for days in (73, 146, 365, 730):
        for K in (80.0, 90.0, 100.0, 110.0, 120.0):
            for kind in ("call", "put"):
                o, _ = price(100.0, K, 0.05, 0.0, 0.20, days, kind)
                grid.append({"S": 100.0, "K": K, "r": 0.05, "q": 0.0, "sigma": 0.20, "days": days,
                             "T": days / 365.0, "type": kind, "npv": o.NPV()})
    for (S, K, r, q, sigma, days) in [(100.0, 105.0, 0.03, 0.02, 0.25, 365), (50.0, 45.0, 0.01, 0.0, 0.40, 146),
                                      (100.0, 100.0, 0.0, 0.0, 0.20, 365)]:
        for kind in ("call", "put"):
            o, _ = price(S, K, r, q, sigma, days, kind)
            grid.append({"S": S, "K": K, "r": r, "q": q, "sigma": sigma, "days": days, "T": days / 365.0,
                         "type": kind, "npv": o.NPV()})

    # QuantLib's own Monte Carlo engine (pseudo-random, fixed seed) for the headline option.
    mc_opt, mc_proc = price(kind="call", **base)
    mc_opt.setPricingEngine(ql.MCEuropeanEngine(mc_proc, "pseudorandom", timeSteps=1, requiredSamples=200000,
                                                seed=42))
    ql_mc = {"engine": "MCEuropeanEngine(process, 'pseudorandom', timeSteps=1, requiredSamples=200000, seed=42)",
             "npv": mc_opt.NPV(), "error_estimate": mc_opt.errorEstimate()}

    # Vectorised numpy GBM Monte Carlo (seeded) for the same option.
    seed, n_paths, n_steps = 20240102, 100_000, 252
    S0, K, r, sigma, T = 100.0, 100.0, 0.05, 0.20, 1.0
    dt = T / n_steps
    rng = np.random.default_rng(seed)
    logS = np.full(n_paths, math.log(S0))
    drift = (r - 0.5 * sigma ** 2) * dt
    vol = sigma * math.sqrt(dt)
    for _ in range(n_steps):
        logS += drift + vol * rng.standard_normal(n_paths)
    payoff = np.maximum(np.exp(logS) - K, 0.0)
    disc = math.exp(-r * T)
    mc_price = disc * payoff.mean()
    mc_se = disc * payoff.std(ddof=1) / math.sqrt(n_paths)
    numpy_mc = {
        "method": "exact log-Euler GBM: ln S_{k+1} = ln S_k + (r - σ²/2)Δt + σ√Δt·Z, Z ~ N(0,1) drawn as "
                  "np.random.default_rng(seed).standard_normal(n_paths) once per step (step-major); price = "
                  "e^{-rT}·mean(max(S_T - K, 0)); se = e^{-rT}·std(payoff, ddof=1)/√n_paths",
        "seed": seed, "n_paths": n_paths, "n_steps": n_steps,
        "price": mc_price, "standard_error": mc_se,
        "z_vs_analytic": (mc_price - headline["npv"]) / mc_se,
    }

    write_fixture("monte_carlo.json", {
        "description": "QuantLib analytic Black-Scholes European prices (and greeks) plus seeded Monte Carlo "
                       "estimates for the S=K=100, r=5%, q=0, σ=20%, T=1 call.",
        "conventions": {
            "dates": "evaluation date 2024-01-02, maturity = evaluation date + `days` calendar days, day counter "
                     "Actual365Fixed => T = days/365 exactly (365 days => T = 1)",
            "rates": "FlatForward(r) and FlatForward(q) with QuantLib's default Continuous compounding; "
                     "BlackConstantVol(sigma) on NullCalendar",
            "engine": "AnalyticEuropeanEngine(BlackScholesMertonProcess)",
            "greeks_units": "delta, gamma per unit spot; vega per 1.00 of volatility (divide by 100 for per vol "
                            "point); theta per YEAR (QuantLib's theta, divide by 365 for per calendar day); rho per "
                            "1.00 of rate",
            "mc_check": "a Monte Carlo price must lie within 3 standard errors of the analytic NPV; the RNG "
                        "streams cannot be matched across languages",
        },
        "headline_call": headline,
        "grid": grid,
        "quantlib_mc": ql_mc,
        "numpy_gbm_mc": numpy_mc,
    })


# ----------------------------------------------------------------------------------------------------------
# g. isolation_forest.json
# ----------------------------------------------------------------------------------------------------------
def fixture_isolation_forest():
    from sklearn.ensemble import IsolationForest
    from sklearn.ensemble._iforest import _average_path_length

    seed = 7
    rng = np.random.default_rng(seed)
    normal = rng.standard_normal((500, 2))
    angles = rng.uniform(0, 2 * np.pi, 10)
    radii = rng.uniform(6.0, 9.0, 10)
    anomalies = np.column_stack([radii * np.cos(angles), radii * np.sin(angles)])
    X2 = np.vstack([normal, anomalies])
    perm = rng.permutation(len(X2))
    X2 = X2[perm]
    planted2 = sorted(int(i) for i in np.where(perm >= 500)[0])

    amounts = np.round(rng.lognormal(mean=3.5, sigma=0.6, size=1000), 2)
    planted_amounts = np.array([2500.00, 4999.99, 7300.50, 12000.00, 18888.88, 25000.00, 0.01, 0.05])
    X1 = np.concatenate([amounts, planted_amounts])
    perm1 = rng.permutation(len(X1))
    X1 = X1[perm1]
    planted1 = sorted(int(i) for i in np.where(perm1 >= 1000)[0])

    def run(X, planted, k):
        clf = IsolationForest(n_estimators=100, max_samples="auto", contamination="auto", random_state=0)
        clf.fit(X)
        ss = clf.score_samples(X)
        df = clf.decision_function(X)
        pred = clf.predict(X)
        order = np.argsort(ss, kind="stable")  # most anomalous first
        topk = sorted(int(i) for i in order[:k])
        return {
            "max_samples_used": int(clf.max_samples_),
            "max_depth": int(np.ceil(np.log2(max(clf.max_samples_, 2)))),
            "offset_": float(clf.offset_),
            "score_samples": ss,
            "decision_function": df,
            "predict": pred,
            "n_predicted_outliers": int((pred == -1).sum()),
            "top_k_most_anomalous": topk,
            "top_k_overlap_with_planted": len(set(topk) & set(planted)),
        }

    res2 = run(X2, planted2, 10)
    res1 = run(X1.reshape(-1, 1), planted1, 8)
    print(f"  iforest 2-D top-10 overlap {res2['top_k_overlap_with_planted']}/10, "
          f"1-D top-8 overlap {res1['top_k_overlap_with_planted']}/8")

    ns = [1, 2, 3, 10, 256, 1000]
    cn = _average_path_length(np.array(ns))

    write_fixture("isolation_forest.json", {
        "description": "scikit-learn IsolationForest on seeded, embedded data with planted anomalies, plus the "
                       "exact c(n) normalisation.",
        "parameters": {"n_estimators": 100, "max_samples": "auto", "contamination": "auto", "random_state": 0,
                       "max_features": 1.0, "bootstrap": False},
        "conventions": {
            "c_n": "c(n) = 2(ln(n-1) + γ) - 2(n-1)/n for n > 2, c(2) = 1, c(n <= 1) = 0 "
                   "(γ = Euler-Mascheroni 0.5772156649015329; ln(n-1)+γ approximates the harmonic number H(n-1))",
            "path_length": "h(x) = depth of the leaf reached (root = 0) + c(n_leaf) where n_leaf is the number of "
                           "TRAINING samples in that leaf (sklearn adds depth+1 from compute_node_depths, then "
                           "subtracts 1)",
            "max_samples": "'auto' = min(256, n); each tree is grown on a sub-sample of that size drawn WITHOUT "
                           "replacement, to max_depth = ceil(log2(max_samples)); split feature uniform, threshold "
                           "uniform between the node's min and max of that feature",
            "score_samples": "-2^(-mean_trees h(x) / c(max_samples)) — the NEGATED paper score (lower = more "
                             "anomalous, range [-1, 0))",
            "decision_function": "score_samples - offset_; offset_ = -0.5 when contamination='auto'; "
                                 "predict = -1 where decision_function < 0",
            "comparison": "tree randomness cannot be matched; compare rank correlation of scores and top-k overlap "
                          "with the planted anomalies",
        },
        "c_n": {"n": ns, "c": cn},
        "dataset_2d": {
            "generation": "rng = np.random.default_rng(7); normal = rng.standard_normal((500, 2)); "
                          "angles = rng.uniform(0, 2π, 10); radii = rng.uniform(6, 9, 10); anomalies = "
                          "(r cos a, r sin a); X = vstack(normal, anomalies); perm = rng.permutation(510); X = X[perm]",
            "X": X2,
            "planted_anomaly_indices": planted2,
            "results": res2,
        },
        "dataset_1d_amounts": {
            "generation": "continues the same rng after the 2-D draws: amounts = round(rng.lognormal(3.5, 0.6, "
                          "1000), 2); planted = [2500, 4999.99, 7300.5, 12000, 18888.88, 25000, 0.01, 0.05]; "
                          "X = concat(amounts, planted); perm = rng.permutation(1008); X = X[perm]; fitted as one "
                          "feature (X.reshape(-1, 1))",
            "X": X1,
            "planted_anomaly_indices": planted1,
            "results": res1,
        },
    })


# ----------------------------------------------------------------------------------------------------------
# h. backtest.json
# ----------------------------------------------------------------------------------------------------------
BT_ASSETS = ["AAPL", "MSFT", "JPM", "XOM", "JNJ"]
BT_START, BT_END = "2019-01-02", "2022-12-28"
BT_BASE_WEIGHTS = [0.30, 0.25, 0.20, 0.15, 0.10]
BT_INIT_CASH = 100_000.0


def build_bt_weights(close):
    W = pd.DataFrame(np.nan, index=close.index, columns=close.columns)
    firsts = close.index.to_series().groupby(close.index.to_period("M")).first()
    for k, d in enumerate(firsts.to_numpy()):
        W.loc[d] = np.roll(np.array(BT_BASE_WEIGHTS), k)
    return W, list(firsts)


def backtest_reference(close, W, fees, init_cash):
    """Independent re-implementation of the vectorbt conventions documented in backtest.json."""
    px = close.to_numpy()
    w = W.to_numpy()
    n_rows, n_cols = px.shape
    cash = init_cash
    pos = np.zeros(n_cols)
    values = np.empty(n_rows)
    n_orders = 0
    total_fees = 0.0
    for i in range(n_rows):
        row = w[i]
        if not np.all(np.isnan(row)):
            V = cash + float(np.sum(pos * px[i]))
            approx = np.where(np.isnan(row), np.nan, row * V - pos * px[i])
            for j in np.argsort(approx, kind="stable"):
                if np.isnan(row[j]):
                    continue
                size = row[j] * V / px[i, j] - pos[j]
                if size == 0:
                    continue
                if size > 0:
                    req = size * px[i, j] * (1 + fees)
                    if req > cash and not np.isclose(req, cash):
                        size = cash / (px[i, j] * (1 + fees))
                    fee = size * px[i, j] * fees
                    cash -= size * px[i, j] + fee
                else:
                    fee = -size * px[i, j] * fees
                    cash += -size * px[i, j] - fee
                pos[j] += size
                total_fees += fee
                n_orders += 1
        values[i] = cash + float(np.sum(pos * px[i]))
    return values, total_fees, n_orders


def fixture_backtest():
    import vectorbt as vbt

    close = read_daily(LARGE_CAPS).loc[BT_START:BT_END, BT_ASSETS]
    assert not close.isna().any().any()
    W, firsts = build_bt_weights(close)

    def run(fees):
        pf = vbt.Portfolio.from_orders(close, size=W, size_type="targetpercent", group_by=True,
                                       cash_sharing=True, call_seq="auto", fees=fees, freq="1D",
                                       init_cash=BT_INIT_CASH)
        rec = pf.orders.values  # numpy structured array of order records
        orders = [{
            "date": str(close.index[int(r["idx"])].date()),
            "row": int(r["idx"]),
            "asset": BT_ASSETS[int(r["col"])],
            "size": float(r["size"]),
            "price": float(r["price"]),
            "fees": float(r["fees"]),
            "side": "buy" if int(r["side"]) == 0 else "sell",
        } for r in rec]
        rets = pf.returns()
        value = pf.value()
        out = {
            "call": "vbt.Portfolio.from_orders(close, size=W, size_type='targetpercent', group_by=True, "
                    f"cash_sharing=True, call_seq='auto', fees={fees}, freq='1D', init_cash={BT_INIT_CASH})",
            "fees": fees,
            "final_value": float(value.iloc[-1]),
            "total_return": float(pf.total_return()),
            "total_fees": float(rec["fees"].sum()),
            "n_orders": int(len(rec)),
            "returns": rets.to_numpy(),
            "value": value.to_numpy(),
            "final_cash": float(pf.cash().iloc[-1]),
            "final_positions": dict(zip(BT_ASSETS, pf.assets().iloc[-1].to_numpy().tolist())),
            "orders": orders,
        }
        ref_values, ref_fees, ref_n = backtest_reference(close, W, fees, BT_INIT_CASH)
        dev = float(np.max(np.abs(ref_values / value.to_numpy() - 1)))
        assert dev < 1e-9 and ref_n == out["n_orders"], (dev, ref_n)
        out["reference_reimplementation_max_rel_value_diff"] = dev
        print(f"  backtest fees={fees}: reference re-implementation matches to {dev:.1e}; final value {out['final_value']:.6f}, fees {out['total_fees']:.6f}, "
              f"{out['n_orders']} orders")
        return out

    with_fees = run(0.001)
    no_fees = run(0.0)

    write_fixture("backtest.json", {
        "description": "vectorbt monthly target-weight rebalancing of 5 large caps (cash shared, auto call "
                       "sequence), with 10 bp proportional fees and without fees.",
        "inputs": {
            "file": LARGE_CAPS,
            "date_column": "Date",
            "columns": BT_ASSETS,
            "rows": f"all rows with {BT_START} <= Date <= {BT_END} (inclusive): {len(close)} rows; close = "
                    f"these adjusted closes as-is (orders fill at the close)",
            "init_cash": BT_INIT_CASH,
            "W_rule": "W has the shape of close and is NaN (= no order) everywhere except the FIRST trading row "
                      "of each calendar month in the window (k = 0, 1, 2, ... in date order), where "
                      "W[k] = np.roll([0.30, 0.25, 0.20, 0.15, 0.10], k) over the asset order "
                      "[AAPL, MSFT, JPM, XOM, JNJ] (so k=1 gives [0.10, 0.30, 0.25, 0.20, 0.15])",
            "rebalance_rows": [{"date": str(pd.Timestamp(d).date()), "row": int(close.index.get_loc(d)),
                                "weights": W.loc[d].to_numpy()} for d in firsts],
        },
        "conventions": {
            "order_price": "price=np.inf => the close of that row; val_price=np.inf => valuation at the same close",
            "group_value": "with cash_sharing the group value V = cash + Σ position_j·close_j is computed ONCE per "
                           "row before any order (update_value=False) and every targetpercent order in that row "
                           "uses the same V",
            "target_to_size": "size_j = w_j·V/close_j - position_j (shares, fractional allowed, no granularity)",
            "call_seq_auto": "orders in a row are executed in ascending order of their approximate value "
                             "w_j·V - position_j·close_j (sells first, then the smallest buys), stable insertion sort",
            "fees": "proportional: fee = size·price·fees, paid in cash on top of a buy / deducted from a sell's "
                    "proceeds",
            "cash_limit": "a buy that needs more than the available cash (size·price·(1+fees)) is partially "
                          "filled to cash/(price·(1+fees)) (allow_partial=True) — with fees the last buy of each "
                          "rebalance is typically cut, so weights land slightly under target",
            "direction": "default direction='both' (fills never go short here because all targets are >= 0)",
            "returns": "group returns r_t = V_t/V_{t-1} - 1 with V_{-1} = init_cash (so the first row's return "
                       "includes that day's fees); V_t = cash_t + Σ position_j·close_j after the row's orders",
            "n_orders": "filled orders (records); a target equal to the current holding gives no order",
            "verification": "generate.py re-implements these rules in plain numpy (backtest_reference) and asserts "
                            "the daily portfolio values match vectorbt to < 1e-9 relative "
                            "(reference_reimplementation_max_rel_value_diff)",
        },
        "with_fees": with_fees,
        "no_fees": no_fees,
    })


# ----------------------------------------------------------------------------------------------------------
# i. robust_zscore.json
# ----------------------------------------------------------------------------------------------------------
def fixture_robust_zscore():
    from scipy import stats

    prices, rets = window_returns(LARGE_CAPS, columns=["AAPL"])
    x = rets["AAPL"].to_numpy()

    def robust(v):
        med = float(np.median(v))
        mad_raw = float(stats.median_abs_deviation(v, scale=1.0))
        mad_n = float(stats.median_abs_deviation(v, scale="normal"))
        z = (v - med) / mad_n
        return {
            "median": med,
            "mad_raw": mad_raw,
            "mad_normal": mad_n,
            "z": z,
            "n_abs_z_gt_3_5": int((np.abs(z) > 3.5).sum()),
            "indices_abs_z_gt_3_5": np.where(np.abs(z) > 3.5)[0],
        }

    small = np.array([1.0, 2.0, 3.0, 4.0, 100.0, 2.5, 3.5, -7.0])

    write_fixture("robust_zscore.json", {
        "description": "Median/MAD robust z-scores with scipy.stats.median_abs_deviation(scale='normal').",
        "inputs": returns_input_spec(LARGE_CAPS, prices, rets),
        "conventions": {
            "formula": "z_i = (x_i - median(x)) / MAD_n,  MAD_n = median(|x - median(x)|)·k",
            "k": "scale='normal' computes MAD_n = median(|x - median(x)|) / 0.6744897501960817 (the literal "
                 "special.ndtri(0.75) in scipy; a DIVISION, which can differ in the last bit from multiplying by "
                 f"its reciprocal {1 / 0.6744897501960817!r}); this is NOT the rounded 1.4826 "
                 "(relative difference ~1.5e-6)",
            "median": "numpy median: mean of the two middle order statistics for even n",
            "scale_divisor_used": 0.6744897501960817,
            "scale_factor_equivalent": 1 / 0.6744897501960817,
            "rounded_convention_1_4826": 1.4826,
        },
        "aapl_daily_returns": robust(x),
        "small_embedded": {"x": small, **robust(small)},
    })


# ----------------------------------------------------------------------------------------------------------
# Features: the derived series GET /quant/features/{key}/values serves, as pandas users write them.
# ----------------------------------------------------------------------------------------------------------
FEATURE_EXPRESSIONS = {
    "return_1d": lambda p: p.pct_change(fill_method=None),
    "log_return_1d": lambda p: np.log(p).diff(),
    "volatility_21d": lambda p: p.pct_change(fill_method=None).rolling(21).std() * np.sqrt(252),
    "momentum_12_1": lambda p: p.shift(21) / p.shift(252) - 1,
    "drawdown": lambda p: p / p.cummax() - 1,
}


def fixture_features():
    """Each feature on the whole series of two instruments (a stock's adjusted close and the S&P 500 level),
    computed by pandas; the fixture keeps the first 300 dates (where the windows fill) and the last 300."""
    series = {
        "AAPL": (LARGE_CAPS, "AAPL"),
        "SPX": (SP500, "SP500"),
    }
    out = {}
    for name, (path, column) in series.items():
        p = read_daily(path)[column].dropna()
        keep = list(range(300)) + list(range(len(p) - 300, len(p)))
        values = {}
        for key, expr in FEATURE_EXPRESSIONS.items():
            f = expr(p)
            values[key] = [py(f.iloc[i]) for i in keep]
        out[name] = {
            "file": path,
            "column": column,
            "rows": len(p),
            "dates": [str(p.index[i].date()) for i in keep],
            "positions": keep,
            "values": values,
        }
    write_fixture("features.json", {
        "conventions": {k: v for k, v in {
            "return_1d": "p.pct_change(fill_method=None)",
            "log_return_1d": "np.log(p).diff()",
            "volatility_21d": "p.pct_change(fill_method=None).rolling(21).std() * np.sqrt(252)",
            "momentum_12_1": "p.shift(21) / p.shift(252) - 1",
            "drawdown": "p / p.cummax() - 1",
        }.items()},
        "series": out,
    })


# ----------------------------------------------------------------------------------------------------------
# ols_factors.json: Fama-French three-factor regressions of monthly excess returns (statsmodels OLS)
# ----------------------------------------------------------------------------------------------------------
FF3 = "data/economics/fama_french_3factor_monthly.csv"
FF3_FACTORS = ["Mkt-RF", "SMB", "HML"]
OLS_FIRST_MONTH, OLS_LAST_MONTH = "2009-01", "2018-11"  # the factor file ends 2018-11
OLS_WITH_INTERCEPT = ["AAPL", "JPM", "XOM"]
OLS_WITHOUT_INTERCEPT = ["MSFT"]

# A small embedded case, and the same y on a design whose columns span the constant vector without an explicit
# constant column (two complementary dummies): statsmodels then counts an implicit constant (k_constant = 1)
# and reports the centred R².
OLS_HAND_Y = [3.1, 2.0, 4.4, 7.9, 3.3, 8.1, 7.2, 12.6]
OLS_HAND_X1 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
OLS_HAND_X2 = [2.5, -1.0, 0.5, 3.0, -2.0, 1.5, 0.0, 4.0]
OLS_HAND_D1 = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]


def ols_monthly_excess_returns():
    """Month-end prices -> simple monthly returns of the large caps, aligned with the FF3 factors (/100)."""
    tickers = OLS_WITH_INTERCEPT + OLS_WITHOUT_INTERCEPT
    # The month before the first return only seeds: daily rows from its first day to the last month's end.
    seed_month = (pd.Period(OLS_FIRST_MONTH, "M") - 1)
    first_day = str(seed_month.start_time.date())
    last_day = str(pd.Period(OLS_LAST_MONTH, "M").end_time.date())
    daily = read_daily(LARGE_CAPS).loc[first_day:last_day, tickers]
    assert not daily.isna().any().any()
    month_end = daily.groupby(daily.index.to_period("M")).tail(1)
    mrets = month_end.pct_change(fill_method=None).iloc[1:]
    months = [d.strftime("%Y%m") for d in mrets.index]
    ff = pd.read_csv(os.path.join(ROOT, FF3), dtype={"Date": str}).set_index("Date")
    assert set(months) <= set(ff.index), "a month without factors"
    ff = ff.loc[months]
    assert months[0] == OLS_FIRST_MONTH.replace("-", "") and months[-1] == OLS_LAST_MONTH.replace("-", "")
    assert len(months) == 119
    factors = {f: ff[f].to_numpy(dtype=float) / 100 for f in FF3_FACTORS}
    rf = ff["RF"].to_numpy(dtype=float) / 100
    excess = {t: mrets[t].to_numpy() - rf for t in tickers}
    return {
        "first_day": first_day,
        "last_day": last_day,
        "month_end_dates": [str(d.date()) for d in mrets.index],
        "months": months,
        "stock_returns": {t: mrets[t].to_numpy() for t in tickers},
        "rf": rf,
        "factors": factors,
        "excess": excess,
    }


def statsmodels_ols(y, X, names):
    """The numbers a statsmodels OLS fit reports, plus its 'qr' fit and a numpy lstsq cross-check."""
    import statsmodels.api as sm

    y = np.asarray(y, dtype=float)
    X = np.asarray(X, dtype=float)
    res = sm.OLS(y, X).fit()  # method='pinv' (the default), classical nonrobust covariance
    qr = sm.OLS(y, X).fit(method="qr")
    beta, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)
    assert rank == X.shape[1]
    assert np.allclose(beta, res.params, rtol=1e-12, atol=1e-14), "lstsq disagrees with statsmodels"

    def rel(a, b):
        a, b = np.asarray(a), np.asarray(b)
        return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))

    resid = y - X @ res.params
    return {
        "param_names": names,
        "params": res.params,
        "bse": res.bse,
        "tvalues": res.tvalues,
        "rsquared": res.rsquared,
        "rsquared_adj": res.rsquared_adj,
        "nobs": res.nobs,
        "df_resid": res.df_resid,
        "df_model": res.df_model,
        "k_constant": int(res.model.k_constant),
        "ssr": res.ssr,
        "scale": res.scale,
        "residual_std_error": math.sqrt(res.scale),
        "centered_tss": res.centered_tss,
        "uncentered_tss": res.uncentered_tss,
        "condition_number": res.condition_number,
        "resid_sum": float(resid.sum()),
        "method_qr": {
            "params": qr.params,
            "bse": qr.bse,
            "tvalues": qr.tvalues,
            "max_rel_diff_to_pinv": {
                "params": rel(qr.params, res.params),
                "bse": rel(qr.bse, res.bse),
                "tvalues": rel(qr.tvalues, res.tvalues),
                "rsquared": rel(qr.rsquared, res.rsquared),
            },
        },
    }


def fixture_ols_factors():
    import statsmodels.api as sm

    d = ols_monthly_excess_returns()
    X3 = np.column_stack([d["factors"][f] for f in FF3_FACTORS])
    cases = {}
    for t in OLS_WITH_INTERCEPT:
        y = d["excess"][t]
        X = sm.add_constant(X3)
        assert X.shape[1] == 4, "add_constant skipped the constant"
        cases[f"{t}_ff3"] = {
            "intercept": True,
            "regressors": FF3_FACTORS,
            "y": y,
            "x": [d["factors"][f] for f in FF3_FACTORS],
            "statsmodels": statsmodels_ols(y, X, ["const"] + FF3_FACTORS),
        }
    for t in OLS_WITHOUT_INTERCEPT:
        y = d["excess"][t]
        sm_res = statsmodels_ols(y, X3, FF3_FACTORS)
        assert sm_res["k_constant"] == 0, "the factors alone must not span a constant"
        cases[f"{t}_ff3_no_intercept"] = {
            "intercept": False,
            "regressors": FF3_FACTORS,
            "y": y,
            "x": [d["factors"][f] for f in FF3_FACTORS],
            "statsmodels": sm_res,
        }

    hy, x1, x2, d1 = (np.array(v) for v in (OLS_HAND_Y, OLS_HAND_X1, OLS_HAND_X2, OLS_HAND_D1))
    cases["hand"] = {
        "intercept": True,
        "regressors": ["x1", "x2"],
        "y": hy,
        "x": [x1, x2],
        "statsmodels": statsmodels_ols(hy, sm.add_constant(np.column_stack([x1, x2])), ["const", "x1", "x2"]),
    }
    d2 = 1.0 - d1
    implicit = statsmodels_ols(hy, np.column_stack([d1, d2, x1]), ["d1", "d2", "x1"])
    assert implicit["k_constant"] == 1, "statsmodels should find the implicit constant"
    cases["hand_implicit_constant"] = {
        "intercept": False,
        "regressors": ["d1", "d2", "x1"],
        "y": hy,
        "x": [d1, d2, x1],
        "statsmodels": implicit,
    }

    # statsmodels does not refuse a rank-deficient design: pinv returns the minimum-norm solution and the
    # degrees of freedom count the rank. fiscus-quant refuses these designs; the probe documents the difference.
    probes = {}
    for name, X in {
        "constant_regressor_with_intercept": sm.add_constant(np.column_stack([x1, np.full(8, 0.25)]),
                                                             has_constant="add"),
        "identical_columns": sm.add_constant(np.column_stack([x1, x1])),
    }.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # statsmodels warns that the design is rank-deficient: the point
            res = sm.OLS(hy, X).fit()
        probes[name] = {
            "x_columns_with_constant_first": X.T,
            "y": hy,
            "statsmodels_rank": int(np.linalg.matrix_rank(X)),
            "statsmodels_df_model": res.df_model,
            "statsmodels_df_resid": res.df_resid,
            "statsmodels_params_min_norm": res.params,
        }

    write_fixture("ols_factors.json", {
        "description": "Ordinary least squares with statsmodels 0.15 sm.OLS(y, X).fit() (method 'pinv', classical "
                       "nonrobust covariance): Fama-French three-factor regressions of monthly excess returns of "
                       f"{', '.join(OLS_WITH_INTERCEPT)} with an intercept (sm.add_constant) and of "
                       f"{', '.join(OLS_WITHOUT_INTERCEPT)} without one, over {OLS_FIRST_MONTH}..{OLS_LAST_MONTH}; "
                       "a small embedded case; the same y on two complementary dummies and x1 without an "
                       "explicit constant (statsmodels' implicit constant); a probe of rank-deficient designs.",
        "inputs": {
            "files": [LARGE_CAPS, FF3],
            "construction": {
                "prices": f"{LARGE_CAPS}: daily adjusted closes with {d['first_day']} <= Date <= {d['last_day']}; "
                          "of each calendar month the last row (month_end_dates); the first month only seeds",
                "stock_returns": "simple monthly returns p_m / p_(m-1) - 1 between consecutive month ends",
                "factors": f"{FF3}: rows whose Date (yyyymm) is one of months; Mkt-RF, SMB, HML and RF divided by "
                           "100 (the file is in per cent)",
                "y": "stock return - RF/100, month by month",
                "x": "one vector per regressor in the order of 'regressors'; the intercept column of ones is not "
                     "embedded (it is prepended by sm.add_constant when 'intercept' is true)",
            },
            "months": d["months"],
            "month_end_dates": d["month_end_dates"],
            "stock_returns": d["stock_returns"],
            "rf": d["rf"],
            "factors": d["factors"],
        },
        "conventions": {
            "coefficients": "params, the intercept ('const') first when there is one",
            "std_errors": "bse = sqrt(diag(scale·(X'X)^-1)), scale = ssr/df_resid (classical, not robust)",
            "tvalues": "params / bse",
            "rsquared": "1 - ssr/centered_tss when the model has a constant (k_constant = 1), else "
                        "1 - ssr/uncentered_tss with uncentered_tss = y'y",
            "rsquared_adj": "1 - (nobs - k_constant)/df_resid · (1 - rsquared)",
            "k_constant": "1 when X has a non-zero constant column, or (no constant column) when adding a column "
                          "of ones does not raise the rank of X (an implicit constant, e.g. dummies summing to "
                          "one); 0 otherwise",
            "df_resid": "nobs - rank(X)",
            "residual_std_error": "sqrt(scale)",
            "method_qr": "the same model fitted with method='qr'; max_rel_diff_to_pinv is statsmodels' own "
                         "agreement between its two solvers",
        },
        "cases": cases,
        "rank_deficient_probe": probes,
    })


# ----------------------------------------------------------------------------------------------------------
# demo_book.json: the demo investment book's risk, benchmark comparison, factor exposures and loss harvest,
# computed the way the Fiscus API defines them (GET /investment/risk, GET /benchmarking/comparisons,
# POST /investment/portfolios/{id}/tax-harvest), so the API tests compare against peers.
# ----------------------------------------------------------------------------------------------------------
DEMO_LOTS = "data/investment/sample_lots.csv"
DEMO_PORTFOLIO = "GROWTH"
DEMO_AS_OF = "2022-12-28"          # the valuation date: the last row of the price files
DEMO_RISK_DAYS = 365               # GET /investment/risk default lookback_days
DEMO_BENCH_DAYS = 3 * 365          # GET /benchmarking/comparisons default window
DEMO_FACTOR_MONTHS = 60
DEMO_FACTOR_LEAD_DAYS = 10         # price rows from this many days before the first factor month
DEMO_VAR_CUTOFF = 0.05


def _days_before(date_text, days):
    return str((pd.Timestamp(date_text) - pd.Timedelta(days=days)).date())


def _read_text_table(path):
    """A CSV as its text cells (the Rust side parses the observed decimal text itself)."""
    import csv

    with open(os.path.join(ROOT, path), newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def _cents(text):
    """Decimal text -> integer cents, rounded half to even on the decimal digits (not on a float)."""
    from decimal import ROUND_HALF_EVEN, Decimal

    return int((Decimal(text) * 100).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _one_year_later(d):
    """The first anniversary; an acquisition on 29 February has its anniversary on 28 February."""
    try:
        return d.replace(year=d.year + 1)
    except ValueError:
        return d.replace(year=d.year + 1, day=28)


def fixture_demo_book():
    import datetime as dt
    from decimal import Decimal

    import empyrical as ep
    import statsmodels.api as sm

    # ---- the book: GROWTH's lots held on the valuation date ----
    header, rows = _read_text_table(DEMO_LOTS)
    assert header == ["portfolio", "lot", "symbol", "acquired", "quantity", "cost", "currency"], header
    lots = [dict(zip(header, r)) for r in rows]
    lots = [lt for lt in lots if lt["portfolio"] == DEMO_PORTFOLIO and lt["acquired"] <= DEMO_AS_OF]
    assert lots and all(lt["currency"] == "USD" for lt in lots)
    symbols = sorted({lt["symbol"] for lt in lots})

    # ---- prices as text, then as f64 (Python float() and Rust str::parse are both correctly rounded) ----
    pheader, prows = _read_text_table(LARGE_CAPS)
    assert pheader[0] == "Date"
    dates = [r[0] for r in prows]
    assert dates == sorted(dates) and len(set(dates)) == len(dates)
    assert dates[-1] == DEMO_AS_OF, "the valuation date must be the price file's last row"
    col = {c: i for i, c in enumerate(pheader)}
    price_text = {s: [r[col[s]] for r in prows] for s in symbols}
    prices = pd.DataFrame(
        {s: [float(t) if t != "" else np.nan for t in price_text[s]] for s in symbols},
        index=pd.DatetimeIndex(pd.to_datetime(dates)),
    )
    bheader, brows = _read_text_table(SP500)
    assert bheader == ["Date", "SP500"]
    bench_prices = pd.Series([float(r[1]) if r[1] != "" else np.nan for r in brows],
                             index=pd.DatetimeIndex(pd.to_datetime([r[0] for r in brows])), name="SP500")

    # ---- marks, market values, weights ----
    marks = {s: {"date": DEMO_AS_OF, "price_text": price_text[s][-1], "price_cents": _cents(price_text[s][-1])}
             for s in symbols}
    qty = {s: sum(Decimal(lt["quantity"]) for lt in lots if lt["symbol"] == s) for s in symbols}
    assert all(q == q.to_integral_value() for q in qty.values()), "whole shares: quantity x cents is exact"
    mv = {s: int(qty[s]) * marks[s]["price_cents"] for s in symbols}
    total = sum(mv.values())
    w = {s: mv[s] / total for s in symbols}  # int / int: correctly rounded, = f64(mv)/f64(total) below 2^53
    assert total < 2 ** 53
    wv = np.array([w[s] for s in symbols])

    def portfolio_returns(rets):
        """r_t = Σ_i w_i r_i,t summed in symbol order, one term at a time (as the API's iterator does)."""
        m = rets[symbols].to_numpy()
        out = np.empty(len(m))
        for t in range(len(m)):
            acc = 0.0
            for i in range(len(symbols)):
                acc += float(m[t, i]) * float(wv[i])
            out[t] = acc
        return pd.Series(out, index=rets.index)

    def simple_returns(frame):
        a = frame.to_numpy(dtype=float)
        return pd.DataFrame(a[1:] / a[:-1] - 1.0, index=frame.index[1:], columns=frame.columns)

    def window_spec(frame, rets, start, end, note):
        return {
            "selection": f"rows with {start} <= Date <= {end} (inclusive) {note}",
            "first_price_date": str(frame.index[0].date()),
            "last_price_date": str(frame.index[-1].date()),
            "price_rows": len(frame),
            "first_return_date": str(rets.index[0].date()),
            "last_return_date": str(rets.index[-1].date()),
            "returns": len(rets),
        }

    # ---- 1. risk over the last 365 calendar days ----
    risk_start = _days_before(DEMO_AS_OF, DEMO_RISK_DAYS)
    rp = prices.loc[risk_start:DEMO_AS_OF]
    rp_kept = rp.dropna()
    assert len(rp_kept) == len(rp), "a holding lacks a price in the risk window"
    rr = simple_returns(rp_kept)
    r = portfolio_returns(rr)
    ranked = sorted(symbols, key=lambda s: (-w[s], s))
    herfindahl = 0.0
    for s in ranked:
        herfindahl += w[s] * w[s]
    top5 = 0.0
    for s in ranked[:5]:
        top5 += w[s]
    risk = {
        "window": window_spec(rp_kept, rr, risk_start, DEMO_AS_OF,
                              "on which every holding has a price; the first row only seeds"),
        "observations": len(r),
        "var_cutoff": DEMO_VAR_CUTOFF,
        "annual_volatility": ep.annual_volatility(r, period="daily"),
        "value_at_risk": ep.value_at_risk(r, cutoff=DEMO_VAR_CUTOFF),
        "value_at_risk_numpy": float(np.percentile(r.to_numpy(), 100 * DEMO_VAR_CUTOFF, method="linear")),
        "conditional_value_at_risk": ep.conditional_value_at_risk(r, cutoff=DEMO_VAR_CUTOFF),
        "max_drawdown": ep.max_drawdown(r),
        "annual_return": ep.annual_return(r, period="daily"),
        "concentration": {
            "herfindahl": herfindahl,
            "effective_holdings": 1.0 / herfindahl,
            "largest_symbol": ranked[0],
            "largest_weight": w[ranked[0]],
            "top_five_weight": top5,
        },
        "portfolio_returns": r.to_numpy(),
        "checks": {"sum_of_portfolio_returns": float(r.sum()),
                   "sum_of_returns_by_symbol": {s: float(rr[s].sum()) for s in symbols}},
    }
    assert risk["value_at_risk"] == risk["value_at_risk_numpy"]

    # ---- 2. against the S&P 500 over the last 3·365 calendar days ----
    bench_start = _days_before(DEMO_AS_OF, DEMO_BENCH_DAYS)
    bp = prices.loc[bench_start:DEMO_AS_OF].join(bench_prices.loc[bench_start:DEMO_AS_OF], how="inner")
    bp_kept = bp.dropna()
    br = simple_returns(bp_kept)
    rb_p = portfolio_returns(br)
    rb_b = br["SP500"]
    active = rb_p.to_numpy() - rb_b.to_numpy()
    a_mean = float(np.mean(active))
    a_std = float(np.std(active, ddof=1))
    excess_sharpe_np = a_mean / a_std
    alpha, beta = ep.alpha_beta(rb_p, rb_b, risk_free=0.0, period="daily")
    with np.errstate(divide="ignore", invalid="ignore"):
        benchmark = {
            "window": window_spec(bp_kept, br, bench_start, DEMO_AS_OF,
                                  f"present in both {LARGE_CAPS} and {SP500} with a price for every holding and "
                                  "the index; the first row only seeds"),
            "rows_dropped_for_missing_dates_or_prices": int(len(prices.loc[bench_start:DEMO_AS_OF])
                                                            - len(bp_kept)),
            "observations": len(rb_p),
            "risk_free": 0.0,
            "tracking_error": a_std * math.sqrt(252),
            "information_ratio": excess_sharpe_np * math.sqrt(252),
            "excess_sharpe": ep.excess_sharpe(rb_p, rb_b),
            "active_mean": a_mean,
            "active_std_ddof1": a_std,
            "alpha": alpha,
            "beta": beta,
            "up_capture": ep.up_capture(rb_p, rb_b, period="daily"),
            "down_capture": ep.down_capture(rb_p, rb_b, period="daily"),
            "up_down_capture": ep.up_down_capture(rb_p, rb_b, period="daily"),
            "portfolio_annual_return": ep.annual_return(rb_p, period="daily"),
            "benchmark_annual_return": ep.annual_return(rb_b, period="daily"),
            "portfolio_annual_volatility": ep.annual_volatility(rb_p, period="daily"),
            "benchmark_annual_volatility": ep.annual_volatility(rb_b, period="daily"),
            "benchmark_up_days": int((rb_b > 0).sum()),
            "benchmark_down_days": int((rb_b < 0).sum()),
            "benchmark_zero_days": int((rb_b == 0).sum()),
            "portfolio_returns": rb_p.to_numpy(),
            "benchmark_returns": rb_b.to_numpy(),
            "checks": {"sum_of_portfolio_returns": float(rb_p.sum()),
                       "sum_of_benchmark_returns": float(rb_b.sum())},
        }
    assert abs(benchmark["excess_sharpe"] - excess_sharpe_np) < 1e-12

    # ---- 3. Fama-French three-factor exposures, monthly ----
    ff = pd.read_csv(os.path.join(ROOT, FF3), dtype=str).set_index("Date")
    as_of_month = DEMO_AS_OF[:7].replace("-", "")
    months_all = sorted(m for m in ff.index if m <= as_of_month)
    months = months_all[-DEMO_FACTOR_MONTHS:]
    first_m, last_m = months[0], months[-1]
    first_day = f"{first_m[:4]}-{first_m[4:]}-01"
    f_start = _days_before(first_day, DEMO_FACTOR_LEAD_DAYS)
    f_end = str(pd.Period(f"{last_m[:4]}-{last_m[4:]}", "M").end_time.date())
    fp = prices.loc[f_start:f_end].dropna()
    assert len(fp) == len(prices.loc[f_start:f_end]), "a holding lacks a price in the factor window"
    fr = simple_returns(fp)
    fret = portfolio_returns(fr)
    growth = {}
    days_in_month = {}
    for d, x in fret.items():
        m = d.strftime("%Y%m")
        if m < first_m:
            continue
        growth[m] = growth.get(m, 1.0) * (1.0 + x)
        days_in_month[m] = days_in_month.get(m, 0) + 1
    assert sorted(growth) == months, "every factor month has trading days"
    seed_row = fp.index[fp.index < pd.Timestamp(first_day)][-1]
    assert seed_row.strftime("%Y%m") < first_m
    mret = np.array([growth[m] - 1.0 for m in months])
    rf = np.array([float(ff.loc[m, "RF"]) / 100 for m in months])
    fac = {f: np.array([float(ff.loc[m, f]) / 100 for m in months]) for f in FF3_FACTORS}
    y = mret - rf
    X = sm.add_constant(np.column_stack([fac[f] for f in FF3_FACTORS]))
    assert X.shape[1] == 4
    fit = statsmodels_ols(y, X, ["const"] + FF3_FACTORS)
    factors = {
        "model": "fama_french_3",
        "months": [f"{m[:4]}-{m[4:]}" for m in months],
        "observations": len(months),
        "price_rows": {"first_date": str(fp.index[0].date()), "last_date": str(fp.index[-1].date()),
                       "count": len(fp), "seed_row_of_first_month": str(seed_row.date())},
        "trading_days_by_month": [days_in_month[m] for m in months],
        "portfolio_monthly_returns": mret,
        "rf": rf,
        "factors": fac,
        "y": y,
        "statsmodels": fit,
    }

    # ---- 4. tax-loss harvest on the valuation date ----
    sold = dt.date.fromisoformat(DEMO_AS_OF)
    per_lot = []
    for lt in lots:
        acquired = dt.date.fromisoformat(lt["acquired"])
        q = Decimal(lt["quantity"])
        cost = Decimal(lt["cost"]) * 100
        assert cost == cost.to_integral_value(), lt
        value = int(q) * marks[lt["symbol"]]["price_cents"]
        gain = value - int(cost)
        per_lot.append({
            "lot": lt["lot"],
            "symbol": lt["symbol"],
            "acquired": lt["acquired"],
            "quantity": lt["quantity"],
            "cost_cents": int(cost),
            "market_value_cents": value,
            "unrealised_gain_cents": gain,
            "loss_cents": -gain if gain < 0 else 0,
            "term": "long" if sold > _one_year_later(acquired) else "short",
            "holding_days": (sold - acquired).days,
        })
    harvest = sorted((x for x in per_lot if x["loss_cents"] > 0), key=lambda x: (-x["loss_cents"], x["lot"]))

    write_fixture("demo_book.json", {
        "description": (
            f"The demo investment book (portfolio {DEMO_PORTFOLIO} of {DEMO_LOTS}, all USD) valued on {DEMO_AS_OF} "
            f"(the last row of {LARGE_CAPS}), computed as the Fiscus API defines its risk report, benchmark "
            "comparison, factor exposures and loss harvest, with empyrical-reloaded, numpy and statsmodels. "
            f"Marks: each held symbol's adjusted close on {DEMO_AS_OF}, its decimal text rounded half to even to "
            "integer cents per share. Holdings: lots with acquired <= the valuation date, summed by symbol; "
            "market value = quantity x mark cents (integer cents); weight w_i = MV_i / sum MV (cash excluded), "
            "constant over every window (historical simulation on current holdings). Daily returns are simple, "
            "p_t/p_(t-1) - 1 between consecutive selected rows (the first row only seeds); the portfolio's daily "
            "return is sum_i w_i r_i,t, summed in symbol order. Risk: rows with "
            f"{risk_start} <= Date <= {DEMO_AS_OF} (365 calendar days before the valuation date, inclusive); "
            "annual_volatility = empyrical.annual_volatility (std ddof 1 x sqrt 252); value_at_risk = "
            "empyrical.value_at_risk(r, cutoff=0.05) = numpy percentile 5, linear interpolation; "
            "conditional_value_at_risk = empyrical.conditional_value_at_risk(r, cutoff=0.05) (mean of the "
            "floor((n-1)*0.05)+1 smallest); max_drawdown = empyrical.max_drawdown (start value prepended, a "
            "first-day loss counts); annual_return = empyrical.annual_return ((prod(1+r))^(252/n) - 1); "
            "herfindahl = sum w_i^2 (summed largest weight first). Benchmark: rows with "
            f"{bench_start} <= Date <= {DEMO_AS_OF} (3 x 365 days) on dates present in both {LARGE_CAPS} and "
            f"{SP500}; benchmark = SP500 simple returns on the same dates; active a = r - b; tracking_error = "
            "std(a, ddof=1) x sqrt(252); information_ratio = (mean(a)/std(a, ddof=1)) x sqrt(252); "
            "excess_sharpe = empyrical.excess_sharpe(r, b) (not annualised); alpha, beta = "
            "empyrical.alpha_beta(r, b, risk_free=0.0, period='daily') (alpha = (1 + mean daily alpha)^252 - 1); "
            "up/down/up_down capture = empyrical (period='daily'; each subset annualised over its own length; "
            "b = 0 days in neither); annual returns and volatilities by empyrical. Factors: "
            f"{FF3} (Date yyyymm; Mkt-RF, SMB, HML, RF in per cent, divided by 100); the "
            f"{DEMO_FACTOR_MONTHS} newest factor months on or before {DEMO_AS_OF[:7]} "
            f"({factors['months'][0]}..{factors['months'][-1]}; the file ends 2018-11); daily portfolio returns "
            f"from price rows {f_start} ({DEMO_FACTOR_LEAD_DAYS} days before the first month) to {f_end}, so the "
            "first month's first return is taken from the last row of the previous month and every month is "
            "whole; monthly return = prod(1 + r_t) - 1 over the month's return dates (compounded in date order); "
            "y = monthly return - RF; statsmodels 0.15 sm.OLS(y, sm.add_constant([Mkt-RF, SMB, HML])).fit() "
            "(pinv, classical standard errors; params const first). Harvest: sale on the valuation date; per lot "
            "market value = quantity x mark cents, cost = the cost column in cents, loss = cost - market value "
            "where positive; term long when the sale date is after the first anniversary of acquisition (an "
            "acquisition on 29 February has its anniversary on 28 February), else short; lots with a loss, "
            "largest first. Wash sales are not weighed here."
        ),
        "inputs": {
            "lots": DEMO_LOTS,
            "prices": LARGE_CAPS,
            "benchmark": SP500,
            "factors": FF3,
            "portfolio": DEMO_PORTFOLIO,
            "valuation_date": DEMO_AS_OF,
            "currency": "USD",
            "risk_window": {"start": risk_start, "end": DEMO_AS_OF, "calendar_days": DEMO_RISK_DAYS},
            "benchmark_window": {"start": bench_start, "end": DEMO_AS_OF, "calendar_days": DEMO_BENCH_DAYS},
            "factor_window": {"first_month": factors["months"][0], "last_month": factors["months"][-1],
                              "months": DEMO_FACTOR_MONTHS, "price_rows_from": f_start,
                              "price_rows_to": f_end},
            "lots_held": [{k: lt[k] for k in ("lot", "symbol", "acquired", "quantity", "cost")} for lt in lots],
        },
        "book": {
            "symbols": symbols,
            "marks": marks,
            "holdings": [{"symbol": s, "quantity": str(qty[s]), "mark_cents": marks[s]["price_cents"],
                          "market_value_cents": mv[s], "weight": w[s]} for s in symbols],
            "holdings_value_cents": total,
        },
        "risk": risk,
        "benchmark": benchmark,
        "factor_exposures": factors,
        "harvest": {"as_of": DEMO_AS_OF, "candidates": harvest, "all_lots": per_lot},
    })


# ----------------------------------------------------------------------------------------------------------
FIXTURE_FUNCS = {
    "optimisation_20": fixture_optimisation,
    "covariance": fixture_covariance,
    "risk_stats": fixture_risk_stats,
    "benchmark_stats": fixture_benchmark_stats,
    "holt_winters": fixture_holt_winters,
    "arima": fixture_arima,
    "monte_carlo": fixture_monte_carlo,
    "isolation_forest": fixture_isolation_forest,
    "backtest": fixture_backtest,
    "robust_zscore": fixture_robust_zscore,
    "features": fixture_features,
    "ols_factors": fixture_ols_factors,
    "demo_book": fixture_demo_book,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated subset of: " + ", ".join(FIXTURE_FUNCS))
    args = ap.parse_args()
    names = list(FIXTURE_FUNCS) if not args.only else [s.strip() for s in args.only.split(",")]
    for name in names:
        print(f"[{name}]")
        FIXTURE_FUNCS[name]()


if __name__ == "__main__":
    main()
