#!/usr/bin/env bash
# A rolling upgrade's middle, for real (issue 35, the online-migration rule in crates/fiscus-store/README.md):
# the previous release's binary serves a PostgreSQL database that this release has migrated, as it does while
# the nodes are restarted one by one. Steps:
#   1. the previous release (a git revision, default: the commit before HEAD) is built from a worktree of its
#      own under target/ (its own target directory, so this checkout's build is untouched);
#   2. the previous release migrates a fresh database and writes with its own key: a keyed write, a compute
#      job;
#   3. this release migrates the same database (the expansion) and writes too;
#   4. the previous release starts again on it (its start runs its migrations: a release that refused a
#      database migrated further than itself would not come back here) and runs its smoke subset: ready, an
#      authenticated read, its earlier keyed write replayed identically, a new keyed write, a compute job to
#      its end, and `fiscus verify all` clean, with both binaries.
# Usage: bench/upgrade.sh [previous-revision] (FISCUS_BIN, FISCUS_PREVIOUS_BIN: binaries built already). PostgreSQL at $FISCUS_BENCH_DATABASE_URL (default
# postgres://postgres@127.0.0.1:5432/test; a fresh database is created and dropped). Exits non-zero on any
# failed step. Releases before the one that accepts a database migrated by a newer release (migrations
# newer than its own: `fiscus_store::migrations::run`) refuse step 4 whenever the newer one added a migration.
set -euo pipefail
cd "$(dirname "$0")/.."
previous="${1:-HEAD~1}"
pg_admin="${FISCUS_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
rev=$(git rev-parse --verify "$previous^{commit}")
root="$PWD/target/upgrade"
mkdir -p "$root"
echo "previous release: $(git log -1 --format='%h %s' "$rev" | cut -c1-100)"
echo "this release:     $(git log -1 --format='%h %s' HEAD | cut -c1-100)$(git diff --quiet || echo ' (+ uncommitted changes)')"

# 1. Both binaries. The previous one is built once per revision and kept. FISCUS_BIN and FISCUS_PREVIOUS_BIN
# name binaries built already instead.
new_bin="${FISCUS_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/fiscus}"
[ -n "${FISCUS_BIN:-}" ] || nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
old_bin="${FISCUS_PREVIOUS_BIN:-$root/fiscus-${rev:0:12}}"
if [ ! -x "$old_bin" ]; then
  rm -rf "$root/src"
  git worktree prune
  git worktree add --detach "$root/src" "$rev" >/dev/null 2>&1
  echo "building the previous release (a build of its own; several minutes on two cores)"
  (cd "$root/src" && CARGO_TARGET_DIR="$root/target" nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1)
  cp "$root/target/release/fiscus" "$old_bin"
  git worktree remove --force "$root/src"
fi

work=$(mktemp -d -p "$PWD/target" upgrade.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
  rm -rf "$work"
  psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_upgrade WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
psql "$pg_admin" -qc "DROP DATABASE IF EXISTS fiscus_upgrade WITH (FORCE)" >/dev/null 2>&1
psql "$pg_admin" -qc "CREATE DATABASE fiscus_upgrade" >/dev/null
pg_url="${pg_admin%/*}/fiscus_upgrade"
# One data directory (the server key) for both releases, as on a node that is upgraded in place.
args=(--data-dir "$work/data" --database-url "$pg_url")
port=18291
base="http://127.0.0.1:$port"
failures=0

check() { # check NAME COMMAND...: runs the command, prints PASS/FAIL with the name
  local name=$1; shift
  if "$@" >>"$work/steps.log" 2>&1; then
    echo "PASS  $name"
  else
    echo "FAIL  $name"; failures=$((failures + 1)); tail -5 "$work/steps.log" | sed 's/^/      /'
  fi
}

start() { # start BINARY: serves until stop
  "$1" "${args[@]}" serve --bind "127.0.0.1:$port" >>"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 150); do
    curl -sf "$base/readyz" >/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.2
  done
  return 1
}

stop() {
  [ -n "$server_pid" ] || return 0
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
}

evidence='{"domain":"security","title":"written across a rolling upgrade","source_type":"upgrade",'\
'"source_reference":"bench/upgrade.sh","source_hash":"sha256:'"$(printf 'ab%.0s' $(seq 32))"'"}'

write() { # write KEY IDEMPOTENCY-KEY OUT: a keyed evidence POST, its status and body kept
  curl -s -o "$3" -w '%{http_code}' -X POST "$base/api/v2/actions/autonomy/assessment-evidence" \
    -H "Authorization: Bearer $1" -H "Idempotency-Key: $2" -H 'Content-Type: application/json' \
    --data "$evidence" \
    | grep -qx 201
}

replayed() { # replayed KEY IDEMPOTENCY-KEY FIRST: the same key answers the same body, marked replayed
  local headers="$work/replay.headers"
  curl -s -D "$headers" -o "$work/replay.body" -X POST "$base/api/v2/actions/autonomy/assessment-evidence" \
    -H "Authorization: Bearer $1" -H "Idempotency-Key: $2" -H 'Content-Type: application/json' \
    --data "$evidence" >/dev/null
  grep -qi '^idempotent-replayed: true' "$headers" && cmp -s "$3" "$work/replay.body"
}

computed() { # computed KEY: a small simulation queued (Prefer: respond-async) and ended as succeeded
  local job state
  job=$(curl -sf -X POST "$base/api/v2/quant/compute/simulations" -H "Authorization: Bearer $1" \
    -H 'Content-Type: application/json' -H 'Prefer: respond-async' \
    --data '{"parameters":{"EQUITY":{"initial":100.0,"drift":0.06,"volatility":0.2}},"horizon_years":1.0,"steps":12,"paths":200,"seed":7}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  for _ in $(seq 1 100); do
    state=$(curl -sf "$base/api/v2/quant/compute/jobs/$job" -H "Authorization: Bearer $1" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
    [ "$state" = succeeded ] && return 0
    case "$state" in failed|cancelled) return 1 ;; esac
    sleep 0.2
  done
  return 1
}

read_workspace() { curl -sf "$base/api/v2/workspace" -H "Authorization: Bearer $1" >/dev/null; }

# 2. The previous release alone.
"$old_bin" "${args[@]}" migrate >>"$work/steps.log" 2>&1
ws=$("$old_bin" "${args[@]}" admin workspace create Upgrade | tail -1)
app=$("$old_bin" "${args[@]}" admin app create --workspace "$ws" --name upgrade --environment sandbox \
      --scopes actions:create,actions:read,workspace:read,quant:compute:run,quant:compute:read | tail -1)
key=$("$old_bin" "${args[@]}" admin key issue --app "$app" | tail -1)
"$old_bin" "${args[@]}" admin credits grant --workspace "$ws" --environment sandbox --credits 1000 >>"$work/steps.log" 2>&1
check "previous release starts on its own database" start "$old_bin"
check "previous release: a keyed write" write "$key" upgrade-before "$work/before.body"
check "previous release: a compute job ends" computed "$key"
stop

# 3. This release migrates and writes.
check "this release migrates the database the previous one wrote" "$new_bin" "${args[@]}" migrate
check "this release starts on it" start "$new_bin"
check "this release: a keyed write" write "$key" upgrade-during "$work/during.body"
stop

# 4. The previous release again, on the migrated database: its smoke subset.
check "previous release starts on the migrated database" start "$old_bin"
check "previous release: an authenticated read" read_workspace "$key"
check "previous release: its earlier keyed write replayed identically" replayed "$key" upgrade-before "$work/before.body"
check "previous release: this release's keyed write replayed identically" replayed "$key" upgrade-during "$work/during.body"
check "previous release: a new keyed write" write "$key" upgrade-after "$work/after.body"
check "previous release: a compute job ends" computed "$key"
stop
check "previous release: fiscus verify all" "$old_bin" "${args[@]}" verify all
check "this release: fiscus verify all" "$new_bin" "${args[@]}" verify all
if [ "$failures" -ne 0 ]; then
  echo "--- server log"; tail -20 "$work/server.log"
  echo "upgrade: $failures step(s) failed"
  exit 1
fi
echo "upgrade: the previous release serves the database this release migrated"
