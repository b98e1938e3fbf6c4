#!/usr/bin/env bash
# Data plane benchmark, on a release build, with baselines measured in the same run on the same machine:
#   - import: bench/import.sh (fiscus import prices against sqlite3's .import and psql's \copy into the same
#     keyed table, and peak RSS), run first with its own table and checks.
#   - read: a 20-year daily price read (the S&P 500 OHLCV dataset of the demo, 5,031 bars in one page) at
#     32 connections against GET /healthz of the same binary, as JSON (reported), as an Arrow IPC stream
#     (targets >= 0.25x, p99 <= 10 ms) and as CSV (target >= 0.15x). The ceiling the body's size sets is
#     reported beside them: the bytes per second the same server sends of a body it holds whole in memory
#     (the OpenAPI document), divided by each form's page size.
#   - the same ARIMA(12,1,12) request (bench/arima_repeat.py) five times idle and five times under a price
#     read load: one outcome (target).
# Usage: bench/data.sh [seconds per read run, default 10] [rows to import, default 500000]. PostgreSQL at
# $FISCUS_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test; a fresh database is created
# and dropped). Exits 1 when a target fails.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10}"
rows="${2:-500000}"
connections=32
threads=2

command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y wrk >/dev/null); }
nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
bin="$target_dir/release/fiscus"
work=$(mktemp -d -p "$PWD/target" bench.XXXXXX)  # on the same disk as the databases under test
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }

# Imports: bench/import.sh (its own table and checks).
import_failed=0
bench/import.sh "$rows" || import_failed=1

# Reads: the demo's S&P 500 OHLCV dataset, 5,031 bars in one page, against /healthz.
cpu_ticks() { awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat; }
to_ms() { awk -v v="$1" 'BEGIN { n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /ms$/) n=n; else if (v ~ /s$/) n*=1000; printf "%.3f", n }'; }
run_wrk() {
  local out rps p99
  out=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$@")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx responses:" >&2; echo "$out" >&2; exit 1; fi
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  printf '%s %s\n' "$rps" "$(to_ms "$p99")"
}
port=18191
# The demo key's service class, with a quota no run reaches: the rate limiter is not what is measured.
printf '[service_classes.standard]\nquota = 1000000000\nwindow_seconds = 60\n' > "$work/fiscus.toml"
"$bin" --config "$work/fiscus.toml" --data-dir "$work/demo" serve --demo --bind "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 600); do grep -q "listening" "$work/server.log" 2>/dev/null && break; sleep 0.2; done
key=$(grep -o 'svc_test_[A-Za-z0-9]*' "$work/server.log" | head -1)
base="http://127.0.0.1:$port"
read_path="/api/v2/data/instruments/SPX/prices?dataset=3&limit=10000"
bars=$(curl -sf -H "Authorization: Bearer $key" "$base$read_path" | python3 -c "import json,sys; print(len(json.load(sys.stdin)['data']))")
wrk -t1 -c4 -d2s "$base/healthz" >/dev/null
read -r health_rps health_p99 <<<"$(run_wrk "$base/healthz")"
read -r read_rps read_p99 <<<"$(run_wrk -H "Authorization: Bearer $key" "$base$read_path")"
read -r arrow_rps arrow_p99 <<<"$(run_wrk -H "Authorization: Bearer $key" -H "Accept: application/vnd.apache.arrow.stream" "$base$read_path")"
read -r csv_rps csv_p99 <<<"$(run_wrk -H "Authorization: Bearer $key" -H "Accept: text/csv" "$base$read_path")"
read -r doc_rps doc_p99 <<<"$(run_wrk "$base/api/v2/openapi.json")"
doc_bytes=$(curl -sf "$base/api/v2/openapi.json" | wc -c)
arrow_bytes=$(curl -sf -H "Authorization: Bearer $key" -H "Accept: application/vnd.apache.arrow.stream" "$base$read_path" | wc -c)
csv_bytes=$(curl -sf -H "Authorization: Bearer $key" -H "Accept: text/csv" "$base$read_path" | wc -c)
# The same read for one bar: what a read costs besides its body (credential, instrument, dataset).
read -r one_rps one_p99 <<<"$(run_wrk -H "Authorization: Bearer $key" "$base${read_path%limit=*}limit=1")"
body_bytes=$(curl -sf -H "Authorization: Bearer $key" "$base$read_path" | wc -c)
# The same ARIMA(12,1,12) request five times idle and five times while 32 connections read prices.
arima_ok=1
python3 bench/arima_repeat.py "$base" "$key" 5 idle > "$work/arima.txt" || arima_ok=0
wrk -t"$threads" -c"$connections" -d600s -H "Authorization: Bearer $key" "$base$read_path" >/dev/null 2>&1 &
load_pid=$!
python3 bench/arima_repeat.py "$base" "$key" 5 "under load" >> "$work/arima.txt" || arima_ok=0
kill "$load_pid" 2>/dev/null; wait "$load_pid" 2>/dev/null || true
# Idle and loaded runs must agree with each other too.
[ "$(grep -o 'output=[0-9a-f-]*' "$work/arima.txt" | sort -u | wc -l)" = 1 ] || arima_ok=0
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""

row() { printf '%-58s %14s %10s\n' "$@"; }
echo
row "run" "rows/s | req/s" "p99 ms"
row "GET /healthz" "$health_rps" "$health_p99"
row "GET prices, 1 bar (SQLite)" "$one_rps" "$one_p99"
row "GET prices, $bars bars in one page ($((body_bytes / 1024)) KiB, SQLite)" "$read_rps" "$read_p99"
row "  the same as Arrow IPC ($((arrow_bytes / 1024)) KiB)" "$arrow_rps" "$arrow_p99"
row "  the same as CSV ($((csv_bytes / 1024)) KiB)" "$csv_rps" "$csv_p99"
row "GET /api/v2/openapi.json ($((doc_bytes / 1024)) KiB held in memory)" "$doc_rps" "$doc_p99"

failed=$import_failed
check() { # NAME MEASURED BASELINE MIN_RATIO [P99 MAX]
  local ratio verdict
  ratio=$(awk -v m="$2" -v b="$3" 'BEGIN { printf "%.2f", (b > 0 ? m / b : 0) }')
  verdict=$(awk -v r="$ratio" -v t="$4" 'BEGIN { print (r >= t ? "PASS" : "FAIL") }')
  if [ $# -ge 6 ] && awk -v p="$5" -v t="$6" 'BEGIN { exit !(p > t) }'; then verdict=FAIL; fi
  [ "$verdict" = FAIL ] && failed=1
  echo "$verdict $1: ${ratio}x (target >= $4x${6:+, p99 <= $6 ms})"
}
echo
echo "report 5,031-bar JSON price read vs /healthz: $(awk -v m="$read_rps" -v b="$health_rps" 'BEGIN { printf "%.2f", m / b }')x, p99 $read_p99 ms"
check "5,031-bar price read as Arrow vs /healthz" "$arrow_rps" "$health_rps" 0.25 "$arrow_p99" 10
check "5,031-bar price read as CSV vs /healthz" "$csv_rps" "$health_rps" 0.15
ceiling() { awk -v r="$doc_rps" -v d="$doc_bytes" -v p="$1" -v h="$health_rps" 'BEGIN { printf "%.0f req/s (%.2fx /healthz)", r * d / p, r * d / p / h }'; }
echo "report the body-size ceiling at $(awk -v r="$doc_rps" -v d="$doc_bytes" 'BEGIN { printf "%.2f GB/s", r * d / 1e9 }') of a body held in memory: Arrow $(ceiling "$arrow_bytes"), CSV $(ceiling "$csv_bytes")"
echo "report 1-bar price read vs /healthz: $(awk -v m="$one_rps" -v b="$health_rps" 'BEGIN { printf "%.2f", m / b }')x; page bytes/s: $(awk -v r="$read_rps" -v b="$body_bytes" 'BEGIN { printf "%.2f GB/s", r * b / 1e9 }')"
echo
cat "$work/arima.txt"
if [ "$arima_ok" = 1 ]; then echo "PASS ARIMA(12,1,12): one outcome in 10 runs, idle and under load"; else echo "FAIL ARIMA(12,1,12): the outcomes differ"; failed=1; fi
exit $failed
