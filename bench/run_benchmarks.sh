#!/usr/bin/env bash
# Regenerates the performance figures README.md quotes. One command:
#
#   bench/run_benchmarks.sh [--drivers] [--benchmark_filter=REGEX ...]
#
# Always (no TensorFlow needed; builds //bench:all and //tools:graphrun with
# the default, machine-optimized configuration; flags other than --drivers go
# to every Google Benchmark binary):
#   - Google Benchmark binaries, 5 repetitions (conv benchmarks 3), medians:
#       import_benchmark, runtime_benchmark, multi_device_benchmark,
#       placer_benchmark          README "Runtime and placer benchmarks"
#                                 (runtime_benchmark's MlpStep rows: "Training")
#       conv_benchmark            kernels/README.md; run twice: as built, and
#                                 with GRAPHRUN_CONV2D_ALGORITHM=direct (no
#                                 Winograd), whose eigen and graphrun_onednn
#                                 rows compare the im2col + Eigen path with
#                                 oneDNN's direct convolution
#       conv_grad_benchmark       kernels/README.md, README "Training"
#       gpu_benchmark, its fake-GPU allocator rows only
#         (BM_DeviceAllocator/0, BM_DeviceAllocatorSteps/0)   README "GPUs"
#     runtime_benchmark and multi_device_benchmark print an `optimizer`
#     counter on every row: 1 = the default graph optimizer ran, 0 = it was
#     off (the executor-overhead and cross-device rows, whose graphs it
#     would fold into one Const).
#   - placer_benchmark --quality  README "Runtime and placer benchmarks"
#   - msr_placement_benchmark     README "graphrun place and graphrun partition"
#   - bench/checkpoint_vs_tensorflow.py, only when $TF_PYTHON (default
#     /work/tfvenv/bin/python) imports TensorFlow     README "Training"
#
# With --drivers, also the side-by-side drivers below, one after another
# (they take most of the time; they need TensorFlow: tf_side_by_side.sh
# installs it and ONNX Runtime into a venv). Each can be run alone:
#   bench/tf_side_by_side.sh --rounds 3 --steps 20
#       README "Next to TensorFlow and ONNX Runtime on CPU" (the table and
#       its notes: µs per node with the optimizers off)
#   $TF_PYTHON bench/loop_vs_tensorflow.py --rounds 5
#       README "Loops and conds"
#   $TF_PYTHON bench/train_vs_tensorflow.py --rounds 3
#       README "Training" (PyTorch rows where PyTorch is installed:
#       bench/train_torch_peer.py)
#   $TF_PYTHON bench/checkpoint_vs_tensorflow.py
#       README "Training" (checkpoints)
#   $TF_PYTHON bench/models_vs_tensorflow.py
#       README "Real models" (the op-family models next to TensorFlow)
#   $TF_PYTHON bench/saved_model_load_vs_tensorflow.py
#       README "SavedModels" (load to first output, signature step)
#   $TF_PYTHON bench/ps_vs_tensorflow.py; $TF_PYTHON bench/ps_placement_bytes.py;
#   $TF_PYTHON bench/ps_scale_model.py
#       README "Parameter servers, next to TensorFlow's cluster"
#   $TF_PYTHON bench/allreduce_vs_gloo.py --ranks 2 --sizes_mb 1,16,64 --reps 5
#       README "Ring allreduce, next to gloo" (needs PyTorch)
#   $TF_PYTHON bench/replicas_vs_ddp.py --rounds 3 --steps 60 --models mlp (and
#   --steps 30 --models cnn); $TF_PYTHON bench/replicas_overlap.py --runs 5;
#   python3 bench/allreduce_scale_model.py
#       README "Data-parallel replicas, next to PyTorch DDP" (DDP's column
#       needs PyTorch) and "Data-parallel training at scale, a model"
#   $TF_PYTHON bench/python_vs_tensorflow.py (after installing the wheel:
#   $TF_PYTHON -m pip install --no-deps --force-reinstall bazel-bin/python/graphrun-*.whl)
#       README "Python"
#   bench/distributed_side_by_side.sh
#       README "Several workers, next to TensorFlow's gRPC runtime" (first
#       table, goal lines, per-step table, dead and frozen worker)
#   bazel-bin/bench/distributed_benchmark --graphrun=bazel-bin/tools/graphrun \
#       --only=transfer --sizes_mb=16,64,256,1024 --methods=plain,base,none,fp16 --reps=7
#       README "Several workers" (graphrun alone, second table)
#
# Not run here: the H200 figures (README "On an H200") come from
# tools/gpu_check.sh on a GPU machine, which runs bench/gpu_benchmark; that
# run's report is committed as bench/results/h200_gpu_check_run2.md.
set -euo pipefail
cd "$(dirname "$0")/.."

drivers=0
args=()
for arg in "$@"; do
  case "$arg" in
    --drivers) drivers=1 ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) args+=("$arg") ;;
  esac
done
tf_python="${TF_PYTHON:-/work/tfvenv/bin/python}"

./bazelw build //bench:all //tools:graphrun

# Medians only (plus the header lines), for benchmark $1 with flags $2...
run() {
  local b="$1"
  shift
  echo "== $b $*"
  "bazel-bin/bench/$b" --benchmark_report_aggregates_only=true "$@" ${args[@]+"${args[@]}"} |
    { grep -E 'median|^Benchmark|^-' || true; }
}

for b in import_benchmark runtime_benchmark multi_device_benchmark placer_benchmark; do
  run "$b" --benchmark_repetitions=5
done
run conv_benchmark --benchmark_repetitions=3
echo "== GRAPHRUN_CONV2D_ALGORITHM=direct"
GRAPHRUN_CONV2D_ALGORITHM=direct run conv_benchmark --benchmark_repetitions=3 \
  --benchmark_filter='/(eigen|graphrun_onednn)/'
run conv_grad_benchmark --benchmark_repetitions=3
run gpu_benchmark --benchmark_repetitions=5 --benchmark_filter='^BM_DeviceAllocator(Steps)?/0$'

echo "== placer_benchmark --quality"
bazel-bin/bench/placer_benchmark --quality
echo "== msr_placement_benchmark"
bazel-bin/bench/msr_placement_benchmark

if "$tf_python" -c 'import tensorflow' >/dev/null 2>&1; then
  echo "== checkpoint_vs_tensorflow.py"
  "$tf_python" bench/checkpoint_vs_tensorflow.py
else
  echo "== checkpoint_vs_tensorflow.py skipped: $tf_python cannot import tensorflow"
fi

if ((drivers)); then
  echo "== tf_side_by_side.sh"
  bench/tf_side_by_side.sh --rounds 3 --steps 20
  echo "== loop_vs_tensorflow.py"
  "$tf_python" bench/loop_vs_tensorflow.py --rounds 5
  echo "== train_vs_tensorflow.py"
  "$tf_python" bench/train_vs_tensorflow.py --rounds 3
  for driver in models_vs_tensorflow.py saved_model_load_vs_tensorflow.py ps_vs_tensorflow.py \
      ps_placement_bytes.py ps_scale_model.py; do
    echo "== $driver"
    "$tf_python" "bench/$driver"
  done
  if "$tf_python" -c "import torch" 2>/dev/null; then
    echo "== allreduce_vs_gloo.py"
    "$tf_python" bench/allreduce_vs_gloo.py --ranks 2 --sizes_mb 1,16,64 --reps 5
  else
    echo "== allreduce_vs_gloo.py skipped: $tf_python cannot import torch"
  fi
  # DDP's column only where PyTorch imports.
  echo "== replicas_vs_ddp.py"
  "$tf_python" bench/replicas_vs_ddp.py --rounds 3 --steps 60 --models mlp
  "$tf_python" bench/replicas_vs_ddp.py --rounds 3 --steps 30 --models cnn
  echo "== replicas_overlap.py"
  "$tf_python" bench/replicas_overlap.py --runs 5 --steps 30
  echo "== allreduce_scale_model.py"
  python3 bench/allreduce_scale_model.py
  echo "== python_vs_tensorflow.py"
  ./bazelw build //python:wheel
  "$tf_python" -m pip install -q --no-deps --force-reinstall bazel-bin/python/graphrun-*.whl
  "$tf_python" bench/python_vs_tensorflow.py
  echo "== distributed_side_by_side.sh"
  bench/distributed_side_by_side.sh
  echo "== distributed_benchmark --only=transfer"
  bazel-bin/bench/distributed_benchmark --graphrun=bazel-bin/tools/graphrun \
    --only=transfer --sizes_mb=16,64,256,1024 --methods=plain,base,none,fp16 --reps=7
fi
