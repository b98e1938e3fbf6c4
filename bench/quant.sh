#!/usr/bin/env bash
# Runs the Python peers and fiscus-quant on the same inputs in one go and prints both times and the ratio.
#   bench/quant.sh            full run (peer side about 1-2 minutes on 2 cores)
#   QUICK=1 bench/quant.sh    fewer peer repetitions
# The peer writes its inputs to $OUT's directory/peers_bench_inputs/, which the Rust side then reads.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-target/peers_bench.json}"
mkdir -p "$(dirname "$OUT")"
echo "== peer (python3 peers/bench.py --out $OUT) ==" >&2
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, when set for an old OpenBLAS, make a current numpy pick a slow kernel;
# the peer runs without them (the JSON records the BLAS kernel that ran, machine.blas).
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 peers/bench.py --out "$OUT" ${QUICK:+--quick} > /dev/null
echo "== fiscus-quant (cargo run --release --example bench) ==" >&2
cargo run --quiet --release -p fiscus-quant --example bench -- --peer "$OUT"
