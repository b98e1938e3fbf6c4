#!/usr/bin/env bash
# Quant over HTTP against the Python peers, measured in one run on this machine (release build):
#   - end-to-end min-variance on 100 assets (POST with `Prefer: return=minimal`, answered in the request with
#     its sealed result; the full answer is timed too) against PyPortfolioOpt's in-process solve on the same
#     returns (target >= 3x);
#   - a 100,000 x 252 GBM simulation job, submit to sealed result, against numpy in process (target >= 1.5x);
#   - /healthz p99 while 32 clients submit small jobs (target <= 5 ms).
# The peers run in peers/.venv (created from peers/requirements.txt when missing). numpy runs with
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (the machine sets them for old OpenBLAS builds).
# Usage: bench/quant-http.sh [seconds of the /healthz run, default 10]. Exits 1 when a target fails.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10}"
command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y wrk >/dev/null); }
nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/fiscus"
work=$(mktemp -d -p "$PWD/target" bench.XXXXXX)
server_pid=""
# The server is stopped (and waited for) before its data directory is removed.
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
# The rate limiter is not what is measured.
printf '[service_classes.standard]\nquota = 1000000000\nwindow_seconds = 60\n' > "$work/fiscus.toml"
port=18193
"$bin" --config "$work/fiscus.toml" --data-dir "$work/data" serve --demo --bind "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 600); do grep -q "listening" "$work/server.log" 2>/dev/null && break; sleep 0.2; done
key=$(grep -o 'svc_test_[A-Za-z0-9]*' "$work/server.log" | head -1)
base="http://127.0.0.1:$port"
ws=$(curl -sf -H "Authorization: Bearer $key" "$base/api/v2/workspace" | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
"$bin" --config "$work/fiscus.toml" --data-dir "$work/data" admin credits grant --workspace "$ws" --environment sandbox \
  --credits 10000000 --reason benchmark >/dev/null
echo "Fiscus quant over HTTP: $(nproc) cores"
out=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/quant_http.py "$base" "$key" "$duration")
echo "$out"
ratio() { sed -n "s/.*$1.* ratio=\([0-9.]*\).*/\1/p" <<<"$out"; }
failed=0
check() { # NAME VALUE TARGET (>=)
  if awk -v v="$2" -v t="$3" 'BEGIN { exit !(v >= t) }'; then echo "PASS $1: $2 (target >= $3)"; else echo "FAIL $1: $2 (target >= $3)"; failed=1; fi
}
check "min-variance 100 assets, HTTP vs PyPortfolioOpt in process" "$(ratio minvar100)" 3
check "GBM 100k x 252 job vs numpy in process" "$(ratio gbm100k)" 1.5
p99=$(sed -n 's/.*healthz_p99_under_32_job_clients=\([^ ]*\).*/\1/p' <<<"$out")
p99_ms=$(awk -v v="$p99" 'BEGIN { n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /ms$/) n=n; else if (v ~ /s$/) n*=1000; printf "%.3f", n }')
if awk -v p="$p99_ms" 'BEGIN { exit !(p <= 5) }'; then echo "PASS /healthz p99 under 32 job clients: $p99_ms ms (target <= 5)"; else echo "FAIL /healthz p99 under 32 job clients: $p99_ms ms (target <= 5)"; failed=1; fi
exit $failed
