#!/usr/bin/env bash
# HTTP benchmark: one release build, measured with wrk on loopback.
#   - authenticated GET /api/v2/workspace vs unauthenticated GET /healthz at 32 connections (ratio, p99)
#   - idempotent POST writes (fresh Idempotency-Key each) on SQLite and on PostgreSQL
# Usage: bench/http.sh [seconds per run, default 10]. PostgreSQL is used at $FISCUS_BENCH_DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/test; a fresh database is created and dropped).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10}"
connections=32
threads=2
pg_admin="${FISCUS_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"

command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y wrk >/dev/null); }
cargo build --release -p fiscus >/dev/null 2>&1
bin="$PWD/target/release/fiscus"
work=$(mktemp -d)
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
# start_server DB_ARGS... ; sets server_pid and FISCUS_BENCH_KEY
start_server() {
  local ws app
  ws=$("$bin" --config "$work/fiscus.toml" "$@" admin workspace create Bench | tail -1)
  app=$("$bin" --config "$work/fiscus.toml" "$@" admin app create --workspace "$ws" --name bench --environment sandbox \
        --scopes workspace:read,actions:create --service-class benchmark | tail -1)
  FISCUS_BENCH_KEY=$("$bin" --config "$work/fiscus.toml" "$@" admin key issue --app "$app" | tail -1)
  export FISCUS_BENCH_KEY
  "$bin" --config "$work/fiscus.toml" "$@" serve --bind "127.0.0.1:$port" >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do curl -sf "127.0.0.1:$port/readyz" >/dev/null && return 0; sleep 0.1; done
  echo "server did not start"; cat "$work/server.log"; exit 1
}
stop_server() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; }

# run_wrk NAME ARGS... -> prints "NAME rps p50 p99" (latencies in ms)
run_wrk() {
  local name=$1; shift
  local out rps p50 p99
  out=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$@")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  if grep -q "Non-2xx" <<<"$out"; then echo "$name: non-2xx responses:"; echo "$out"; exit 1; fi
  printf '%s %s %s %s\n' "$name" "$rps" "$(to_ms "$p50")" "$(to_ms "$p99")"
}
to_ms() { awk -v v="$1" 'BEGIN { n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /ms$/) n=n; else if (v ~ /s$/) n*=1000; printf "%.3f", n }'; }

echo "Fiscus HTTP benchmark: wrk, $threads threads, $connections connections, ${duration}s per run, $(nproc) cores"
start_server --data-dir "$work/sqlite"
base="http://127.0.0.1:$port"
wrk -t1 -c4 -d2s "$base/healthz" >/dev/null  # warm up
health=$(run_wrk healthz "$base/healthz")
authed=$(run_wrk workspace -H "Authorization: Bearer $FISCUS_BENCH_KEY" "$base/api/v2/workspace")
post_sqlite=$(run_wrk post_sqlite -s bench/post_evidence.lua "$base/api/v2/actions/autonomy/assessment-evidence")
stop_server

psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_bench WITH (FORCE)" >/dev/null
psql "$pg_admin" -qc "CREATE DATABASE fiscus_bench" >/dev/null
pg_url="${pg_admin%/*}/fiscus_bench"
start_server --data-dir "$work/pg" --database-url "$pg_url"
authed_pg=$(run_wrk workspace_pg -H "Authorization: Bearer $FISCUS_BENCH_KEY" "$base/api/v2/workspace")
post_pg=$(run_wrk post_postgres -s bench/post_evidence.lua "$base/api/v2/actions/autonomy/assessment-evidence")
stop_server

printf '\n%-34s %12s %10s %10s\n' "run" "requests/s" "p50 ms" "p99 ms"
for line in "$health" "$authed" "$post_sqlite" "$authed_pg" "$post_pg"; do
  read -r name rps p50 p99 <<<"$line"
  case $name in
    healthz) label="GET /healthz (no auth)";;
    workspace) label="GET /api/v2/workspace (SQLite)";;
    post_sqlite) label="POST evidence, keyed (SQLite)";;
    workspace_pg) label="GET /api/v2/workspace (PostgreSQL)";;
    post_postgres) label="POST evidence, keyed (PostgreSQL)";;
  esac
  printf '%-34s %12s %10s %10s\n' "$label" "$rps" "$p50" "$p99"
done
read -r _ h_rps _ _ <<<"$health"
read -r _ a_rps _ a_p99 <<<"$authed"
ratio=$(awk -v a="$a_rps" -v h="$h_rps" 'BEGIN { printf "%.2f", a / h }')
echo
echo "authenticated read / healthz = $ratio (target >= 0.50); authenticated p99 = ${a_p99} ms (target <= 5 ms)"
