#!/usr/bin/env bash
# Bank file benchmark (issue 32): N payments approved and executed through the governed path (set-up, not
# timed), then (1) the bank file worker's pass that puts them all in pain.001 files and publishes them, and
# (2) one camt.053 statement of N booked entries imported and reconciled, every action completed
# (examples/bank_files_bench.rs). Targets for N = 10,000: each within 5 s.
# Runs on the embedded SQLite default, and on PostgreSQL too when FISCUS_BENCH_DATABASE_URL names a server
# (a fresh database is created and dropped there).
# Usage: bench/bank_files.sh [payments, default 10000]. Prints the figures and PASS/FAIL; exits 1 on a FAIL.
set -euo pipefail
cd "$(dirname "$0")/.."
payments="${1:-10000}"
nice -n 10 cargo build --release -p fiscus-server --example bank_files_bench >/dev/null 2>&1
helper="${CARGO_TARGET_DIR:-$PWD/target}/release/examples/bank_files_bench"
status=0
report() {
  local name=$1 out=$2
  local files statement
  files=$(grep '^files' <<<"$out" || true); statement=$(grep '^statement' <<<"$out" || true)
  if [ -z "$files" ] || [ -z "$statement" ]; then
    echo "$name: the run failed: $out"; status=1; return
  fi
  local n f fs e c ss v1 v2
  read -r _ n f fs <<<"$files"; read -r _ e c ss <<<"$statement"
  v1=$(awk -v s="$fs" 'BEGIN { print (s <= 5) ? "PASS" : "FAIL" }')
  v2=$(awk -v s="$ss" -v c="$c" -v e="$e" 'BEGIN { print (s <= 5 && c == e) ? "PASS" : "FAIL" }')
  printf '%-10s %-44s %10s %9s  %s\n' "$name" "$n payments into $f pain.001 file(s)" "$fs" "$(awk -v n="$n" -v s="$fs" 'BEGIN { printf "%.0f", n / s }')" "$v1"
  printf '%-10s %-44s %10s %9s  %s\n' "$name" "camt.053 of $e entries, $c completed" "$ss" "$(awk -v n="$e" -v s="$ss" 'BEGIN { printf "%.0f", n / s }')" "$v2"
  [ "$v1" = PASS ] && [ "$v2" = PASS ] || status=1
}
echo "Fiscus bank file benchmark: $payments payments, $(nproc) cores"
printf '%-10s %-44s %10s %9s  %s\n' "database" "run" "seconds" "per s" "verdict"
report SQLite "$("$helper" --payments "$payments" 2>/dev/null)"
if [ -n "${FISCUS_BENCH_DATABASE_URL:-}" ]; then
  name="fiscus_bankbench_$$"
  psql "$FISCUS_BENCH_DATABASE_URL" -qc "CREATE DATABASE $name" >/dev/null
  url="${FISCUS_BENCH_DATABASE_URL%/*}/$name"
  out=$("$helper" --database-url "$url" --payments "$payments" 2>/dev/null) || true
  psql "$FISCUS_BENCH_DATABASE_URL" -qc "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null
  report PostgreSQL "$out"
fi
exit $status
