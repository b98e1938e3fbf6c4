#!/usr/bin/env bash
# Webhook delivery benchmark: the real service and its delivery worker, a receiver on loopback answering
# 200, events written into the outbox as the service writes them (examples/webhook_bench.rs).
#   1. Sustained: 1,000 events/s for the given seconds; target: delivered >= 1,000 events/s (within 2 %, the
#      offered rate's own jitter) and outbox-to-delivery p99 <= 1 s.
#   2. Burst: 20,000 events at once; how fast one endpoint's queue drains (target >= 1,000 events/s).
# Runs on the embedded SQLite default, and on PostgreSQL too when FISCUS_BENCH_DATABASE_URL names a server
# (a fresh database is created and dropped there).
# Usage: bench/webhooks.sh [seconds, default 10]. Prints the figures and PASS/FAIL; exits 1 on a FAIL.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
nice -n 10 cargo build --release -p fiscus-server --example webhook_bench >/dev/null 2>&1
helper="${CARGO_TARGET_DIR:-$PWD/target}/release/examples/webhook_bench"
status=0
report() {
  local name=$1 out=$2
  local sustained burst
  sustained=$(grep '^sustained' <<<"$out"); burst=$(grep '^burst' <<<"$out")
  local delivered p50 p99 max drain
  delivered=$(awk '{print $6}' <<<"$sustained"); p50=$(awk '{print $9}' <<<"$sustained")
  p99=$(awk '{print $11}' <<<"$sustained"); max=$(awk '{print $13}' <<<"$sustained")
  drain=$(awk '{print $4}' <<<"$burst")
  local v1 v2
  v1=$(awk -v d="$delivered" -v p="$p99" 'BEGIN { print (d >= 980 && p <= 1000) ? "PASS" : "FAIL" }')
  v2=$(awk -v d="$drain" 'BEGIN { print (d >= 1000) ? "PASS" : "FAIL" }')
  printf '%-10s %-36s %10s %9s %9s %9s  %s\n' "$name" "sustained 1,000 events/s, ${seconds}s" "$delivered" "$p50" "$p99" "$max" "$v1"
  printf '%-10s %-36s %10s %9s %9s %9s  %s\n' "$name" "burst of 20,000 events" "$drain" "" "" "" "$v2"
  [ "$v1" = PASS ] && [ "$v2" = PASS ] || status=1
}
echo "Fiscus webhook delivery benchmark: one endpoint, a loopback receiver, $(nproc) cores"
printf '%-10s %-36s %10s %9s %9s %9s  %s\n' "database" "run" "events/s" "p50 ms" "p99 ms" "max ms" "verdict"
report SQLite "$("$helper" --rate 1000 --seconds "$seconds" --burst 20000)"
if [ -n "${FISCUS_BENCH_DATABASE_URL:-}" ]; then
  name="fiscus_whbench_$$"
  psql "$FISCUS_BENCH_DATABASE_URL" -qc "CREATE DATABASE $name" >/dev/null
  url="${FISCUS_BENCH_DATABASE_URL%/*}/$name"
  out=$("$helper" --database-url "$url" --rate 1000 --seconds "$seconds" --burst 20000) || true
  psql "$FISCUS_BENCH_DATABASE_URL" -qc "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null
  report PostgreSQL "$out"
fi
exit $status
