#!/usr/bin/env bash
# Coverage-guided fuzzing of the GraphDef importer with libFuzzer + ASan.
#
#   tools/fuzz.sh [SECONDS]     (default 60)
#
# Builds //graph/fuzz:graphdef_fuzzer with clang in its own Bazel output base
# (so the main gcc build cache is untouched), then fuzzes from the committed
# corpus. New crashes land in fuzz-out/ (crash-*), with the input that
# triggered them; add fixed ones to graph/fuzz/corpus/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"

if ! command -v clang >/dev/null || ! dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "ok installed"; then
  echo "fuzz.sh: installing clang and its fuzzer runtime" >&2
  apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang libclang-rt-14-dev >&2
fi
./bazelw --version >/dev/null  # installs the build's packages if missing

out_base="${TMPDIR:-/tmp}/graphrun-fuzz-bazel"
CC=clang CXX=clang++ bazel --output_base="$out_base" build --config=fuzz \
  //graph/fuzz:graphdef_fuzzer
bin="$(bazel --output_base="$out_base" info --config=fuzz bazel-bin)/graph/fuzz/graphdef_fuzzer"

mkdir -p fuzz-out/corpus
cp -n graph/fuzz/corpus/* fuzz-out/corpus/ 2>/dev/null || true
# rss_limit: the importer must not need more than this for any input.
"$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix=fuzz-out/ -print_final_stats=1 fuzz-out/corpus
