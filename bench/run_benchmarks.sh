#!/usr/bin/env bash
# Reproduces the README's performance figures: builds the benchmarks with the
# default (machine-optimized) configuration and runs each with repetitions,
# reporting medians, then prints the placer's quality tables (HEFT random-graph
# grid, ~15 s).
#   bench/run_benchmarks.sh [--benchmark_filter=REGEX]
set -euo pipefail
cd "$(dirname "$0")/.."
./bazelw build //bench:all
for b in import_benchmark runtime_benchmark multi_device_benchmark placer_benchmark; do
  echo "== $b"
  "bazel-bin/bench/$b" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true "$@" | grep -E 'median|^Benchmark|^-'
done
echo "== placer_benchmark --quality"
bazel-bin/bench/placer_benchmark --quality
