#!/usr/bin/env bash
# Transparency log benchmark (issue 33): one release build, wrk on loopback, three targets.
#   1. Keyed POST rate with the log on >= 0.95 x the same bench with it off (`[evidence] log = false`), on
#      SQLite and PostgreSQL, measured in the same run, on and off alternating ($rounds rounds, medians).
#   2. Inclusion proofs at 1,000,000 leaves (synthetic records appended to a workspace's log, then integrated
#      by `fiscus evidence checkpoint`, whose time is reported): p99 <= 5 ms over HTTP at $connections
#      connections.
#   3. clients/verify_evidence.py checks a 10,000-record bundle (Fiscus's proofs at that size) in <= 1 s.
# Beside target 1, what integrating one leaf costs the machine on each backend ($integ_leaves synthetic
# leaves integrated at once by `fiscus evidence checkpoint`, CPU of every process meanwhile; records only,
# and the mix of records and audit events keyed writes make), and the on/off ratio the mix's cost alone
# allows at the log-off run's CPU per request (a keyed POST adds two leaves, a record's and its event's):
# the integrator works beside the writers on the same cores, so under saturation its CPU is their rate.
# Usage: bench/evidence.sh [seconds per run, default 10] [leaves, default 1000000]. PostgreSQL at
# $FISCUS_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test; a fresh database per run).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10}"
leaves="${2:-1000000}"
rounds=3
integ_leaves=200000
connections=32
threads=2
pg_admin="${FISCUS_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"

command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y wrk >/dev/null); }
nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
bin="$target_dir/release/fiscus"
python="${FISCUS_PYTHON:-$PWD/target/clients-venv/bin/python}"
[ -x "$python" ] || python=python3
work=$(mktemp -d -p "$PWD/target" bench.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
  psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_bench WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# config LOG(true|false): the server's settings, the log on or off.
config() {
  cat > "$work/fiscus.toml" <<TOML
[service_classes.benchmark]
quota = 1000000000
window_seconds = 60
[evidence]
log = $1
TOML
}

port=18182
. bench/wrk.sh

fresh_pg() {
  psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_bench WITH (FORCE)" >/dev/null
  psql "$pg_admin" -qc "CREATE DATABASE fiscus_bench" >/dev/null
  pg_url="${pg_admin%/*}/fiscus_bench"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "Fiscus transparency log benchmark: wrk, $threads threads, $connections connections, ${duration}s per run, $(nproc) cores"

# 1. Keyed POSTs, the log on and off, alternating, each run on a fresh database.
declare -A rate cpu
for backend in sqlite postgres; do
  for round in $(seq 1 "$rounds"); do
    for log in true false; do
      config "$log"
      if [ "$backend" = sqlite ]; then
        start_server --data-dir "$work/$backend-$log-$round"
      else
        fresh_pg
        start_server --data-dir "$work/$backend-$log-$round" --database-url "$pg_url"
      fi
      wrk -t1 -c4 -d2s "http://127.0.0.1:$port/healthz" >/dev/null
      line=$(run_wrk "post" -s bench/post_evidence.lua "http://127.0.0.1:$port/api/v2/actions/autonomy/assessment-evidence")
      stop_server
      read -r _ rps p50 p99 busy cpu_us <<<"$line"
      printf '%-9s log %-5s round %s: %9s requests/s, p50 %s ms, p99 %s ms, CPU %s %%, %s us/request\n' \
        "$backend" "$log" "$round" "$rps" "$p50" "$p99" "$busy" "$cpu_us"
      rate[$backend-$log]+="$rps "
      cpu[$backend-$log]+="$cpu_us "
    done
  done
done

# 1b. What integrating a leaf costs: a fresh database per backend and kind of leaves, a workspace,
# $integ_leaves synthetic leaves, then one integration with nothing else running. Two kinds: records only,
# and the mix keyed writes make (every second leaf an audit event, whose row names its leaf).
declare -A leaf_us
config true
for backend in sqlite postgres; do
  for kind in records mix; do
    if [ "$backend" = sqlite ]; then
      db=(--data-dir "$work/integ-$backend-$kind"); target="$work/integ-$backend-$kind/fiscus.db"
    else
      fresh_pg; db=(--data-dir "$work/integ-$backend-$kind" --database-url "$pg_url"); target="$pg_url"
    fi
    ws=$("$bin" --config "$work/fiscus.toml" "${db[@]}" admin workspace create Integration | tail -1)
    "$python" bench/evidence_bench.py leaves "$backend" "$target" "$ws" "$integ_leaves" $([ "$kind" = mix ] && echo mix)
    before=$(cpu_ticks)
    "$bin" --config "$work/fiscus.toml" "${db[@]}" evidence checkpoint --workspace "$ws" >/dev/null
    read -r b0 _ <<<"$before"; read -r b1 _ <<<"$(cpu_ticks)"
    leaf_us[$backend-$kind]=$(awk -v b="$((b1 - b0))" -v hz="$(getconf CLK_TCK)" -v n="$integ_leaves" 'BEGIN { printf "%.1f", b / hz * 1e6 / n }')
    printf '%-9s integrating %s leaves (%s): %s us of CPU per leaf (every process)\n' "$backend" "$integ_leaves" "$kind" "${leaf_us[$backend-$kind]}"
  done
done

# 2. Proofs at $leaves leaves (SQLite, the embedded default).
config true
before_serve() {
  "$python" bench/evidence_bench.py leaves sqlite "$work/proofs/fiscus.db" "$FISCUS_BENCH_WORKSPACE" "$leaves"
  local t0 t1
  t0=$(date +%s.%N)
  "$bin" --config "$work/fiscus.toml" "$@" evidence checkpoint --workspace "$FISCUS_BENCH_WORKSPACE" >/dev/null
  t1=$(date +%s.%N)
  integrate_seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}
BENCH_SCOPES=trust:read start_server --data-dir "$work/proofs"
unset -f before_serve
export FISCUS_BENCH_LEAVES=$leaves
wrk -t1 -c4 -d2s -s bench/proof.lua "http://127.0.0.1:$port" >/dev/null
proofs=$(run_wrk proofs -s bench/proof.lua "http://127.0.0.1:$port")
read -r _ proof_rps proof_p50 proof_p99 proof_busy _ <<<"$proofs"
# The same at 4 connections: the time one proof takes when the cores are not saturated.
saturating=$connections
connections=4
light=$(run_wrk proofs -s bench/proof.lua "http://127.0.0.1:$port")
connections=$saturating
read -r _ light_rps light_p50 light_p99 light_busy _ <<<"$light"
"$python" bench/evidence_bench.py bundle "http://127.0.0.1:$port" "$FISCUS_BENCH_KEY" 10000 "$work/bundle.json" "$leaves"
curl -sf "http://127.0.0.1:$port/.well-known/fiscus-evidence-key" > "$work/key.txt"
stop_server
t0=$(date +%s.%N)
"$python" clients/verify_evidence.py bundle "$work/key.txt" "$work/bundle.json"
t1=$(date +%s.%N)
verify_seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')

echo
printf 'integration of %s leaves (fiscus evidence checkpoint): %s s\n' "$leaves" "$integrate_seconds"
printf 'inclusion proofs at %s leaves, %s connections: %s requests/s, p50 %s ms, p99 %s ms, CPU %s %%\n' \
  "$leaves" "$connections" "$proof_rps" "$proof_p50" "$proof_p99" "$proof_busy"
printf 'inclusion proofs at %s leaves, 4 connections: %s requests/s, p50 %s ms, p99 %s ms, CPU %s %%\n' \
  "$leaves" "$light_rps" "$light_p50" "$light_p99" "$light_busy"
printf 'clients/verify_evidence.py, 10,000-record bundle: %s s\n' "$verify_seconds"
echo

failed=0
# check OK TEXT: prints PASS or FAIL before TEXT, and remembers a failure.
check() { if [ "$1" = 1 ]; then echo "PASS $2"; else failed=1; echo "FAIL $2"; fi; }
for backend in sqlite postgres; do
  on=$(tr ' ' '\n' <<<"${rate[$backend-true]}" | grep . | median)
  off=$(tr ' ' '\n' <<<"${rate[$backend-false]}" | grep . | median)
  ratio=$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }')
  check "$(awk -v r="$ratio" 'BEGIN { print (r >= 0.95) ? 1 : 0 }')" \
    "keyed POST, log on / off ($backend, medians of $rounds): $on / $off = $ratio (>= 0.95)"
  off_cpu=$(tr ' ' '\n' <<<"${cpu[$backend-false]}" | grep . | median)
  awk -v c="$off_cpu" -v l="${leaf_us[$backend-mix]}" -v b="$backend" 'BEGIN {
    printf "     %s: integration %s us/leaf (mix) x 2 leaves against %s us/request with the log off allows at most %.3f\n", b, l, c, c / (c + 2 * l) }'
done
check "$(awk -v p="$proof_p99" 'BEGIN { print (p <= 5) ? 1 : 0 }')" \
  "inclusion proof p99 at $leaves leaves, $connections connections: $proof_p99 ms (<= 5 ms)"
check "$(awk -v p="$light_p99" 'BEGIN { print (p <= 5) ? 1 : 0 }')" \
  "inclusion proof p99 at $leaves leaves, 4 connections: $light_p99 ms (<= 5 ms)"
check "$(awk -v s="$verify_seconds" 'BEGIN { print (s <= 1) ? 1 : 0 }')" \
  "Python verifier, 10,000-record bundle: $verify_seconds s (<= 1 s)"
exit "$failed"
