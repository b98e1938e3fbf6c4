# Shared by the wrk benchmarks (sourced, after $bin, $work, $port, $duration, $threads and $connections are
# set): start and stop a server, run wrk and read its figures, and the machine's CPU use meanwhile.

# start_server DB_ARGS... ; sets server_pid, FISCUS_BENCH_WORKSPACE and FISCUS_BENCH_KEY (scopes: $BENCH_SCOPES)
start_server() {
  local ws app
  ws=$("$bin" --config "$work/fiscus.toml" "$@" admin workspace create Bench | tail -1)
  app=$("$bin" --config "$work/fiscus.toml" "$@" admin app create --workspace "$ws" --name bench --environment sandbox \
        --scopes "${BENCH_SCOPES:-workspace:read,actions:create}" --service-class benchmark | tail -1)
  FISCUS_BENCH_KEY=$("$bin" --config "$work/fiscus.toml" "$@" admin key issue --app "$app" | tail -1)
  FISCUS_BENCH_WORKSPACE=$ws
  export FISCUS_BENCH_KEY FISCUS_BENCH_WORKSPACE
  # A script may define `before_serve DB_ARGS...` to prepare the database before the server starts.
  if declare -f before_serve >/dev/null; then before_serve "$@"; fi
  "$bin" --config "$work/fiscus.toml" "$@" serve --bind "127.0.0.1:$port" >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do curl -sf "127.0.0.1:$port/readyz" >/dev/null && return 0; sleep 0.1; done
  echo "server did not start"; cat "$work/server.log"; exit 1
}
stop_server() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; }

# Machine-wide CPU ticks from /proc/stat: "busy total". Whatever runs (load generator, server, database)
# shares the same cores, so each run also reports how busy all cores were and the CPU time per request: when
# the cores are saturated, that, not waiting, is what bounds the rate.
cpu_ticks() { awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat; }
# cpu_use BEFORE AFTER REQUESTS_PER_SECOND -> "busy% cpu_us_per_request"
cpu_use() {
  local b0 t0 b1 t1
  read -r b0 t0 <<<"$1"; read -r b1 t1 <<<"$2"
  awk -v b="$((b1 - b0))" -v t="$((t1 - t0))" -v rps="$3" -v d="$duration" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.0f %.0f", (t > 0 ? 100 * b / t : 0), (rps > 0 ? b / hz * 1e6 / (rps * d) : 0) }'
}

# run_wrk NAME ARGS... -> prints "NAME rps p50 p99 busy% cpu_us" (latencies in ms)
run_wrk() {
  local name=$1; shift
  local out rps p50 p99 before
  before=$(cpu_ticks)
  out=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$@")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  if grep -q "Non-2xx" <<<"$out"; then echo "$name: non-2xx responses:" >&2; echo "$out" >&2; exit 1; fi
  printf '%s %s %s %s %s\n' "$name" "$rps" "$(to_ms "$p50")" "$(to_ms "$p99")" "$(cpu_use "$before" "$(cpu_ticks)" "$rps")"
}
to_ms() { awk -v v="$1" 'BEGIN { n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /ms$/) n=n; else if (v ~ /s$/) n*=1000; printf "%.3f", n }'; }

