#!/usr/bin/env bash
# Webhook delivery survives `kill -9`: a receiver (bench/webhook_receiver.py, verifying every request with
# standardwebhooks) holds the first delivery without answering; the server is killed while it waits, with
# more events queued behind it; after a restart every event arrives, the interrupted one again with the
# same webhook-id, and each in event order. On SQLite, and on PostgreSQL at $FISCUS_BENCH_DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/test; a fresh database is created and dropped).
# Usage: bench/webhook_crash.sh. Exits non-zero if an event is lost or out of order.
set -euo pipefail
cd "$(dirname "$0")/.."
pg_admin="${FISCUS_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/fiscus"
python="${FISCUS_PYTHON:-$PWD/target/clients-venv/bin/python}"
work=$(mktemp -d -p "$PWD/target" webhook-crash.XXXXXX)
server_pid="" receiver_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
  [ -n "$receiver_pid" ] && kill "$receiver_pid" 2>/dev/null
  rm -rf "$work"
  psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_webhook_crash WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
cat > "$work/fiscus.toml" <<TOML
webhooks_allow_loopback = true
webhook_claim_stale_seconds = 2
TOML
port=18291 hook_port=18292
base="http://127.0.0.1:$port"
failures=0

start_server() {
  "$bin" --config "$work/fiscus.toml" "${args[@]}" serve --bind "127.0.0.1:$port" "$@" >>"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do curl -sf "$base/readyz" >/dev/null && return 0; sleep 0.1; done
  echo "the server did not start"; cat "$work/server.log"; exit 1
}

round() {
  local name=$1
  : > "$work/ids"; : > "$work/secret"; : > "$work/server.log"
  "$python" bench/webhook_receiver.py "$hook_port" "$work/secret" "$work/ids" & receiver_pid=$!
  start_server --demo
  local key
  key=$(grep -o 'FISCUS_DEMO_KEY=[^ ]*' "$work/server.log" | cut -d= -f2)
  curl -sf -X POST "$base/api/v2/agent-execution/webhooks" -H "Authorization: Bearer $key" \
    -H "Content-Type: application/json" -d "{\"url\": \"http://127.0.0.1:$hook_port/hook\"}" \
    | "$python" -c 'import json,sys; print(json.load(sys.stdin)["secret"])' > "$work/secret"
  local proposal='{"kind":"payment","amount_minor":125000,"currency":"USD","counterparty":"cp_acme","connector":"sandbox","execution_mode":"human_approved","risk_tier":"T1","reference":"INV-1","required_checks":[]}'
  for _ in 1 2 3 4 5; do
    curl -sf -X POST "$base/api/v2/actions" -H "Authorization: Bearer $key" -H "Content-Type: application/json" \
      -d "$proposal" >/dev/null
  done
  for _ in $(seq 1 100); do [ -s "$work/ids" ] && break; sleep 0.1; done
  kill -9 "$server_pid"; wait "$server_pid" 2>/dev/null || true
  local interrupted
  interrupted=$(head -1 "$work/ids")
  start_server
  for _ in $(seq 1 150); do [ "$(wc -l < "$work/ids")" -ge 6 ] && break; sleep 0.1; done
  local received unique
  received=$(wc -l < "$work/ids"); unique=$(sort -u "$work/ids" | wc -l)
  local verdict=PASS
  # Six requests: the interrupted one, then all five events in order (the interrupted one again first).
  if [ "$received" -lt 6 ] || [ "$unique" -ne 5 ] || [ "$(sed -n 2p "$work/ids")" != "$interrupted" ] \
     || [ "$(tail -n +2 "$work/ids" | head -5 | sort | tr '\n' ' ')" != "$(tail -n +2 "$work/ids" | head -5 | tr '\n' ' ')" ]; then
    verdict=FAIL; failures=$((failures + 1))
  fi
  printf '%-10s %s received, %s distinct events of 5, interrupted %s redelivered second: %s\n' \
    "$name" "$received" "$unique" "$interrupted" "$verdict"
  kill -9 "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; server_pid=""
  kill "$receiver_pid" 2>/dev/null; wait "$receiver_pid" 2>/dev/null || true; receiver_pid=""
}

args=(--data-dir "$work/sqlite")
round SQLite
psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_webhook_crash WITH (FORCE)" >/dev/null 2>&1 || true
psql "$pg_admin" -qc "CREATE DATABASE fiscus_webhook_crash" >/dev/null
args=(--data-dir "$work/pg" --database-url "${pg_admin%/*}/fiscus_webhook_crash")
round PostgreSQL
exit $((failures > 0))
