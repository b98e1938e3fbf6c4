#!/usr/bin/env bash
# Crash safety of acknowledged writes, with group commit on (the default). On each backend, ROUNDS times:
#   1. keyed evidence POSTs from $THREADS concurrent clients (bench/crash_client.py), each acknowledged key
#      recorded with its request and response body;
#   2. `kill -9` of the server in the middle of the load;
#   3. restart, then every acknowledged key is replayed: it must answer the same status and body with
#      `Idempotent-Replayed: true`, and its evidence row must be in the database;
#   4. `fiscus verify all` (audit chain, MACs, anchors, sealed rows) must pass.
# Usage: bench/crash.sh [rounds, default 5]. Exits non-zero on any loss or failed check.
# PostgreSQL at $FISCUS_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test; a fresh database
# is created and dropped).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
threads="${THREADS:-16}"
pg_admin="${FISCUS_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/fiscus"
work=$(mktemp -d -p "$PWD/target" crash.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
  rm -rf "$work"
  psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_crash WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
cat > "$work/fiscus.toml" <<TOML
group_commit = true
[service_classes.benchmark]
quota = 1000000000
window_seconds = 60
TOML
port=18281
base="http://127.0.0.1:$port"
failures=0

start_server() {
  "$bin" "${args[@]}" serve --bind "127.0.0.1:$port" >>"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do curl -sf "$base/readyz" >/dev/null && return 0; sleep 0.1; done
  echo "server did not start"; tail -20 "$work/server.log"; exit 1
}

count_rows() {
  if [ "$backend" = sqlite ]; then
    sqlite3 "$work/$backend/fiscus.db" "SELECT id FROM autonomy_evidence" | sort
  else
    psql "$pg_url" -Atc "SELECT id FROM autonomy_evidence" | sort
  fi
}

for backend in sqlite postgres; do
  args=(--config "$work/fiscus.toml" --data-dir "$work/$backend")
  if [ "$backend" = postgres ]; then
    psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_crash WITH (FORCE)" >/dev/null 2>&1
    psql "$pg_admin" -qc "CREATE DATABASE fiscus_crash" >/dev/null
    pg_url="${pg_admin%/*}/fiscus_crash"
    args+=(--database-url "$pg_url")
  fi
  ws=$("$bin" "${args[@]}" admin workspace create Crash | tail -1)
  app=$("$bin" "${args[@]}" admin app create --workspace "$ws" --name crash --environment sandbox \
        --scopes actions:create,actions:read --service-class benchmark | tail -1)
  key=$("$bin" "${args[@]}" admin key issue --app "$app" | tail -1)
  for round in $(seq 1 "$rounds"); do
    acked="$work/$backend-acked-$round.jsonl"
    : > "$acked"
    start_server
    python3 bench/crash_client.py load "$base" "$key" "$acked" "$threads" 2>>"$work/client.log" &
    load_pid=$!
    # Kill somewhere between 1 and 3 seconds into the load.
    sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 1 + 2 * r / 32767 }')"
    kill -9 "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    wait "$load_pid" || true
    n_acked=$(wc -l < "$acked")
    start_server
    verdict=PASS
    if ! python3 bench/crash_client.py check "$base" "$key" "$acked" > "$work/ids" 2>>"$work/client.log"; then
      verdict=FAIL
    fi
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
    # Every replayed evidence id must be a row of the database.
    missing=$(comm -23 <(sort "$work/ids") <(count_rows) | wc -l)
    [ "$missing" -eq 0 ] || verdict=FAIL
    verified=ok
    if ! "$bin" "${args[@]}" verify all >"$work/verify.log" 2>&1; then
      verdict=FAIL
      verified=FAILED
      tail -5 "$work/verify.log"
    fi
    replays=identical
    if grep -q MISMATCH "$work/client.log" 2>/dev/null; then replays=MISMATCH; fi
    [ "$verdict" = PASS ] || failures=$((failures + 1))
    line=$(printf '%-4s %-8s round %d: %5d acknowledged before kill -9, %d rows missing, replays %s, verify all %s' \
      "$verdict" "$backend" "$round" "$n_acked" "$missing" "$replays" "$verified")
    echo "$line"
    [ "$round" -eq 1 ] && sed 's/^/       verify: /' "$work/verify.log" | tail -3
  done
done
echo
echo "crash safety: $((2 * rounds)) rounds, $failures failed"
if [ "$failures" -ne 0 ]; then
  echo "--- client log"; tail -20 "$work/client.log"
  exit 1
fi
