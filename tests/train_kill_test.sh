#!/usr/bin/env bash
# A `graphrun train` process killed (SIGKILL) in the middle of a checkpoint
# save, at the worst moments (GRAPHRUN_CRASH_AT, graph/checkpoint/file_io.h):
# its data written but not renamed, its data renamed but not its index, a
# sharded Saver's shards renamed but not merged. Each time the `checkpoint`
# file still names the last complete save, which loads and holds what an
# uninterrupted run of as many steps saves, and training resumes from the
# directory.
set -uo pipefail
GRAPHRUN="$1"
ALLCLOSE="$2"
CKPT_TO_NPY="$3"
F="$(dirname "$4")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

source "$(dirname "$0")/check_lib.sh"

keys() {  # CASE: the checkpoint keys of CASE's variables
  for f in "$F/${1}_final__"*.npy; do
    local k
    k="$(basename "$f" .npy)"
    k="${k#${1}_final__}"
    echo "${k//__//}"
  done
}

# CASE GRAPH CRASH_POINT EXTRA_FLAGS...
crash_case() {
  local c="$1" graph="$2" point="$3"
  shift 3
  local name="$c at $point" out="$tmp/$c-$point" ref="$tmp/$c-$point-ref"
  GRAPHRUN_CRASH_AT="$point:4" "$GRAPHRUN" train "$graph" --restore "$F/${c}_init.ckpt" \
    --steps 20 --feed_steps "x=$F/${c}_x.npy" --feed_steps "y=$F/${c}_y.npy" \
    --save "$out/model.ckpt" --save_every 1 --quiet "$@" > /dev/null 2>&1
  check "$name: the process was killed" test $? -eq 137
  check "$name: the checkpoint file names the third save" \
    grep -q '^model_checkpoint_path: "model.ckpt-3"' "$out/checkpoint"
  check "$name: no fourth checkpoint is visible" test ! -e "$out/model.ckpt-4.index"
  "$GRAPHRUN" train "$graph" --restore "$F/${c}_init.ckpt" --steps 3 \
    --feed_steps "x=$F/${c}_x.npy" --feed_steps "y=$F/${c}_y.npy" \
    --save "$ref/model.ckpt" --quiet "$@" > /dev/null
  local n=0
  for key in $(keys "$c"); do
    check "$name: $key loads" "$CKPT_TO_NPY" "$out/model.ckpt-3" "$key" "$tmp/got.npy"
    "$CKPT_TO_NPY" "$ref/model.ckpt" "$key" "$tmp/want.npy"
    check "$name: $key is the third step's" "$ALLCLOSE" "$tmp/got.npy" "$tmp/want.npy" 0
    n=$((n + 1))
  done
  check "$name: every variable compared" test "$n" -ge 4
  "$GRAPHRUN" train "$graph" --restore "$out" --steps 1 \
    --feed_steps "x=$F/${c}_x.npy" --feed_steps "y=$F/${c}_y.npy" --quiet "$@" > /dev/null
  check "$name: training resumes from the directory" test $? -eq 0
}

crash_case mlp_sgd "$F/mlp_sgd.pbtxt" bundle.data_written --train train
crash_case mlp_sgd "$F/mlp_sgd.pbtxt" bundle.between_renames --train train
crash_case mlp_adam_ref "$F/mlp_adam_ref.meta" bundle.between_renames
crash_case mlp_adam_ref "$F/mlp_adam_ref.meta" merge.shards_renamed

# Periodic saves keep the newest five, as TensorFlow's Saver does.
out="$tmp/keep"
"$GRAPHRUN" train "$F/mlp_sgd.pbtxt" --restore "$F/mlp_sgd_init.ckpt" --train train \
  --steps 20 --feed_steps "x=$F/mlp_sgd_x.npy" --feed_steps "y=$F/mlp_sgd_y.npy" \
  --save "$out/model.ckpt" --save_every 2 --quiet > /dev/null
check "periodic saves: exit 0" test $? -eq 0
check "periodic saves: five kept and the last" test "$(ls "$out"/*.index | wc -l)" -eq 6
check "periodic saves: the oldest removed" test ! -e "$out/model.ckpt-8.index"
check "periodic saves: the newest kept" test -e "$out/model.ckpt-18.index"
check "periodic saves: the checkpoint file lists them" \
  test "$(grep -c all_model_checkpoint_paths "$out/checkpoint")" -eq 6

finish
