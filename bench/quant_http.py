"""Quant over HTTP against the Python peers, in one run on one machine (driven by bench/quant-http.sh).

  - min-variance on 100 assets x 500 periods: POST /quant/compute/optimizations (inline returns encoded once,
    answered in the request with its sealed result, the response parsed) against PyPortfolioOpt's in-process pipeline (mean_historical_return,
    sample_cov, EfficientFrontier.min_volatility) on the same returns; medians of repeated runs;
  - GBM 100,000 paths x 252 steps: a queued simulation job from submit to its sealed result against numpy's
    in-process run (standard normals, cumulative log steps, exp);
  - 32 clients submitting small optimisations while /healthz is measured with wrk: its p99.
Runs inside peers/.venv (created by peers/_bootstrap.py when missing). Prints one line per figure.
"""

import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "peers"))
import _bootstrap  # noqa: E402

_bootstrap.ensure_venv(__file__)

import numpy as np  # noqa: E402
from pypfopt import EfficientFrontier, expected_returns, risk_models  # noqa: E402
import pandas as pd  # noqa: E402

BASE, KEY, DURATION = sys.argv[1], sys.argv[2], int(sys.argv[3])

try:  # which BLAS kernel numpy ran with (the issue asks for it next to the peer timings)
    from threadpoolctl import threadpool_info

    kernels = ",".join(f"{i.get('internal_api')}:{i.get('architecture')}:{i.get('num_threads')}" for i in threadpool_info())
except ImportError:
    kernels = "unknown (threadpoolctl missing)"
print(f"numpy {np.__version__} blas={kernels}")


def post(path, body, prefer_async=False, minimal=False):
    # A body given as bytes is sent as it is: the timed loop measures Fiscus, not Python's JSON encoder.
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method="POST")
    req.add_header("Authorization", "Bearer " + KEY)
    req.add_header("Content-Type", "application/json")
    prefs = (["respond-async"] if prefer_async else []) + (["return=minimal"] if minimal else [])
    if prefs:
        req.add_header("Prefer", ", ".join(prefs))
    with urllib.request.urlopen(req, timeout=600) as r:
        return r.status, json.loads(r.read())


def get(path):
    req = urllib.request.Request(BASE + path)
    req.add_header("Authorization", "Bearer " + KEY)
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def median_time(f, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# --- min-variance, 100 assets -------------------------------------------------------------------------
rng = np.random.default_rng(7)
factors = rng.normal(0.0, 0.01, (500, 5))
loadings = rng.normal(0.0, 1.0, (5, 100))
returns = 0.0003 + factors @ loadings * 0.5 + rng.normal(0.0, 0.01, (500, 100))
frame = pd.DataFrame(returns)


def peer_min_variance():
    mu = expected_returns.mean_historical_return(frame, returns_data=True)
    cov = risk_models.sample_cov(frame, returns_data=True)
    EfficientFrontier(mu, cov).min_volatility()


body = {
    "objective": "min_variance",
    "returns": {f"A{i:03d}": [round(row[i], 8) for row in returns] for i in range(100)},
}
status, first = post("/api/v2/quant/compute/optimizations", body)
assert status == 201, (status, first)
peer_opt = median_time(peer_min_variance, 7)
encoded = json.dumps(body).encode()
# The client already holds the returns it sent: `Prefer: return=minimal` (RFC 7240) answers with the job and its
# sealed result without echoing them. The full answer is timed too.
fiscus_opt = median_time(lambda: post("/api/v2/quant/compute/optimizations", encoded, minimal=True), 7)
fiscus_full = median_time(lambda: post("/api/v2/quant/compute/optimizations", encoded), 7)
print(
    f"minvar100 peer_s={peer_opt:.5f} fiscus_http_s={fiscus_opt:.5f} ratio={peer_opt / fiscus_opt:.2f} "
    f"full_answer_s={fiscus_full:.5f} full_ratio={peer_opt / fiscus_full:.2f}"
)

# --- GBM 100k x 252 ---------------------------------------------------------------------------------------
paths, steps = 100_000, 252


def numpy_gbm():
    g = np.random.default_rng(1)
    dt = 1.0 / steps
    z = g.standard_normal((paths, steps))
    logs = np.cumsum((0.05 - 0.5 * 0.04) * dt + 0.2 * np.sqrt(dt) * z, axis=1)
    return 100.0 * np.exp(logs)


def fiscus_gbm():
    sim = {
        "parameters": {"assets": ["X"], "initial": [100.0], "drift": [0.05], "covariance": [[0.04]]},
        "horizon_years": 1.0, "steps": steps, "paths": paths, "seed": 1,
    }
    status, job = post("/api/v2/quant/compute/simulations", sim)
    while job["status"] not in ("succeeded", "failed", "cancelled"):
        time.sleep(0.01)
        job = get(f"/api/v2/quant/compute/jobs/{job['id']}")
    assert job["status"] == "succeeded", job


peer_gbm = median_time(numpy_gbm, 3)
fiscus_gbm_s = median_time(fiscus_gbm, 3)
print(f"gbm100k peer_s={peer_gbm:.4f} fiscus_job_s={fiscus_gbm_s:.4f} ratio={peer_gbm / fiscus_gbm_s:.2f}")

# --- /healthz while 32 clients submit small jobs ----------------------------------------------------------
small = {"objective": "min_variance", "returns": {name: returns[:60, j].round(8).tolist() for j, name in enumerate("ABC")}}
stop = threading.Event()
done = [0]


def client():
    while not stop.is_set():
        post("/api/v2/quant/compute/optimizations", small)
        done[0] += 1


threads = [threading.Thread(target=client, daemon=True) for _ in range(32)]
for t in threads:
    t.start()
time.sleep(1)
out = subprocess.run(["wrk", "-t1", "-c4", f"-d{DURATION}s", "--latency", BASE + "/healthz"], capture_output=True, text=True).stdout
stop.set()
for t in threads:
    t.join(timeout=30)
p99 = next(line.split()[1] for line in out.splitlines() if line.strip().startswith("99%"))
jobs = done[0] / (DURATION + 1)
print(f"healthz_p99_under_32_job_clients={p99} jobs_per_s={jobs:.0f}")
