"""Submits the same ARIMA(12,1,12) run with drift (the monthly mean of the daily WTI spot price 1986-2018, 396
months, from data/economics/wti_crude_daily.csv) RUNS times to a live server and prints each outcome's
status, error code and a hash of its output: the same request must end the same way every time, whatever the
load (its budget is counted work, not seconds).

Usage: arima_repeat.py BASE_URL KEY RUNS LABEL
"""
import csv
import hashlib
import json
import sys
import time
import urllib.request
import uuid
from collections import defaultdict

base, key, runs, label = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
months = defaultdict(list)
with open("data/economics/wti_crude_daily.csv") as f:
    for row in csv.reader(f):
        if row[0] == "Date" or row[1] == ".":
            continue
        m, _, y = row[0].split("/")
        if int(y) <= 2018:
            months[(int(y), int(m))].append(float(row[1]))
values = [sum(v) / len(v) for _, v in sorted(months.items())]
body = json.dumps({"input": {"values": values},
                   "parameters": {"p": 12, "d": 1, "q": 12, "trend": "drift", "horizon": 12}}).encode()


def call(method, path, data=None):
    req = urllib.request.Request(f"{base}{path}", data=data, method=method, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/json",
        "Idempotency-Key": str(uuid.uuid4())})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)


outcomes = set()
for i in range(runs):
    t0 = time.time()
    job = call("POST", "/api/v2/quant/models/arima/run", body)
    while job["status"] in ("queued", "running"):
        time.sleep(0.2)
        job = call("GET", f"/api/v2/quant/compute/jobs/{job['id']}")
    output = (job.get("result") or {}).get("output")
    digest = hashlib.sha256(json.dumps(output, sort_keys=True).encode()).hexdigest()[:16] if output else "-"
    code = (job.get("error") or {}).get("code", "-")
    work = output.get("work") if output else "-"
    print(f"{label} run {i + 1}: {job['status']} error={code} output={digest} work={work} {time.time() - t0:.1f} s")
    outcomes.add((job["status"], code, digest))
print(f"{label}: {len(outcomes)} distinct outcome(s) in {runs} runs")
sys.exit(0 if len(outcomes) == 1 else 1)
