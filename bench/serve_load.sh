#!/usr/bin/env bash
# Load test of `canrun serve`'s list endpoint: 10,000 synthetic rows (tools/make_synthetic_results.py),
# wrk over loopback with 32 connections for a fixed time (which bounds the requests), RUNS times (2) per server
# setting; prints p50/p95 latency and requests/s, and the server's resident memory and open file
# descriptors after a warm-up and after each run, to show neither grows. Target: p95 under 50 ms.
# Two settings: the default (answers kept per dataset snapshot, as the page's repeated lists are
# served) and --cache-mib 0 (every request filtered, sorted and serialized afresh).
#
#   bash bench/serve_load.sh                       # uses build/canrun
#   CANRUN_BIN=build-space/canrun ROWS=10000 CONNECTIONS=32 SECONDS_PER_RUN=20 RUNS=2 CACHE_SETTINGS="64 0" bash bench/serve_load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CANRUN_BIN=${CANRUN_BIN:-build/canrun}
ROWS=${ROWS:-10000}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-20}
CACHE_SETTINGS=${CACHE_SETTINGS:-64 0}  # --cache-mib values, one server each
RUNS=${RUNS:-2}
command -v wrk >/dev/null || { echo "wrk is missing: run scripts/install_deps.sh" >&2; exit 1; }

work=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

python3 tools/make_synthetic_results.py --out "$work/results" --rows "$ROWS" >/dev/null

usage() {
  local fds
  fds=$(ls "/proc/$server/fd" | wc -l)
  awk -v label="$1" -v fds="$fds" '/^VmRSS/ {printf "  %-18s RSS %.1f MiB, open fds %d\n", label, $2 / 1024, fds}' \
    "/proc/$server/status"
}

for cache_mib in $CACHE_SETTINGS; do
  "$CANRUN_BIN" serve --data "$work/results" --port 0 --cache-mib "$cache_mib" >"$work/serve.out" 2>"$work/serve.err" &
  server=$!
  for _ in $(seq 100); do grep -q "http://" "$work/serve.out" && break; sleep 0.1; done
  url=$(grep -o 'http://[^ ]*' "$work/serve.out")
  base=${url%/}

  # Warm-up: 200 requests, so the allocator and thread pool reach their working size first.
  total=$(python3 - "$base" <<'PY'
import json, sys, urllib.request
for _ in range(200):
    body = json.load(urllib.request.urlopen(sys.argv[1] + "/api/rows?view=tested&sort=wall_time_s"))
print(body["total"])
PY
)
  echo "--cache-mib $cache_mib: server $url, $ROWS synthetic rows ($total in the text-generation 'tested' view);" \
    "$THREADS wrk threads, $CONNECTIONS connections"
  sleep 1
  usage "after warm-up:"
  for run in $(seq "$RUNS"); do
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" --timeout 5s -s bench/serve_load.lua "$base" \
      | grep '^RESULT' | sed "s/^RESULT/  run $run:/"
    sleep 2  # let the server notice the closed connections
    usage "after run $run:"
  done
  kill "$server" && wait "$server" 2>/dev/null || true
  server=""
done
