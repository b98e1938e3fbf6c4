#!/usr/bin/env bash
# HTTP benchmark: one release build, measured with wrk on loopback, against raw baselines measured in the same
# run on the same machine, so the targets are ratios rather than absolute numbers:
#   - raw SQLite: single-row write transactions per second (WAL, synchronous=FULL, BEGIN IMMEDIATE … COMMIT),
#     `cargo run -p fiscus-store --example sqlite_commit_rate`
#   - raw PostgreSQL: pgbench, one single-row INSERT per transaction, $connections clients, default
#     synchronous_commit
#   - GET /healthz vs authenticated GET /api/v2/workspace at $connections connections, per backend
#   - idempotent POST writes (fresh Idempotency-Key each), per backend
# Targets: keyed POST >= 0.5 x raw commit rate and p99 <= 20 ms (both backends); authenticated read >=
# 0.5 x healthz on SQLite and >= 0.3 x healthz on PostgreSQL. Exits 1 when a target fails.
# Usage: bench/http.sh [seconds per run, default 10]. PostgreSQL is used at $FISCUS_BENCH_DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/test; a fresh database is created and dropped).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10}"
connections=32
threads=2
pg_admin="${FISCUS_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"

command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y wrk >/dev/null); }
command -v pgbench >/dev/null || { echo "pgbench is needed for the PostgreSQL baseline"; exit 1; }
nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
nice -n 10 cargo build --release -p fiscus-store --example sqlite_commit_rate >/dev/null 2>&1
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
bin="$target_dir/release/fiscus"
raw_sqlite_bin="$target_dir/release/examples/sqlite_commit_rate"
work=$(mktemp -d -p "$PWD/target" bench.XXXXXX)  # on the same disk as the databases under test
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
  psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_bench WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT

cat > "$work/fiscus.toml" <<TOML
[service_classes.standard]
quota = 6000
window_seconds = 60
[service_classes.benchmark]
quota = 1000000000
window_seconds = 60
TOML

port=18181
# start_server, stop_server, cpu_ticks, cpu_use, run_wrk, to_ms
. bench/wrk.sh

echo "Fiscus HTTP benchmark: wrk, $threads threads, $connections connections, ${duration}s per run, $(nproc) cores"

# Raw baselines first, with nothing else running.
before=$(cpu_ticks)
raw_sqlite=$("$raw_sqlite_bin" "$work/raw.sqlite" "$duration")
raw_sqlite_cpu=$(cpu_use "$before" "$(cpu_ticks)" "$raw_sqlite")
psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_bench WITH (FORCE)" >/dev/null
psql "$pg_admin" -qc "CREATE DATABASE fiscus_bench" >/dev/null
pg_url="${pg_admin%/*}/fiscus_bench"
psql "$pg_url" -qc "CREATE TABLE raw_commits (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL)" >/dev/null
echo "INSERT INTO raw_commits (v) VALUES (repeat('x', 200));" > "$work/raw_insert.sql"
before=$(cpu_ticks)
raw_pg=$(pgbench -n -c "$connections" -j "$threads" -T "$duration" -f "$work/raw_insert.sql" "$pg_url" 2>/dev/null |
         awk '/^tps =/ {printf "%.0f", $3}')
raw_pg_cpu=$(cpu_use "$before" "$(cpu_ticks)" "$raw_pg")
psql "$pg_url" -qc "DROP TABLE raw_commits" >/dev/null

start_server --data-dir "$work/sqlite"
base="http://127.0.0.1:$port"
wrk -t1 -c4 -d2s "$base/healthz" >/dev/null  # warm up
health=$(run_wrk healthz "$base/healthz")
authed=$(run_wrk workspace -H "Authorization: Bearer $FISCUS_BENCH_KEY" "$base/api/v2/workspace")
post_sqlite=$(run_wrk post_sqlite -s bench/post_evidence.lua "$base/api/v2/actions/autonomy/assessment-evidence")
stop_server

start_server --data-dir "$work/pg" --database-url "$pg_url"
wrk -t1 -c4 -d2s "$base/healthz" >/dev/null
health_pg=$(run_wrk healthz_pg "$base/healthz")
authed_pg=$(run_wrk workspace_pg -H "Authorization: Bearer $FISCUS_BENCH_KEY" "$base/api/v2/workspace")
post_pg=$(run_wrk post_postgres -s bench/post_evidence.lua "$base/api/v2/actions/autonomy/assessment-evidence")
stop_server

row() { printf '%-44s %12s %10s %10s %8s %12s\n' "$@"; }
echo
row "run" "requests/s" "p50 ms" "p99 ms" "CPU %" "CPU us/req"
row "raw SQLite commits (WAL, synchronous=FULL)" "$raw_sqlite" "-" "-" $raw_sqlite_cpu
row "raw PostgreSQL INSERTs (pgbench, $connections clients)" "$raw_pg" "-" "-" $raw_pg_cpu
for line in "$health" "$authed" "$post_sqlite" "$health_pg" "$authed_pg" "$post_pg"; do
  read -r name rps p50 p99 busy cpu_us <<<"$line"
  case $name in
    healthz) label="GET /healthz (SQLite server)";;
    workspace) label="GET /api/v2/workspace (SQLite)";;
    post_sqlite) label="POST evidence, keyed (SQLite)";;
    healthz_pg) label="GET /healthz (PostgreSQL server)";;
    workspace_pg) label="GET /api/v2/workspace (PostgreSQL)";;
    post_postgres) label="POST evidence, keyed (PostgreSQL)";;
  esac
  row "$label" "$rps" "$p50" "$p99" "$busy" "$cpu_us"
done
echo "(CPU: all $(nproc) cores, whatever ran: load generator, server and database together)"

failed=0
# target NAME MEASURED BASELINE MIN_RATIO [P99 MAX_P99]
target() {
  local name=$1 measured=$2 baseline=$3 min=$4 p99=${5:-} max_p99=${6:-}
  local ratio verdict
  ratio=$(awk -v m="$measured" -v b="$baseline" 'BEGIN { printf "%.2f", (b > 0 ? m / b : 0) }')
  verdict=$(awk -v r="$ratio" -v min="$min" -v p="${p99:-0}" -v maxp="${max_p99:-0}" \
            'BEGIN { ok = (r >= min); if (maxp > 0 && p > maxp) ok = 0; print (ok ? "PASS" : "FAIL") }')
  [ "$verdict" = PASS ] || failed=1
  if [ -n "$max_p99" ]; then
    printf '%-4s %-36s measured %9s / baseline %9s = %5s (>= %s), p99 %s ms (<= %s ms)\n' \
      "$verdict" "$name" "$measured" "$baseline" "$ratio" "$min" "$p99" "$max_p99"
  else
    printf '%-4s %-36s measured %9s / baseline %9s = %5s (>= %s)\n' "$verdict" "$name" "$measured" "$baseline" "$ratio" "$min"
  fi
}
read -r _ h_rps _ _ <<<"$health"
read -r _ a_rps _ _ _ <<<"$authed"
read -r _ ps_rps _ ps_p99 _ <<<"$post_sqlite"
read -r _ hp_rps _ _ _ <<<"$health_pg"
read -r _ ap_rps _ _ _ <<<"$authed_pg"
read -r _ pp_rps _ pp_p99 _ <<<"$post_pg"
echo
target "keyed POST / raw commits (SQLite)" "$ps_rps" "$raw_sqlite" 0.5 "$ps_p99" 20
target "keyed POST / raw INSERTs (PostgreSQL)" "$pp_rps" "$raw_pg" 0.5 "$pp_p99" 20
target "authed read / healthz (SQLite)" "$a_rps" "$h_rps" 0.5
target "authed read / healthz (PostgreSQL)" "$ap_rps" "$hp_rps" 0.3
exit "$failed"
