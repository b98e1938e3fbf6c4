#!/usr/bin/env bash
# Transcription benchmark: the five LibriVox recordings of Debian's pocketsphinx-testdata uploaded to a release
# build of Fiscus, consent recorded, and transcribed through POST /client-intelligence/calls/{uid}/transcribe-
# recording with the local runtime (Debian's libpocketsphinx3 and pocketsphinx-en-us). Prints each transcript's
# word errors, the word error rate (WER) over all five, and the WER documented for that model on these
# recordings: PocketSphinx's own expected output for them (librivox/test-lm.match, from its regression test
# with the same model) scored against their reference transcription, with the same scorer. Also prints the
# real-time factor (seconds of processing per second of audio). Exits 1 when the WER is above the documented
# one. Usage: bench/transcription.sh
set -euo pipefail
cd "$(dirname "$0")/.."
data=/usr/share/pocketsphinx/test/data/librivox
if [ ! -d "$data" ] || [ ! -e /usr/lib/x86_64-linux-gnu/libpocketsphinx.so.3 ] && [ ! -e /usr/lib/aarch64-linux-gnu/libpocketsphinx.so.3 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpocketsphinx3 pocketsphinx-en-us pocketsphinx-testdata >/dev/null
  else
    echo "needs Debian's libpocketsphinx3, pocketsphinx-en-us and pocketsphinx-testdata"; exit 1
  fi
fi
nice -n 10 cargo build --release -p fiscus >/dev/null 2>&1
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/fiscus"
work=$(mktemp -d -p "$PWD/target" bench.XXXXXX)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

port=18183
ws=$("$bin" --data-dir "$work/db" admin workspace create Transcription | tail -1)
app=$("$bin" --data-dir "$work/db" admin app create --workspace "$ws" --name bench --environment sandbox \
      --scopes client:intelligence:write,client:intelligence:run,client:intelligence:read | tail -1)
key=$("$bin" --data-dir "$work/db" admin key issue --app "$app" | tail -1)
"$bin" --data-dir "$work/db" serve --bind "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do curl -sf "127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done

python3 bench/transcription_client.py "http://127.0.0.1:$port" "$key" "$data"
