"""Reads a live server's /metrics as Prometheus does, with the official Python client's two parsers: the
Prometheus text format 0.0.4 (asked for with `Accept: text/plain; version=0.0.4`) and OpenMetrics 1.0 (asked
for with Prometheus' own scrape header). In both, the request counter must be a counter with samples.

Usage: scrape_metrics.py BASE_URL
"""
import sys

import requests
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families as text_families

PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
)


def requests_counter(families):
    for family in families:
        if family.name == "fiscus_http_requests":
            return family
    raise SystemExit("no fiscus_http_requests family")


base = sys.argv[1]
requests.get(f"{base}/healthz", timeout=10).raise_for_status()

text = requests.get(f"{base}/metrics", headers={"Accept": "text/plain; version=0.0.4"}, timeout=10)
assert text.headers["Content-Type"].startswith("text/plain; version=0.0.4"), text.headers["Content-Type"]
families = list(text_families(text.text))
unknown = [f.name for f in families if f.type == "unknown"]
assert not unknown, f"families the 0.0.4 parser reads as unknown: {unknown}"
counter = requests_counter(families)
assert counter.type == "counter" and counter.samples, counter

om = requests.get(f"{base}/metrics", headers={"Accept": PROMETHEUS_ACCEPT}, timeout=10)
assert om.headers["Content-Type"].startswith("application/openmetrics-text"), om.headers["Content-Type"]
counter = requests_counter(openmetrics_families(om.text))
assert counter.type == "counter" and counter.samples, counter
print(f"prometheus_client: ok ({len(families)} families in 0.0.4 text, both formats parsed)")
