#!/usr/bin/env bash
# Data plane benchmark, on a release build, with baselines measured in the same run on the same machine:
#   - import: `fiscus import prices` of a generated long-form OHLCV file (every row validated, hashed into
#     the dataset's content hash, written in one transaction, sealed and audited) against the `sqlite3`
#     shell's `.import` of the same CSV into a plain table (target >= 0.5x), and on PostgreSQL against
#     `\copy` (COPY) of the same file (reported).
#     For reference, the shell's .import of the same rows into Fiscus's own keyed prices table (reported).
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
pg_admin="${FISCUS_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"

command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y wrk >/dev/null); }
command -v sqlite3 >/dev/null || { apt-get install -y sqlite3 >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y sqlite3 >/dev/null); }
nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
bin="$target_dir/release/fiscus"
work=$(mktemp -d -p "$PWD/target" bench.XXXXXX)  # on the same disk as the databases under test
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
  psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_bench_data WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }

# The file: 100 instruments x ($rows / 100) business days of OHLCV bars, long form, and their reference data.
symbols=100
days=$((rows / symbols))
python3 - "$work" "$symbols" "$days" <<'PY'
import datetime, random, sys
work, symbols, days = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(7)
with open(f"{work}/instruments.csv", "w") as f:
    f.write("symbol,name,asset_class,currency\n")
    for s in range(symbols):
        f.write(f"B{s:03d},Bench {s},equity,USD\n")
dates, d = [], datetime.date(1990, 1, 1)
while len(dates) < days:
    if d.weekday() < 5:
        dates.append(d.isoformat())
    d += datetime.timedelta(days=1)
with open(f"{work}/prices.csv", "w") as f:
    f.write("symbol,date,open,high,low,close,adj_close,volume\n")
    for s in range(symbols):
        p = 100.0
        for day in dates:
            o = p; c = max(0.01, p * (1 + rng.gauss(0, 0.01)))
            h = max(o, c) * 1.005; l = min(o, c) * 0.995
            f.write(f"B{s:03d},{day},{o:.4f},{h:.4f},{l:.4f},{c:.4f},{c:.4f},{rng.randint(1000, 10**7)}\n")
            p = c
PY
lines=$(($(wc -l < "$work/prices.csv") - 1))
echo "Fiscus data benchmark: $lines price rows ($symbols instruments x $days days), $(nproc) cores"

# Baseline: the sqlite3 shell's .import into a plain table (one transaction, its defaults).
sqlite3 "$work/plain.sqlite" "CREATE TABLE prices (symbol TEXT, date TEXT, open TEXT, high TEXT, low TEXT, close TEXT, adj_close TEXT, volume TEXT)"
t0=$(now)
sqlite3 "$work/plain.sqlite" ".import --csv --skip 1 $work/prices.csv prices"
t1=$(now)
shell_rate=$(rate "$lines" "$t0" "$t1")

# Reference: the same shell importing the same rows into Fiscus's own prices table (its key and index, WAL),
# with the workspace and instrument ids each stored row carries: what the keyed schema costs SQLite itself.
awk -F, -v OFS=, 'NR > 1 { $1 = "wsp_01M8BENCH0000000000000000W,ins_01M8BENCH000000000000" $1 ",1"; print }' \
  "$work/prices.csv" > "$work/keyed.csv"
sqlite3 "$work/keyed.sqlite" "PRAGMA journal_mode = WAL" >/dev/null

# Fiscus on SQLite.
ws=$("$bin" --data-dir "$work/sqlite" admin workspace create Bench | tail -1)
sqlite3 "$work/keyed.sqlite" "$(sqlite3 "$work/sqlite/fiscus.db" ".schema prices")"
t0=$(now)
sqlite3 "$work/keyed.sqlite" ".import --csv $work/keyed.csv prices"
t1=$(now)
keyed_rate=$(rate "$lines" "$t0" "$t1")
"$bin" --data-dir "$work/sqlite" import instruments "$work/instruments.csv" --workspace "$ws" >/dev/null 2>&1
t0=$(now)
"$bin" --data-dir "$work/sqlite" import prices "$work/prices.csv" --workspace "$ws" --source bench --licence CC0-1.0 >/dev/null 2>"$work/import.log" || { cat "$work/import.log"; exit 1; }
t1=$(now)
fiscus_sqlite_rate=$(rate "$lines" "$t0" "$t1")

# PostgreSQL: COPY of the same file into a plain table, then Fiscus.
psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_bench_data WITH (FORCE)" >/dev/null
psql "$pg_admin" -qc "CREATE DATABASE fiscus_bench_data" >/dev/null
pg_url="${pg_admin%/*}/fiscus_bench_data"
psql "$pg_url" -qc "CREATE TABLE plain_prices (symbol TEXT, date TEXT, open TEXT, high TEXT, low TEXT, close TEXT, adj_close TEXT, volume TEXT)"
t0=$(now)
psql "$pg_url" -qc "\\copy plain_prices FROM '$work/prices.csv' WITH (FORMAT csv, HEADER true)"
t1=$(now)
copy_rate=$(rate "$lines" "$t0" "$t1")
psql "$pg_url" -qc "DROP TABLE plain_prices"
ws_pg=$("$bin" --data-dir "$work/pg" --database-url "$pg_url" admin workspace create Bench | tail -1)
"$bin" --data-dir "$work/pg" --database-url "$pg_url" import instruments "$work/instruments.csv" --workspace "$ws_pg" >/dev/null 2>&1
t0=$(now)
"$bin" --data-dir "$work/pg" --database-url "$pg_url" import prices "$work/prices.csv" --workspace "$ws_pg" --source bench --licence CC0-1.0 >/dev/null 2>"$work/import.log" || { cat "$work/import.log"; exit 1; }
t1=$(now)
fiscus_pg_rate=$(rate "$lines" "$t0" "$t1")

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
row "sqlite3 shell .import (plain table)" "$shell_rate" "-"
row "sqlite3 shell .import (Fiscus's keyed prices table)" "$keyed_rate" "-"
row "fiscus import prices (SQLite: validated, hashed, sealed)" "$fiscus_sqlite_rate" "-"
row "PostgreSQL \\copy (plain table)" "$copy_rate" "-"
row "fiscus import prices (PostgreSQL)" "$fiscus_pg_rate" "-"
row "GET /healthz" "$health_rps" "$health_p99"
row "GET prices, 1 bar (SQLite)" "$one_rps" "$one_p99"
row "GET prices, $bars bars in one page ($((body_bytes / 1024)) KiB, SQLite)" "$read_rps" "$read_p99"
row "  the same as Arrow IPC ($((arrow_bytes / 1024)) KiB)" "$arrow_rps" "$arrow_p99"
row "  the same as CSV ($((csv_bytes / 1024)) KiB)" "$csv_rps" "$csv_p99"
row "GET /api/v2/openapi.json ($((doc_bytes / 1024)) KiB held in memory)" "$doc_rps" "$doc_p99"

failed=0
check() { # NAME MEASURED BASELINE MIN_RATIO [P99 MAX]
  local ratio verdict
  ratio=$(awk -v m="$2" -v b="$3" 'BEGIN { printf "%.2f", (b > 0 ? m / b : 0) }')
  verdict=$(awk -v r="$ratio" -v t="$4" 'BEGIN { print (r >= t ? "PASS" : "FAIL") }')
  if [ $# -ge 6 ] && awk -v p="$5" -v t="$6" 'BEGIN { exit !(p > t) }'; then verdict=FAIL; fi
  [ "$verdict" = FAIL ] && failed=1
  echo "$verdict $1: ${ratio}x (target >= $4x${6:+, p99 <= $6 ms})"
}
echo
check "import vs sqlite3 .import" "$fiscus_sqlite_rate" "$shell_rate" 0.5
echo "report import vs the shell's import into the keyed table: $(awk -v m="$fiscus_sqlite_rate" -v b="$keyed_rate" 'BEGIN { printf "%.2f", m / b }')x"
echo "report import on PostgreSQL vs COPY: $(awk -v m="$fiscus_pg_rate" -v b="$copy_rate" 'BEGIN { printf "%.2f", m / b }')x"
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
