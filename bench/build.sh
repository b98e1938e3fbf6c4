#!/usr/bin/env bash
# Build-time benchmark: the release binary built from a fresh clone (registry warm, no target/), then rebuilt
# after touching one file of one area, for a baseline revision and for this checkout's HEAD, in one run on
# the same machine (interleaved: baseline fresh, HEAD fresh, baseline touch, HEAD touch), so the ratios are
# what to compare. Each clone has its own target directory under $work.
#
#   bench/build.sh                                   # baseline 8d0e1c0 (before the crate split)
#   bench/build.sh REV BASE_TOUCH HEAD_TOUCH [HEAD_TOUCH2]
#   BENCH_BUILD_DIR=/tmp/bb TOUCH_ONLY=1 bench/build.sh   # touches only, on the clones a run left there
#
# BASE_TOUCH is the touched file's path in the baseline tree, HEAD_TOUCH the same file's path at HEAD;
# HEAD_TOUCH2, when given, is a second file touched at HEAD (another area) and reported on its own. Each
# touch is timed RUNS times (default 3) and its median printed; a fresh build is timed once.
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev="${1:-8d0e1c0}"
base_touch="${2:-crates/fiscus-server/src/investment/tax.rs}"
head_touch="${3:-crates/fiscus-investment/src/tax.rs}"
head_touch2="${4:-crates/fiscus-data/src/routes/economics.rs}"
work="${BENCH_BUILD_DIR:-$(mktemp -d /tmp/fiscus-build-bench.XXXXXX)}"
runs="${RUNS:-3}"  # touches per file; the median is reported
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

touch_once() { # dir file -> seconds; the tree is rebuilt clean afterwards (untimed), so the next touch
  # measures only its own file's crates. The edit changes code a function runs (the first `format!("`
  # message gets a character), as a real edit does: an incremental build reuses everything a comment or an
  # unused function leaves unchanged, and would measure nothing.
  grep -q 'format!("' "$1/$2" || { echo "no format!(\" in $2 to edit" >&2; exit 1; }
  sed -i '0,/format!("/s//format!("~/' "$1/$2"
  timed "$1"
  git -C "$1" checkout --quiet -- "$2"
  timed "$1" >/dev/null
}

touch_build() { # dir file -> median seconds of $runs touches
  [ -f "$1/$2" ] || { echo "no $2 in $1" >&2; exit 1; }
  local all=()
  for _ in $(seq "$runs"); do all+=("$(touch_once "$1" "$2")"); done
  printf '%s\n' "${all[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

if [ -z "${TOUCH_ONLY:-}" ]; then
  clone "$work/base" "$base_rev"
  clone "$work/head" "$head_rev"
fi
echo "baseline $base_rev, HEAD $(git -C "$work/head" rev-parse --short HEAD); $(nproc) cores; clones in $work"
if [ -z "${TOUCH_ONLY:-}" ]; then
  base_fresh=$(timed "$work/base");  echo "fresh release build   baseline ${base_fresh} s"
  head_fresh=$(timed "$work/head");  echo "fresh release build   HEAD     ${head_fresh} s"
  python3 -c "print(f'fresh: HEAD {$head_fresh:.0f} s = {$head_fresh/60:.1f} min ({$head_fresh/$base_fresh:.2f}x baseline)')"
else
  timed "$work/base" >/dev/null
  timed "$work/head" >/dev/null
fi
base_touch_s=$(touch_build "$work/base" "$base_touch"); echo "touch $base_touch: baseline ${base_touch_s} s (median of $runs)"
head_touch_s=$(touch_build "$work/head" "$head_touch"); echo "touch $head_touch: HEAD ${head_touch_s} s (median of $runs)"
python3 -c "print(f'touch one area: HEAD {$head_touch_s:.0f} s = {$head_touch_s/$base_touch_s*100:.0f}% of baseline {$base_touch_s:.0f} s')"
if [ -n "$head_touch2" ]; then
  head_touch2_s=$(touch_build "$work/head" "$head_touch2"); echo "touch $head_touch2: HEAD ${head_touch2_s} s (median of $runs)"
  python3 -c "print(f'touch another area: HEAD {$head_touch2_s:.0f} s = {$head_touch2_s/$base_touch_s*100:.0f}% of baseline {$base_touch_s:.0f} s')"
fi
echo "(the clones stay in $work for bench/http.sh-style comparisons and TOUCH_ONLY=1 reruns; remove it when done)"
