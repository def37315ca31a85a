#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer + AddressSanitizer +
# UndefinedBehaviorSanitizer (signed overflow, shifts, float-to-int casts,
# bad enum/bool loads...; every finding stops the run).
#
#   tools/fuzz.sh [SECONDS] [graphdef|placer|shapes|wire|bundle]   (default 60, graphdef)
#
# graphdef: the GraphDef parsers and importer (//graph/fuzz:graphdef_fuzzer);
# placer: device specs, cluster files, cost profiles and rendezvous keys
# (//placer/fuzz:placer_inputs_fuzzer); shapes: shape functions on fuzzed
# ops, placeholder shapes and int constants (//graph/fuzz:shape_fuzzer);
# wire: RecvTensor responses read straight into tensors and the data
# plane's headers, network input beside protobuf's parsers
# (//distributed/fuzz:wire_fuzzer); bundle: checkpoint V2 readers, the
# .index table, its protos and the tensor bytes (//graph/checkpoint:bundle_fuzzer). Builds the target with clang in its
# own Bazel output base (so the main gcc build cache is untouched), then
# fuzzes from the committed corpus. New crashes land in fuzz-out/<target>/
# (crash-*), with the input that triggered them; add fixed ones to the
# corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
which="${2:-graphdef}"
case "$which" in
  graphdef) target=//graph/fuzz:graphdef_fuzzer; corpus=graph/fuzz/corpus ;;
  placer) target=//placer/fuzz:placer_inputs_fuzzer; corpus=placer/fuzz/corpus ;;
  shapes) target=//graph/fuzz:shape_fuzzer; corpus=graph/fuzz/shape_corpus ;;
  wire) target=//distributed/fuzz:wire_fuzzer; corpus=distributed/fuzz/corpus ;;
  bundle) target=//graph/checkpoint:bundle_fuzzer; corpus=graph/checkpoint/fuzz_corpus ;;
  *) echo "fuzz.sh: unknown target '$which' (graphdef, placer, shapes, wire or bundle)" >&2; exit 2 ;;
esac

if ! command -v clang >/dev/null || ! dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "ok installed"; then
  echo "fuzz.sh: installing clang and its fuzzer runtime" >&2
  apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang libclang-rt-14-dev >&2
fi
./bazelw --version >/dev/null  # installs the build's packages if missing

out_base="${TMPDIR:-/tmp}/graphrun-fuzz-bazel"
CC=clang CXX=clang++ bazel --output_base="$out_base" build --config=fuzz "$target"
bin="$(bazel --output_base="$out_base" info --config=fuzz bazel-bin)/${target#//}"
bin="${bin/://}"

out="fuzz-out/$which"
mkdir -p "$out/corpus"
cp -n "$corpus"/* "$out/corpus/" 2>/dev/null || true
# rss_limit: the importer must not need more than this for any input.
# UBSan: report with a stack and stop, so libFuzzer keeps the input.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
"$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus"
