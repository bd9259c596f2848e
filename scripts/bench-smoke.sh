#!/usr/bin/env bash
# Every `npm run bench:*` once, at a small size, each under a time limit: a benchmark that stops
# ending by itself (a timer or worker left referenced) or breaks fails CI here. The figures printed
# are not checked (a shared CI machine's timings say little); docs/performance.md holds measured ones.
set -euo pipefail
cd "$(dirname "$0")/.."
# Time targets are printed, not judged, here (bench/support/timing-verdict.ts): a crash or a hang fails.
export BENCH_SMOKE=1

run() {
  local limit=$1 script=$2
  shift 2
  echo "== npm run $script $* (limit ${limit} s)"
  if ! timeout --kill-after=10 "$limit" npm run --silent "$script" -- "$@"; then
    echo "bench-smoke: npm run $script $* failed or did not end within ${limit} s" >&2
    exit 1
  fi
}

run 120 bench:schema
run 120 bench:spec
run 120 bench:ledger
run 180 bench:stall --runs 1
run 180 bench:bounded --runs 1
run 180 bench:audit --lines 20000 --runs 1
run 300 bench:turn --v1-only
run 300 bench:queue
run 420 bench:scale --tasks 5 --rounds 1 --turn-ms 50
run 300 bench:heap --tasks 60 --every 30 --parallel 5
run 300 bench:lists --rounds 1
run 240 bench:cold --runs 3
run 300 bench:worktrees --files 500 --runs 3 --width 3
