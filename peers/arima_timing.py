#!/usr/bin/env python3
"""Time statsmodels' ARIMA on the cases of crates/fiscus-quant/examples/arima_timing.rs (same series).

Usage:  python3 peers/arima_timing.py --out target/arima_timing.json [--runs N] [--only NAME]

Runs under any interpreter that already has statsmodels (e.g. a venv with only statsmodels' pins installed);
otherwise it re-executes itself inside peers/.venv like generate.py. Each timing is the best wall-clock time
of --runs runs of `ARIMA(y, order, seasonal_order, trend).fit()` after one untimed warm-up run. A fit that
raises is recorded with its message instead of a time.
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import statsmodels  # noqa: F401
except ImportError:
    import _bootstrap  # noqa: E402

    _bootstrap.ensure_venv(__file__, single_thread=True)

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import statsmodels  # noqa: E402
from statsmodels.tsa.arima.model import ARIMA  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wti_monthly():
    df = pd.read_csv(os.path.join(ROOT, "data/economics/wti_crude_daily.csv"))
    df["Date"] = pd.to_datetime(df["Date"], format="%m/%d/%Y")
    # FRED marks market holidays with "."; they are left out of the month's mean, never filled.
    df["DCOILWTICO"] = pd.to_numeric(df["DCOILWTICO"], errors="coerce")
    df = df[(df["Date"].dt.year <= 2018) & df["DCOILWTICO"].notna()]
    m = df.groupby([df["Date"].dt.year, df["Date"].dt.month])["DCOILWTICO"].mean()
    return m.to_numpy(dtype=float)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    with open(os.path.join(ROOT, "crates/fiscus-quant/tests/fixtures/arima.json")) as fh:
        fx = json.load(fh)
    wti = wti_monthly()
    series = {
        "wti_monthly": wti,
        "wti_monthly_first40": wti[:40],
        "lcpi": np.array(fx["inputs"]["lcpi"], dtype=float),
        "infl": np.array(fx["inputs"]["infl"], dtype=float),
    }
    cases = [
        ("sarima200x210_12_wti", "wti_monthly", (2, 0, 0), (2, 1, 0, 12), "n"),
        ("sarima100x110_12_wti", "wti_monthly", (1, 0, 0), (1, 1, 0, 12), "n"),
        ("sarima011x011_12_wti", "wti_monthly", (0, 1, 1), (0, 1, 1, 12), "n"),
        ("arima30_1_0_wti_first40", "wti_monthly_first40", (30, 1, 0), (0, 0, 0, 0), "n"),
        ("arima30_1_0_wti", "wti_monthly", (30, 1, 0), (0, 0, 0, 0), "n"),
        ("ar1_const_on_inflation", "infl", (1, 0, 0), (0, 0, 0, 0), "c"),
        ("arima111_drift_on_log_cpi", "lcpi", (1, 1, 1), (0, 0, 0, 0), "t"),
        ("arima210_drift_on_log_cpi", "lcpi", (2, 1, 0), (0, 0, 0, 0), "t"),
        ("sarima110x100_12_drift_on_log_cpi", "lcpi", (1, 1, 0), (1, 0, 0, 12), "t"),
        ("arma11_const_on_inflation", "infl", (1, 0, 1), (0, 0, 0, 0), "c"),
        ("arima111_no_trend_on_inflation", "infl", (1, 1, 1), (0, 0, 0, 0), "n"),
    ]
    out = {"statsmodels": statsmodels.__version__, "runs": args.runs, "cases": {}}
    for name, sname, order, sorder, trend in cases:
        if args.only and args.only != name:
            continue
        y = series[sname]

        def fit():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ARIMA(y, order=order, seasonal_order=sorder, trend=trend).fit()

        try:
            res = fit()
            best = float("inf")
            for _ in range(args.runs):
                t0 = time.perf_counter()
                res = fit()
                best = min(best, time.perf_counter() - t0)
            out["cases"][name] = {"seconds": best, "llf": float(res.llf), "nobs": len(y)}
            print(f"{name:<36} {len(y):>5} {best * 1e3:>12.3f} ms  llf {res.llf:.6f}")
        except Exception as e:  # noqa: BLE001 - recorded, not hidden
            out["cases"][name] = {"failed": f"{type(e).__name__}: {e}", "nobs": len(y)}
            print(f"{name:<36} {len(y):>5} failed: {type(e).__name__}: {e}")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
