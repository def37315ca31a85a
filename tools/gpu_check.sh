#!/usr/bin/env bash
# The GPU check: graphrun's GPU tests and benchmarks, built here and run on a
# machine with a GPU (which needs neither Bazel nor gRPC nor the build's
# libraries: they travel in the pack).
#
#   tools/gpu_check.sh pack          build the GPU tests, the GPU benchmark
#                                    and graphrun, and pack them with the
#                                    shared libraries they need (but CUDA's,
#                                    which the GPU machine has) into
#                                    gpu_check/pack.tar.xz (git-ignored)
#   tools/gpu_check.sh run [OUT]     on the GPU machine, from the repository
#                                    root: unpack, find CUDA's libraries
#                                    (pip's nvidia-* packages, or a toolkit),
#                                    run everything, and write OUT/report.md
#                                    with the logs beside it (OUT: $OUT, else
#                                    gpu_check/out)
#   tools/gpu_check.sh               both, on a machine that has a GPU
#
# The report lists each test binary's result (a GPU test skips, saying why,
# where no GPU is visible) and the benchmark's table: MatMul 4096^3 through
# graphrun and through cuBLAS directly (float/TF32, half, bfloat16), host
# time per GPU kernel node, host <-> GPU copies, and the device allocator.
set -euo pipefail
cd "$(dirname "$0")/.."

TESTS=(
  //runtime/gpu:cuda_probe_test
  //runtime/gpu:gpu_info_source_test
  //runtime/gpu:gpu_device_test
  //runtime/gpu:bfc_allocator_test
  //kernels/gpu:broadcast_test
  //tests:gpu_session_fake_test
  //tests:gpu_consistency_test
  //tests:gpu_models_test
)
BENCH=//bench:gpu_benchmark
CUDNN_BENCH=//bench:gpu_cudnn_benchmark
PACK_DIR=gpu_check/pack
ARCHIVE=gpu_check/pack.tar.xz

bin_path() {  # //a/b:c -> bazel-bin/a/b/c
  local label="${1#//}"
  echo "bazel-bin/${label%%:*}/${label##*:}"
}

# Libraries the GPU machine provides itself: the C library's, and the CUDA
# driver's and runtime's (the runtime and cuBLAS come from its toolkit or
# pip's nvidia-* packages).
is_provided() {
  case "$(basename "$1")" in
    linux-vdso*|ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*) return 0 ;;
    libcuda.so*|libnvidia-ml.so*|libcudart.so*|libcublas.so*|libcublasLt.so*|libcudnn*) return 0 ;;
  esac
  return 1
}

pack() {
  echo "== building" >&2
  ./bazelw build "${TESTS[@]}" "$BENCH" "$CUDNN_BENCH" //tools:graphrun >&2
  rm -rf "$PACK_DIR" "$ARCHIVE"
  mkdir -p "$PACK_DIR/bin" "$PACK_DIR/lib" "$PACK_DIR/root/tests/fixtures/models" \
    "$PACK_DIR/root/examples"
  local b
  for label in "${TESTS[@]}" "$BENCH" "$CUDNN_BENCH" //tools:graphrun; do
    b="$(bin_path "$label")"
    cp -L "$b" "$PACK_DIR/bin/"
    # Every library the loader would find here, but those the GPU machine has.
    ldd "$b" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
      is_provided "$lib" || cp -Ln "$lib" "$PACK_DIR/lib/" 2>/dev/null || true
    done
  done
  cp tests/fixtures/mlp* tests/fixtures/cnn* "$PACK_DIR/root/tests/fixtures/"
  # The models' graphs, weight lists and TensorFlow's outputs (not .pbtxt).
  cp tests/fixtures/models/MANIFEST tests/fixtures/models/*.pb tests/fixtures/models/*.weights \
    tests/fixtures/models/*.npy "$PACK_DIR/root/tests/fixtures/models/"
  cp examples/mlp.pbtxt examples/mlp_x.npy "$PACK_DIR/root/examples/"
  strip --strip-unneeded "$PACK_DIR"/lib/*.so* 2>/dev/null || true
  printf '%s\n' "${TESTS[@]}" > "$PACK_DIR/tests.txt"
  git rev-parse HEAD > "$PACK_DIR/commit.txt" 2>/dev/null || true
  tar -C gpu_check -cJf "$ARCHIVE" pack
  echo "packed $(du -sh "$PACK_DIR" | cut -f1) into $ARCHIVE ($(du -sh "$ARCHIVE" | cut -f1))" >&2
}

# CUDA's runtime and cuBLAS on the GPU machine: pip's nvidia-* packages, or a
# toolkit; printed as a library path.
cuda_library_path() {
  local dirs=()
  local py
  for py in python3 python; do
    command -v "$py" >/dev/null || continue
    while read -r d; do [[ -n "$d" ]] && dirs+=("$d"); done < <("$py" - <<'PY' 2>/dev/null
import importlib, os
for name in ["nvidia.cublas", "nvidia.cuda_runtime", "nvidia.cudnn", "nvidia.cu13", "nvidia.cuda_nvrtc"]:
    try:
        m = importlib.import_module(name)
    except Exception:
        continue
    for p in list(getattr(m, "__path__", [])):
        for sub in ("lib", "lib64"):
            if os.path.isdir(os.path.join(p, sub)):
                print(os.path.join(p, sub))
PY
)
    break
  done
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu; do
    [[ -d "$d" ]] && dirs+=("$d")
  done
  local IFS=:
  echo "${dirs[*]}"
}

# limited SECONDS LOG DIR CMD...: runs CMD in DIR, appending its output to
# LOG; past SECONDS, writes "TIMED OUT" and every thread's stack (with
# cuda-gdb or gdb, where the machine has one) to LOG, kills it and fails.
limited() {
  local seconds="$1" log="$2" dir="$3"
  shift 3
  (cd "$dir" && exec "$@") >> "$log" 2>&1 &
  local pid=$! i
  for ((i = 0; i < seconds * 10; ++i)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "TIMED OUT after ${seconds}s: $*" >> "$log"
    local debugger
    debugger="$(command -v cuda-gdb || command -v gdb || true)"
    if [[ -n "$debugger" ]]; then
      timeout 40 "$debugger" -batch -p "$pid" -ex "thread apply all bt" >> "$log" 2>&1 || true
    fi
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    return 1
  fi
  wait "$pid"
}

run_pack() {
  local out="${1:-${OUT:-gpu_check/out}}"
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  local work
  work="$(mktemp -d /tmp/graphrun_gpu_check.XXXXXX)"
  tar -C "$work" -xJf "$ARCHIVE"
  local pack="$work/pack"
  export LD_LIBRARY_PATH="$pack/lib:$(cuda_library_path)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local report="$out/report.md"
  {
    echo "# graphrun GPU check"
    echo
    echo "commit: $(cat "$pack/commit.txt" 2>/dev/null || echo unknown); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo
    echo '```'
    if command -v nvidia-smi >/dev/null; then
      nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used,utilization.gpu \
        --format=csv 2>&1 || true
    else
      echo "nvidia-smi: not on this machine"
    fi
    echo '```'
    echo
    echo "| test | result |"
    echo "| --- | --- |"
  } > "$report"
  local failed=0 label name rc
  while read -r label; do
    name="${label##*:}"
    rc=0
    (cd "$pack/root" && timeout 600 "$pack/bin/$name" --gtest_output="xml:$out/$name.xml") \
      > "$out/$name.log" 2>&1 || rc=$?
    local skipped
    skipped="$(grep -c '^\[  SKIPPED \]' "$out/$name.log" || true)"
    if [[ $rc -eq 0 ]]; then
      echo "| $label | passed$([[ $skipped != 0 ]] && echo ", $skipped skipped: $(grep -m1 -A1 'Skipped$' "$out/$name.log" | tail -1)") |" >> "$report"
    else
      failed=1
      echo "| $label | FAILED (exit $rc): $(grep -m1 -E 'Failure|FAILED|error' "$out/$name.log" | cut -c1-200) |" >> "$report"
    fi
  done < "$pack/tests.txt"
  {
    echo
    echo "## gpu_benchmark"
    echo
    echo '```'
  } >> "$report"
  # One family at a time, each under its own limit: a hang in one shows as
  # TIMED OUT with every thread's stack, and the others still run.
  local family
  for family in MatMul GpuKernelNodeHostTime Copy DeviceAllocator ModelStep; do
    limited 90 "$out/gpu_benchmark.log" "$pack/root" "$pack/bin/gpu_benchmark" \
      --benchmark_min_time=0.5 --benchmark_filter="^BM_${family}" \
      --benchmark_out="$out/gpu_benchmark_${family}.json" --benchmark_out_format=json \
      || failed=1
  done
  grep -E '^(BM_|Benchmark|-|TIMED OUT)' "$out/gpu_benchmark.log" >> "$report" || true
  {
    echo '```'
    echo
    echo "## gpu_cudnn_benchmark: graphrun's pooling and batch norm vs cuDNN's"
    echo
    echo '```'
  } >> "$report"
  limited 120 "$out/gpu_cudnn_benchmark.log" "$pack/root" "$pack/bin/gpu_cudnn_benchmark" \
    --benchmark_min_time=0.3 --benchmark_out="$out/gpu_cudnn_benchmark.json" \
    --benchmark_out_format=json || failed=1
  grep -E '^(BM_|Benchmark|-|TIMED OUT)' "$out/gpu_cudnn_benchmark.log" >> "$report" || true
  {
    echo '```'
    echo
    echo "## graphrun run on this machine's GPUs"
    echo
    echo '```'
  } >> "$report"
  local g="$pack/bin/graphrun"
  local mlp=(run examples/mlp.pbtxt --feed x=examples/mlp_x.npy --fetch probs)
  (cd "$pack/root" && timeout 120 "$g" "${mlp[@]}" --log_device_placement) >> "$report" 2>&1 \
    || failed=1
  echo '```' >> "$report"
  gpu_choice "$pack" "$report" || failed=1
  rm -rf "$work"
  echo "report: $report" >&2
  return $failed
}

# Idle-GPU choice on the real driver: CUDA_VISIBLE_DEVICES honoured, and a
# second graphrun started while a first holds the GPUs takes another one, or
# shares one saying so.
gpu_choice() {
  local pack="$1" report="$2" g="$1/bin/graphrun" failed=0
  local mlp=(run examples/mlp.pbtxt --feed x=examples/mlp_x.npy --fetch probs)
  {
    echo
    echo "## GPU choice"
    echo
    echo '```'
    echo '$ CUDA_VISIBLE_DEVICES= graphrun run ...'
    (cd "$pack/root" && CUDA_VISIBLE_DEVICES= timeout 60 "$g" "${mlp[@]}") 2>&1 || failed=1
    echo '$ CUDA_VISIBLE_DEVICES=0 graphrun run --gpus=0 ...'
    (cd "$pack/root" && CUDA_VISIBLE_DEVICES=0 timeout 60 "$g" "${mlp[@]}" --gpus=0) 2>&1 \
      || failed=1
    echo '$ graphrun run --gpus=7 ...   (no such GPU: an error)'
    (cd "$pack/root" && timeout 60 "$g" "${mlp[@]}" --gpus=7) 2>&1 && failed=1
    local claims="${TMPDIR:-/tmp}/graphrun-gpu-claims-$(id -u)"
    echo "# a first graphrun holds the GPUs for 30000 steps; a second starts once"
    echo "# the first's claim is held (a lock in $claims)"
    (cd "$pack/root" && timeout 120 "$g" "${mlp[@]}" --steps 30000 --quiet \
        > /tmp/graphrun_first.log 2>&1) &
    local first=$!
    local held=0 i f
    for i in $(seq 1 600); do
      for f in "$claims"/*; do
        [[ -e "$f" ]] || continue
        flock -n "$f" true 2>/dev/null || held=1
      done
      [[ $held -eq 1 ]] && break
      kill -0 "$first" 2>/dev/null || break
      sleep 0.05
    done
    echo "first holds a claim: $([[ $held -eq 1 ]] && echo yes || echo no)"
    echo '$ graphrun run --log_device_placement ... (second)'
    (cd "$pack/root" && timeout 60 "$g" "${mlp[@]}" --log_device_placement) 2>&1 | \
      grep -v -E '^(  |\[)' | head -30 || failed=1
    wait "$first" || failed=1
    echo "first: $(grep -c . /tmp/graphrun_first.log) lines of output; exit ok"
    echo '```'
  } >> "$report"
  return $failed
}

case "${1:-all}" in
  pack) pack ;;
  run) run_pack "${2:-}" ;;
  all) pack && run_pack "${2:-}" ;;
  -h|--help) sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0" ;;
  *) echo "usage: tools/gpu_check.sh [pack | run [OUT]]" >&2; exit 2 ;;
esac
