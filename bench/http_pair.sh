#!/usr/bin/env bash
# Two builds of Fiscus against each other on this machine: A and B in turn (A B A B …), each on a fresh
# SQLite data directory, measuring GET /healthz, the authenticated GET /api/v2/workspace and keyed POST writes
# with wrk on loopback, then the ratio B/A pair by pair and its median. A shared 2-core machine drifts by
# tens of percent between minutes; a ratio within one pair does not, so compare the medians of the ratios.
# Usage: bench/http_pair.sh BIN_A BIN_B [rounds, default 3] [seconds per run, default 10]
#   e.g. build the previous commit in a worktree (its own target directory: a shared one may keep stale
#   artifacts of the other checkout), copy its target/release/fiscus to /tmp/fiscus_a, this one's to
#   /tmp/fiscus_b, then bench/http_pair.sh /tmp/fiscus_a /tmp/fiscus_b
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 BIN_A BIN_B [rounds] [seconds]"; exit 2; }
bin_a=$1 bin_b=$2 rounds=${3:-3} duration=${4:-10}
connections=32 threads=2 port=18182
command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y wrk >/dev/null); }
mkdir -p target
. bench/wrk.sh
server_pid="" work=""
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; [ -n "$work" ] && rm -rf "$work"' EXIT

# measure BIN -> "healthz_rps read_rps post_rps"
measure() {
  bin=$1
  work=$(mktemp -d -p "$PWD/target" pair.XXXXXX)
  printf '[service_classes.benchmark]\nquota = 1000000000\nwindow_seconds = 60\n' > "$work/fiscus.toml"
  start_server --data-dir "$work/sqlite" >/dev/null
  local base="http://127.0.0.1:$port" h a p
  wrk -t1 -c4 -d2s "$base/healthz" >/dev/null
  h=$(run_wrk healthz "$base/healthz" | awk '{print $2}')
  a=$(run_wrk workspace -H "Authorization: Bearer $FISCUS_BENCH_KEY" "$base/api/v2/workspace" | awk '{print $2}')
  p=$(run_wrk post -s bench/post_evidence.lua "$base/api/v2/actions/autonomy/assessment-evidence" | awk '{print $2}')
  stop_server
  rm -rf "$work"; work=""
  echo "$h $a $p"
}

echo "A: $bin_a"; echo "B: $bin_b"
printf '%-6s %-4s %12s %12s %12s\n' round run "healthz/s" "read/s" "keyed POST/s"
ratios=()
for round in $(seq 1 "$rounds"); do
  read -r ha aa pa <<<"$(measure "$bin_a")"
  printf '%-6s %-4s %12s %12s %12s\n' "$round" A "$ha" "$aa" "$pa"
  read -r hb ab pb <<<"$(measure "$bin_b")"
  printf '%-6s %-4s %12s %12s %12s\n' "$round" B "$hb" "$ab" "$pb"
  ratios+=("$(awk -v ha="$ha" -v hb="$hb" -v aa="$aa" -v ab="$ab" -v pa="$pa" -v pb="$pb" \
    'BEGIN { printf "%.3f %.3f %.3f", hb/ha, ab/aa, pb/pa }')")
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for i in 1 2 3; do
  name=$(echo "healthz read keyed_POST" | cut -d' ' -f"$i")
  values=$(printf '%s\n' "${ratios[@]}" | cut -d' ' -f"$i")
  echo "B/A $name: pairs $(echo $values) median $(echo "$values" | median)"
done
