#!/usr/bin/env bash
# Import at the database's own bulk speed (issue 34): `fiscus import prices` of a generated long-form OHLCV file
# (every row validated, hashed into the dataset's content hash, its quality report written, sealed and audited,
# in one transaction) against each database's own bulk loader into the same keyed table, in the same run:
#   - SQLite: the sqlite3 shell's `.import` into Fiscus's prices table (its key and index, WAL); target >= 0.8x.
#   - PostgreSQL: psql's `\copy` into Fiscus's prices table (same DDL, a database of its own); target >= 0.5x.
#   - Peak RSS of each import (GNU time's maximum resident set size); target <= 100 MB.
# For reference: the loaders into a plain table of eight TEXT columns (no key).
#
# Usage: bench/import.sh [rows, default 500000]. PostgreSQL at $FISCUS_BENCH_DATABASE_URL (default
# postgres://postgres@127.0.0.1:5432/test; fresh databases are created and dropped). Exits 1 when a target fails.
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${1:-500000}"
pg_admin="${FISCUS_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"

command -v sqlite3 >/dev/null || { apt-get install -y sqlite3 >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y sqlite3 >/dev/null); }
[ -x /usr/bin/time ] || { apt-get install -y time >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y time >/dev/null); }
nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
bin="$target_dir/release/fiscus"
work=$(mktemp -d -p "$PWD/target" bench.XXXXXX)  # on the same disk as the databases under test
cleanup() {
  rm -rf "$work"
  for db in fiscus_bench_import fiscus_bench_keyed; do
    psql "$pg_admin" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  done
}
trap cleanup EXIT
now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }
# Runs a command under GNU time; prints its wall seconds' start and end into $t0 $t1 and its peak RSS (KiB) into $rss.
timed() {
  t0=$(now)
  /usr/bin/time -f "%M" -o "$work/rss" "$@" >/dev/null 2>"$work/run.log" || { cat "$work/run.log"; exit 1; }
  t1=$(now)
  rss=$(tail -1 "$work/rss")
}

# The file: 100 instruments x ($rows / 100) business days of OHLCV bars, long form, and their reference data.
symbols=100
days=$((rows / symbols))
python3 - "$work" "$symbols" "$days" <<'PY'
import datetime, random, sys
work, symbols, days = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(7)
with open(f"{work}/instruments.csv", "w") as f:
    f.write("symbol,name,asset_class,currency\n")
    for s in range(symbols):
        f.write(f"B{s:03d},Bench {s},equity,USD\n")
dates, d = [], datetime.date(1990, 1, 1)
while len(dates) < days:
    if d.weekday() < 5:
        dates.append(d.isoformat())
    d += datetime.timedelta(days=1)
with open(f"{work}/prices.csv", "w") as f:
    f.write("symbol,date,open,high,low,close,adj_close,volume\n")
    for s in range(symbols):
        p = 100.0
        for day in dates:
            o = p; c = max(0.01, p * (1 + rng.gauss(0, 0.01)))
            h = max(o, c) * 1.005; l = min(o, c) * 0.995
            f.write(f"B{s:03d},{day},{o:.4f},{h:.4f},{l:.4f},{c:.4f},{c:.4f},{rng.randint(1000, 10**7)}\n")
            p = c
PY
lines=$(($(wc -l < "$work/prices.csv") - 1))
echo "Fiscus import benchmark: $lines price rows ($symbols instruments x $days days, $(($(stat -c %s "$work/prices.csv") / 1048576)) MiB), $(nproc) cores"
# The rows as Fiscus stores them (workspace, instrument id, dataset number first), for the loaders' keyed runs.
awk -F, -v OFS=, 'NR > 1 { $1 = "wsp_01M8BENCH0000000000000000W,ins_01M8BENCH000000000000" $1 ",1"; print }' \
  "$work/prices.csv" > "$work/keyed.csv"

# SQLite.
sqlite3 "$work/plain.sqlite" "CREATE TABLE prices (symbol TEXT, date TEXT, open TEXT, high TEXT, low TEXT, close TEXT, adj_close TEXT, volume TEXT)"
timed sqlite3 "$work/plain.sqlite" ".import --csv --skip 1 $work/prices.csv prices"
shell_rate=$(rate "$lines" "$t0" "$t1")
ws=$("$bin" --data-dir "$work/sqlite" admin workspace create Bench | tail -1)
sqlite3 "$work/keyed.sqlite" "PRAGMA journal_mode = WAL" >/dev/null
sqlite3 "$work/keyed.sqlite" "$(sqlite3 "$work/sqlite/fiscus.db" ".schema prices")"
timed sqlite3 "$work/keyed.sqlite" ".import --csv $work/keyed.csv prices"
keyed_rate=$(rate "$lines" "$t0" "$t1")
"$bin" --data-dir "$work/sqlite" import instruments "$work/instruments.csv" --workspace "$ws" >/dev/null 2>&1
timed "$bin" --data-dir "$work/sqlite" import prices "$work/prices.csv" --workspace "$ws" --source bench --licence CC0-1.0
fiscus_sqlite_rate=$(rate "$lines" "$t0" "$t1")
sqlite_rss=$rss

# PostgreSQL: Fiscus in a database of its own, and \copy into the same prices DDL in another.
for db in fiscus_bench_import fiscus_bench_keyed; do
  psql "$pg_admin" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
  psql "$pg_admin" -qc "CREATE DATABASE $db" >/dev/null
done
pg_url="${pg_admin%/*}/fiscus_bench_import"
keyed_url="${pg_admin%/*}/fiscus_bench_keyed"
ws_pg=$("$bin" --data-dir "$work/pg" --database-url "$pg_url" admin workspace create Bench | tail -1)
pg_dump -s -t prices "$pg_url" | psql -q "$keyed_url" >/dev/null
psql "$keyed_url" -qc "CREATE TABLE plain_prices (symbol TEXT, date TEXT, open TEXT, high TEXT, low TEXT, close TEXT, adj_close TEXT, volume TEXT)"
timed psql "$keyed_url" -qc "\\copy plain_prices FROM '$work/prices.csv' WITH (FORMAT csv, HEADER true)"
copy_plain_rate=$(rate "$lines" "$t0" "$t1")
psql "$keyed_url" -qc "CHECKPOINT" >/dev/null
timed psql "$keyed_url" -qc "\\copy prices FROM '$work/keyed.csv' WITH (FORMAT csv)"
copy_rate=$(rate "$lines" "$t0" "$t1")
"$bin" --data-dir "$work/pg" --database-url "$pg_url" import instruments "$work/instruments.csv" --workspace "$ws_pg" >/dev/null 2>&1
psql "$pg_url" -qc "CHECKPOINT" >/dev/null
timed "$bin" --data-dir "$work/pg" --database-url "$pg_url" import prices "$work/prices.csv" --workspace "$ws_pg" --source bench --licence CC0-1.0
fiscus_pg_rate=$(rate "$lines" "$t0" "$t1")
pg_rss=$rss

row() { printf '%-62s %12s %10s\n' "$@"; }
echo
row "run" "rows/s" "peak RSS"
row "sqlite3 shell .import (plain table)" "$shell_rate" "-"
row "sqlite3 shell .import (Fiscus's keyed prices table)" "$keyed_rate" "-"
row "fiscus import prices (SQLite: validated, hashed, sealed)" "$fiscus_sqlite_rate" "$((sqlite_rss / 1024)) MB"
row "psql \\copy (plain table)" "$copy_plain_rate" "-"
row "psql \\copy (Fiscus's keyed prices table)" "$copy_rate" "-"
row "fiscus import prices (PostgreSQL)" "$fiscus_pg_rate" "$((pg_rss / 1024)) MB"

failed=0
check() { # NAME MEASURED BASELINE MIN_RATIO
  local ratio verdict
  ratio=$(awk -v m="$2" -v b="$3" 'BEGIN { printf "%.2f", (b > 0 ? m / b : 0) }')
  verdict=$(awk -v r="$ratio" -v t="$4" 'BEGIN { print (r >= t ? "PASS" : "FAIL") }')
  [ "$verdict" = FAIL ] && failed=1
  echo "$verdict $1: ${ratio}x (target >= $4x)"
}
rss_check() { # NAME KIB
  local verdict=PASS
  [ "$2" -gt $((100 * 1024)) ] && { verdict=FAIL; failed=1; }
  echo "$verdict $1 peak RSS: $(($2 / 1024)) MB (target <= 100 MB)"
}
echo
check "import on SQLite vs .import into the keyed table" "$fiscus_sqlite_rate" "$keyed_rate" 0.8
check "import on PostgreSQL vs \\copy into the keyed table" "$fiscus_pg_rate" "$copy_rate" 0.5
rss_check "import on SQLite" "$sqlite_rss"
rss_check "import on PostgreSQL" "$pg_rss"
echo "report import on SQLite vs .import into a plain table: $(awk -v m="$fiscus_sqlite_rate" -v b="$shell_rate" 'BEGIN { printf "%.2f", m / b }')x"
echo "report import on PostgreSQL vs \\copy into a plain table: $(awk -v m="$fiscus_pg_rate" -v b="$copy_plain_rate" 'BEGIN { printf "%.2f", m / b }')x"
exit $failed
