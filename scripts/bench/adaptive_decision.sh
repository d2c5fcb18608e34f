#!/usr/bin/env bash
# Issue 35: the CPU an adaptive routing decision costs with 1,000,000 verifications stored (BENCHMARKS.md,
# "Adaptive routing: the cost of a decision"). Builds the gateway in release mode and runs its hidden
# `bench-adaptive` command: it seeds a SQLite store in a temporary directory, then times, in one process,
# 20,000 decisions (the open-verification lookup on the verifications table, the context's evidence, the
# Thompson draw), the draw alone, and the evidence write a start or an outcome adds.
#
#   scripts/bench/adaptive_decision.sh                     # release build, 1M stored
#   scripts/bench/adaptive_decision.sh --stored 100000     # options go to `gateway bench-adaptive`
#   GATEWAY_BENCH_NO_BUILD=1 scripts/bench/adaptive_decision.sh   # use .build/release/gateway as it is
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${GATEWAY_BENCH_NO_BUILD:-}" ]; then swift build -c release --product gateway >&2; fi
.build/release/gateway bench-adaptive "$@"
