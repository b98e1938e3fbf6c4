#!/usr/bin/env bash
# Agent gateway benchmark on the embedded SQLite default: wrk, 2 threads, 32 connections, on loopback.
#   1. Signed request verification: GET /api/v2/agent-execution/capabilities with a bearer key against the
#      same GET signed by a signed execution client (RFC 9421, Ed25519, a fresh nonce per request, from a
#      file pre-signed just before the run). Both record sealed request evidence. Target: signed >= 0.9 x bearer.
#   2. MCP: tools/call of the read tool get_workspace on POST /api/mcp against GET /api/v2/workspace over
#      REST. The MCP call also writes its sealed invocation row. Target: MCP >= 0.5 x REST.
# Usage: bench/agents.sh [seconds per run, default 10]. Prints the figures and PASS/FAIL; exits 1 on a FAIL.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10}"
connections=32
threads=2
command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y wrk >/dev/null); }
nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
nice -n 10 cargo build --release -p fiscus-server --example agent_bench >/dev/null 2>&1
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
bin="$target_dir/release/fiscus"
helper="$target_dir/release/examples/agent_bench"
work=$(mktemp -d -p "$PWD/target" bench.XXXXXX)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cat > "$work/fiscus.toml" <<TOML
[service_classes.benchmark]
quota = 1000000000
window_seconds = 60
TOML
read -r key client private < <("$helper" setup --data-dir "$work/data" | tail -1)
port=18182
base="http://127.0.0.1:$port"
"$bin" --config "$work/fiscus.toml" --data-dir "$work/data" serve --bind "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do curl -sf "$base/readyz" >/dev/null && break; sleep 0.1; done
export FISCUS_BENCH_KEY="$key" FISCUS_BENCH_THREADS=$threads

rate() { awk '/Requests\/sec/ {print $2}'; }
p99() { awk '$1=="99%" {print $2}'; }
run() { wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$@"; }

caps="$base/api/v2/agent-execution/capabilities"
wrk -t1 -c4 -d2s -H "Authorization: Bearer $key" "$caps" >/dev/null
bearer=$(run -H "Authorization: Bearer $key" "$caps")
# Enough pre-signed requests for the run at well above the bearer rate; created just now (300 s window).
count=$(awk -v r="$(rate <<<"$bearer")" -v d="$duration" 'BEGIN { printf "%d", r * d * 3 + 20000 }')
"$helper" sign "$client" "$private" "$caps" "$count" > "$work/signatures.tsv"
export FISCUS_BENCH_SIGNATURES="$work/signatures.tsv"
signed=$(run -s bench/signed_get.lua "$caps")
rest=$(run -H "Authorization: Bearer $key" "$base/api/v2/workspace")
mcp=$(run -s bench/mcp_call.lua "$base/api/mcp")
for out in "$signed" "$mcp"; do
  if grep -q "Non-2xx\|errors:" <<<"$out"; then echo "errors during a run:"; echo "$out"; exit 1; fi
done

row() { printf '%-52s %12s %10s\n' "$@"; }
echo "Fiscus agent gateway benchmark: wrk, $threads threads, $connections connections, ${duration}s per run, $(nproc) cores, SQLite"
row "run" "requests/s" "p99"
row "GET capabilities, bearer key (with request evidence)" "$(rate <<<"$bearer")" "$(p99 <<<"$bearer")"
row "GET capabilities, RFC 9421 signed (fresh nonce each)" "$(rate <<<"$signed")" "$(p99 <<<"$signed")"
row "GET /api/v2/workspace, REST" "$(rate <<<"$rest")" "$(p99 <<<"$rest")"
row "MCP tools/call get_workspace (with invocation row)" "$(rate <<<"$mcp")" "$(p99 <<<"$mcp")"
failed=0
target() {
  local name=$1 measured=$2 baseline=$3 min=$4 ratio verdict
  ratio=$(awk -v m="$measured" -v b="$baseline" 'BEGIN { printf "%.2f", (b > 0 ? m / b : 0) }')
  verdict=$(awk -v r="$ratio" -v min="$min" 'BEGIN { print (r >= min ? "PASS" : "FAIL") }')
  [ "$verdict" = PASS ] || failed=1
  printf '%-4s %-40s %9s / %9s = %5s (>= %s)\n' "$verdict" "$name" "$measured" "$baseline" "$ratio" "$min"
}
echo
target "signed / bearer (same operation)" "$(rate <<<"$signed")" "$(rate <<<"$bearer")" 0.9
target "MCP tools/call / REST (same read)" "$(rate <<<"$mcp")" "$(rate <<<"$rest")" 0.5
exit "$failed"
