#!/usr/bin/env bash
# Issue 35: the CPU an adaptive routing decision costs with 1,000,000 verifications stored (BENCHMARKS.md,
# "Adaptive routing: the cost of a decision"). Seeds a SQLite store in a temporary directory, then times, in
# one process, 20,000 decisions (the open-verification lookup on the verifications table, the cached evidence,
# the Thompson draw), the draw alone, and the evidence write a start or an outcome adds.
#
#   scripts/bench/adaptive_decision.sh              # debug build (an upper bound), 1M stored
#   scripts/bench/adaptive_decision.sh release      # release build (-Xswiftc -enable-testing)
#   GATEWAY_BENCH_STORED=100000 scripts/bench/adaptive_decision.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
configuration=(-c debug)
if [ "${1:-}" = release ]; then configuration=(-c release -Xswiftc -enable-testing); fi
GATEWAY_BENCH_ADAPTIVE=1 swift test "${configuration[@]}" --filter AdaptiveDecisionBenchmark 2>&1 | grep -E "^RESULT|passed|failed|error"
