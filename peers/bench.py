#!/usr/bin/env python3
"""Time the peer libraries on deterministic inputs that a Rust benchmark can read back.

Usage:  python3 peers/bench.py --out DIR/peers_bench.json [--quick]

Runs inside peers/.venv (created/installed on first use, like generate.py). Writes every input it times to
DIR/peers_bench_inputs/ (CSV, full float precision) and prints (and writes to --out) a JSON object:

  {"timings": {name: best_seconds}, "inputs": {name: {files, parameters}}, "details": {...},
   "peers": {...}, "machine": {...}}

Each timing is the best (minimum) wall-clock time of several runs (time.perf_counter) after one untimed
warm-up run (so numba compilation, imports and caches are excluded). BLAS threading is left at its default
(the machine's cores); `machine` records the core count. Runtime is about 1-2 minutes on 2 cores.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep peers/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _bootstrap  # noqa: E402

_bootstrap.ensure_venv(__file__, single_thread=False)

import argparse  # noqa: E402
import importlib.metadata as md  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = _bootstrap.REPO_ROOT
LARGE_CAPS = "data/market/us_large_caps_20_daily_adjclose.csv"
EMPLOYMENT = "data/economics/us_employment_monthly_2006_2015.csv"
WIN_START, WIN_END = "2018-01-02", "2022-12-28"


def blas_info():
    """The BLAS numpy loaded and the kernel it chose (threadpoolctl), e.g. OpenBLAS 'SkylakeX' or 'Prescott'."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    return [dict({k: v for k, v in d.items() if k in ("internal_api", "version", "architecture", "num_threads",
                                                       "threading_layer")},
                 library=d.get("filepath", "").split("site-packages/")[-1]) for d in threadpool_info()]


def best_of(fn, runs):
    fn()  # warm-up (JIT, caches)
    times = []
    out = None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), times, out


def write_csv(df, path):
    df.to_csv(path, float_format="%.17g")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="JSON file to write; inputs go to <dir>/peers_bench_inputs/")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (smoke test)")
    args = ap.parse_args()

    out_path = os.path.abspath(args.out)
    in_dir = os.path.join(os.path.dirname(out_path), "peers_bench_inputs")
    os.makedirs(in_dir, exist_ok=True)
    rel = lambda p: os.path.relpath(p, os.path.dirname(out_path))  # noqa: E731
    reps = (lambda n: max(1, n // 3)) if args.quick else (lambda n: n)

    timings, inputs, details = {}, {}, {}

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    # ------------------------------------------------------------------------------------------------------
    # 1. PyPortfolioOpt end to end: returns matrix -> mu, S -> solve
    # ------------------------------------------------------------------------------------------------------
    from pypfopt import EfficientFrontier, expected_returns, risk_models
    from pypfopt.exceptions import OptimizationError

    prices = pd.read_csv(os.path.join(ROOT, LARGE_CAPS), parse_dates=["Date"], index_col="Date")
    prices = prices.loc[WIN_START:WIN_END]
    r20 = prices.pct_change(fill_method=None).iloc[1:]

    def one_factor_returns(n_assets, n_days=1260, seed=None):
        rng = np.random.default_rng(seed)
        beta = rng.uniform(0.5, 1.5, n_assets)
        alpha = rng.normal(0.0002, 0.0003, n_assets)
        idio = rng.uniform(0.01, 0.03, n_assets)
        f = rng.normal(0.0004, 0.01, n_days)
        eps = rng.standard_normal((n_days, n_assets)) * idio
        R = alpha + np.outer(f, beta) + eps
        idx = pd.bdate_range("2018-01-01", periods=n_days, name="Date")
        return pd.DataFrame(R, index=idx, columns=[f"A{i:03d}" for i in range(n_assets)])

    matrices = {20: r20}
    for n_assets in (100, 500):
        matrices[n_assets] = one_factor_returns(n_assets, seed=1000 + n_assets)

    for n_assets, R in matrices.items():
        path = write_csv(R, os.path.join(in_dir, f"returns_{n_assets}.csv"))
        desc = (f"simple daily returns of the 20 large caps, {LARGE_CAPS} prices {WIN_START}..{WIN_END}, "
                f"{len(R)} rows" if n_assets == 20 else
                f"synthetic one-factor model, {len(R)} days: rng = np.random.default_rng({1000 + n_assets}); "
                "beta = rng.uniform(0.5, 1.5, n); alpha = rng.normal(2e-4, 3e-4, n); idio = rng.uniform(0.01, "
                "0.03, n); f = rng.normal(4e-4, 0.01, days); eps = rng.standard_normal((days, n))*idio; "
                "R = alpha + outer(f, beta) + eps")
        for method in ("min_volatility", "max_sharpe"):
            for solver in (None, "CLARABEL"):
                def run(R=R, method=method, solver=solver):
                    mu = expected_returns.mean_historical_return(R, returns_data=True)
                    S = risk_models.sample_cov(R, returns_data=True)
                    ef = EfficientFrontier(mu, S, weight_bounds=(0, 1), solver=solver)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        getattr(ef, method)()
                    return ef
                runs = reps(7 if n_assets <= 100 else 3)
                name = f"pypfopt_{method}_{n_assets}" + ("" if solver is None else "_clarabel")
                try:
                    best, all_t, ef = best_of(run, runs)
                except OptimizationError as exc:
                    t0 = time.perf_counter()
                    try:
                        run()
                    except OptimizationError:
                        pass
                    failed_after = time.perf_counter() - t0
                    details[name] = {"failed": str(exc), "seconds_until_failure": failed_after,
                                     "note": "PyPortfolioOpt's default solver choice did not reach optimality; "
                                             "no timing recorded"}
                    inputs[name] = {"files": [rel(path)], "description": desc}
                    log(f"{name}: FAILED after {failed_after * 1e3:.1f} ms: {exc}")
                    continue
                used = ef._opt.solver_stats.solver_name
                timings[name] = best
                inputs[name] = {"files": [rel(path)], "description": desc,
                                "pipeline": "mean_historical_return(R, returns_data=True) + sample_cov(R, "
                                            f"returns_data=True) + EfficientFrontier(mu, S, (0, 1), "
                                            f"solver={solver!r}).{method}()"}
                details[name] = {"runs": all_t, "solver_used": used,
                                 "weights_sum": float(np.sum(ef.weights)),
                                 "n_nonzero_weights_gt_1e-6": int(np.sum(ef.weights > 1e-6)),
                                 "weights": [float(w) for w in ef.weights]}
                log(f"{name}: {best * 1e3:.1f} ms ({used})")

    # ------------------------------------------------------------------------------------------------------
    # 2. Vectorised numpy GBM Monte Carlo
    # ------------------------------------------------------------------------------------------------------
    n_paths, n_steps, chunk = 100_000, 252, 12_500
    S0, K, r, sigma, T = 100.0, 100.0, 0.05, 0.20, 1.0

    def gbm():
        rng = np.random.default_rng(42)
        dt = T / n_steps
        drift = (r - 0.5 * sigma ** 2) * dt
        vol = sigma * math.sqrt(dt)
        payoff_sum = 0.0
        payoff_sq = 0.0
        for start in range(0, n_paths, chunk):
            m = min(chunk, n_paths - start)
            z = rng.standard_normal((m, n_steps))
            log_paths = math.log(S0) + np.cumsum(drift + vol * z, axis=1)  # full paths, m x steps
            paths = np.exp(log_paths)
            pay = np.maximum(paths[:, -1] - K, 0.0)
            payoff_sum += pay.sum()
            payoff_sq += (pay * pay).sum()
        mean = payoff_sum / n_paths
        var = (payoff_sq - n_paths * mean * mean) / (n_paths - 1)
        return math.exp(-r * T) * mean, math.exp(-r * T) * math.sqrt(var / n_paths)

    best, all_t, (price, se) = best_of(gbm, reps(3))
    timings["numpy_gbm_mc_100k_x_252"] = best
    inputs["numpy_gbm_mc_100k_x_252"] = {
        "files": [],
        "parameters": {"S0": S0, "K": K, "r": r, "sigma": sigma, "T": T, "n_paths": n_paths, "n_steps": n_steps,
                       "chunk_paths": chunk, "seed": 42, "rng": "numpy default_rng (PCG64), standard_normal"},
        "description": "full log-Euler GBM paths (cumsum of (r - σ²/2)Δt + σ√Δt·Z, exp), chunks of 12,500 paths, "
                       "European call payoff on the last step",
    }
    details["numpy_gbm_mc_100k_x_252"] = {"runs": all_t, "price": price, "standard_error": se,
                                          "path_steps_per_second": n_paths * n_steps / best}
    log(f"numpy GBM: {best:.3f} s, {n_paths * n_steps / best / 1e6:.1f} M path-steps/s, price {price:.4f}±{se:.4f}")

    # ------------------------------------------------------------------------------------------------------
    # 3. vectorbt 1,000,000-order rebalancing backtest
    # ------------------------------------------------------------------------------------------------------
    import vectorbt as vbt

    n_assets_bt, n_days_bt = 1000, 1000
    rng = np.random.default_rng(7)
    vol_i = rng.uniform(0.01, 0.03, n_assets_bt)
    log_ret = rng.normal(0.0003, 1.0, (n_days_bt, n_assets_bt)) * vol_i
    close_np = 100.0 * np.exp(np.cumsum(log_ret, axis=0))
    idx = pd.date_range("2020-01-01", periods=n_days_bt, freq="D", name="Date")
    close = pd.DataFrame(close_np, index=idx, columns=[f"A{i:04d}" for i in range(n_assets_bt)])
    W = pd.DataFrame(1.0 / n_assets_bt, index=idx, columns=close.columns)
    close_path = write_csv(close, os.path.join(in_dir, "vbt_close_1000x1000.csv"))

    def vbt_grouped():
        return vbt.Portfolio.from_orders(close, size=W, size_type="targetpercent", group_by=True,
                                         cash_sharing=True, call_seq="auto", fees=0.001, freq="1D",
                                         init_cash=1_000_000.0)

    def vbt_ungrouped():
        return vbt.Portfolio.from_orders(close, size=W, size_type="targetpercent", fees=0.001, freq="1D",
                                         init_cash=1_000.0)

    for name, fn, desc in [
        ("vectorbt_rebalance_1000x1000_grouped", vbt_grouped,
         "from_orders(close, size=W, size_type='targetpercent', group_by=True, cash_sharing=True, "
         "call_seq='auto', fees=0.001, freq='1D', init_cash=1e6); W = 1/1000 in every cell (rebalance to equal "
         "weight every day)"),
        ("vectorbt_rebalance_1000x1000_ungrouped", vbt_ungrouped,
         "same close and W but every column its own portfolio: from_orders(close, size=W, "
         "size_type='targetpercent', fees=0.001, freq='1D', init_cash=1000) (no grouping, no call-seq sort)"),
    ]:
        best, all_t, pf = best_of(fn, reps(3))
        n_orders = int(pf.orders.count().sum()) if hasattr(pf.orders.count(), "sum") else int(pf.orders.count())
        timings[name] = best
        inputs[name] = {
            "files": [rel(close_path)],
            "description": desc,
            "close_generation": "rng = np.random.default_rng(7); vol = rng.uniform(0.01, 0.03, 1000); "
                                "log_ret = rng.normal(0.0003, 1.0, (1000, 1000))*vol; close = "
                                "100*exp(cumsum(log_ret, axis=0)); daily index from 2020-01-01",
        }
        details[name] = {"runs": all_t, "n_orders": n_orders, "orders_per_second": n_orders / best,
                         "final_value": float(np.sum(np.atleast_1d(pf.final_value())))}
        log(f"{name}: {best:.3f} s for {n_orders:,} orders ({n_orders / best / 1e6:.2f} M orders/s)")

    # ------------------------------------------------------------------------------------------------------
    # 4. statsmodels Holt-Winters estimated fit on the employment series
    # ------------------------------------------------------------------------------------------------------
    from statsmodels.tsa.holtwinters import ExponentialSmoothing

    emp = pd.read_csv(os.path.join(ROOT, EMPLOYMENT), parse_dates=["month"], index_col="month")["nonfarm"]
    emp = emp.astype(float)
    emp.index = pd.DatetimeIndex(emp.index, freq="MS")
    for name, kw in [("statsmodels_holt_winters_add_add_fit", dict(trend="add", seasonal="add")),
                     ("statsmodels_holt_winters_damped_mul_fit",
                      dict(trend="add", damped_trend=True, seasonal="mul"))]:
        def fit(kw=kw):
            return ExponentialSmoothing(emp, seasonal_periods=12, **kw).fit()
        best, all_t, res = best_of(fit, reps(5))
        timings[name] = best
        inputs[name] = {"files": [EMPLOYMENT + " (column nonfarm, all 120 rows; path relative to the repo root)"],
                        "description": f"ExponentialSmoothing(y, seasonal_periods=12, {kw}).fit() (estimated "
                                       "initialisation, optimized=True, use_brute=True)"}
        details[name] = {"runs": all_t, "sse": float(res.sse)}
        log(f"{name}: {best * 1e3:.1f} ms (SSE {res.sse:.6g})")

    # ------------------------------------------------------------------------------------------------------
    # 5. scikit-learn IsolationForest fit on 10,000 x 8
    # ------------------------------------------------------------------------------------------------------
    from sklearn.ensemble import IsolationForest

    X = np.random.default_rng(0).standard_normal((10_000, 8))
    x_path = os.path.join(in_dir, "iforest_10000x8.csv")
    write_csv(pd.DataFrame(X, columns=[f"x{i}" for i in range(8)]).rename_axis("row"), x_path)

    def iforest_fit():
        return IsolationForest(n_estimators=100, max_samples="auto", contamination="auto", random_state=0).fit(X)

    best, all_t, clf = best_of(iforest_fit, reps(5))
    timings["sklearn_isolation_forest_fit_10000x8"] = best
    inputs["sklearn_isolation_forest_fit_10000x8"] = {
        "files": [rel(x_path)],
        "description": "IsolationForest(n_estimators=100, max_samples='auto' (=256), contamination='auto', "
                       "random_state=0).fit(X); X = np.random.default_rng(0).standard_normal((10000, 8))",
    }
    details["sklearn_isolation_forest_fit_10000x8"] = {"runs": all_t}
    best_s, all_s, _ = best_of(lambda: clf.score_samples(X), reps(5))
    timings["sklearn_isolation_forest_score_10000x8"] = best_s
    inputs["sklearn_isolation_forest_score_10000x8"] = dict(inputs["sklearn_isolation_forest_fit_10000x8"],
                                                            description="score_samples(X) of the fitted forest")
    details["sklearn_isolation_forest_score_10000x8"] = {"runs": all_s}
    log(f"isolation forest: fit {best * 1e3:.1f} ms, score {best_s * 1e3:.1f} ms")

    result = {
        "timings": timings,
        "inputs": inputs,
        "details": details,
        "timing_method": "best (min) of N wall-clock runs (time.perf_counter) after one untimed warm-up run",
        "peers": {d: md.version(d) for d in ("PyPortfolioOpt", "cvxpy", "clarabel", "osqp", "vectorbt", "numba",
                                             "statsmodels", "scikit-learn", "numpy", "pandas", "scipy")},
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "platform": platform.platform(), "processor": platform.machine(),
                    "blas": blas_info(),
                    "openblas_env": {k: os.environ[k] for k in sorted(os.environ) if k.startswith("OPENBLAS_")}},
    }
    text = json.dumps(result, indent=2, allow_nan=False)
    with open(out_path, "w") as fh:
        fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
