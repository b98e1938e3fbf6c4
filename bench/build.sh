#!/usr/bin/env bash
# Build-time benchmark: the release binary built from a fresh clone (registry warm, no target/), then rebuilt
# after touching one file of one area, for a baseline revision and for this checkout's HEAD, in one run on
# the same machine (interleaved: baseline fresh, HEAD fresh, baseline touch, HEAD touch), so the ratios are
# what to compare. Each clone has its own target directory under $work.
#
#   bench/build.sh                                   # baseline 8d0e1c0 (before the crate split)
#   bench/build.sh REV BASE_TOUCH HEAD_TOUCH [HEAD_TOUCH2]
#
# BASE_TOUCH is the touched file's path in the baseline tree, HEAD_TOUCH the same file's path at HEAD;
# HEAD_TOUCH2, when given, is a second file touched at HEAD (another area) and reported on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev="${1:-8d0e1c0}"
base_touch="${2:-crates/fiscus-server/src/investment/tax.rs}"
head_touch="${3:-crates/fiscus-investment/src/tax.rs}"
head_touch2="${4:-crates/fiscus-data/src/routes/economics.rs}"
work="${BENCH_BUILD_DIR:-$(mktemp -d /tmp/fiscus-build-bench.XXXXXX)}"
repo="$PWD"
head_rev=$(git rev-parse --short HEAD)

clone() { # dir rev
  rm -rf "$1"
  git clone --quiet --no-hardlinks "$repo" "$1"
  git -C "$1" checkout --quiet "$2"
}

timed() { # dir label -> prints seconds
  local start end
  start=$(date +%s.%N)
  (cd "$1" && CARGO_TARGET_DIR="$1/target" cargo build --release --quiet -p fiscus >/dev/null 2>&1)
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.0f}')"
}

touch_build() { # dir file
  [ -f "$1/$2" ] || { echo "no $2 in $1" >&2; exit 1; }
  echo "// touched by bench/build.sh" >> "$1/$2"
  timed "$1"
  git -C "$1" checkout --quiet -- "$2"
}

clone "$work/base" "$base_rev"
clone "$work/head" "$head_rev"
echo "baseline $base_rev, HEAD $head_rev; $(nproc) cores; clones in $work"
base_fresh=$(timed "$work/base");  echo "fresh release build   baseline ${base_fresh} s"
head_fresh=$(timed "$work/head");  echo "fresh release build   HEAD     ${head_fresh} s"
base_touch_s=$(touch_build "$work/base" "$base_touch"); echo "touch $base_touch: baseline ${base_touch_s} s"
head_touch_s=$(touch_build "$work/head" "$head_touch"); echo "touch $head_touch: HEAD ${head_touch_s} s"
if [ -n "$head_touch2" ]; then
  head_touch2_s=$(touch_build "$work/head" "$head_touch2"); echo "touch $head_touch2: HEAD ${head_touch2_s} s"
fi
python3 - "$base_fresh" "$head_fresh" "$base_touch_s" "$head_touch_s" <<'PY'
import sys
bf, hf, bt, ht = map(float, sys.argv[1:])
print(f"fresh: HEAD {hf:.0f} s = {hf/60:.1f} min ({hf/bf:.2f}x baseline)")
print(f"touch one area: HEAD {ht:.0f} s = {ht/bt*100:.0f}% of baseline's {bt:.0f} s")
PY
echo "(the clones stay in $work for bench/http.sh-style comparisons; remove it when done)"
