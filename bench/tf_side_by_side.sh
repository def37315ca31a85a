#!/usr/bin/env bash
# TensorFlow, ONNX Runtime and graphrun side by side on the same frozen
# graphs (the issue table's CNN, MLPs, MatMuls, scalar chain and fan-out,
# and the Keras models of tests/fixtures/models); prints a markdown table of
# median step times, the ratios and graphrun's GFLOP/s. bench/side_by_side.py
# says what runs and how it is measured. CI does not run this.
#
#   bench/tf_side_by_side.sh [--venv DIR] [--only vgg_cnn,resnet50] [--rounds 3]
#                            [--steps 20] [--skip-ort] [--skip-models]
#
# The virtual environment is --venv DIR, else $TF_VENV, else .venv-bench/ in
# the repository (git-ignored); it is created with ${PYTHON:-python3} when
# absent, and the pinned packages below are installed into it (TensorFlow
# only when the venv has none). Then //tools:graphrun is built and the
# driver runs. A full run (3 rounds, 20 steps) takes about 10 minutes on 2
# cores; `--rounds 1 --steps 5` checks the setup in about 5.
set -euo pipefail
cd "$(dirname "$0")/.."

# Versions that work together (Python 3.11): tf2onnx 1.17 converts
# TensorFlow 2.21 graphs with numpy 2 and protobuf as TensorFlow pins it.
TF_PIN="tensorflow-cpu==2.21.0"
NUMPY_PIN="numpy==2.4.6"
ONNX_PINS=("onnxruntime==1.32.0" "tf2onnx==1.17.0" "onnx==1.23.2")

venv="${TF_VENV:-.venv-bench}"
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --venv) venv="$2"; shift 2 ;;
    --venv=*) venv="${1#--venv=}"; shift ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done

if [[ ! -x "$venv/bin/python" ]]; then
  echo "== creating $venv"
  "${PYTHON:-python3}" -m venv "$venv"
fi
py="$venv/bin/python"
if ! "$py" -c "import tensorflow" >/dev/null 2>&1; then
  echo "== installing $TF_PIN $NUMPY_PIN into $venv"
  "$py" -m pip install -q --upgrade pip
  "$py" -m pip install -q "$TF_PIN" "$NUMPY_PIN"
fi
echo "== installing ${ONNX_PINS[*]} into $venv (no-op when present)"
"$py" -m pip install -q "${ONNX_PINS[@]}"

echo "== building //tools:graphrun"
./bazelw build //tools:graphrun

echo "== running bench/side_by_side.py ${args[*]+${args[*]}}"
exec "$py" bench/side_by_side.py ${args[@]+"${args[@]}"}
