#!/usr/bin/env bash
# `graphrun train` on TensorFlow v1 training graphs (tests/fixtures/training,
# written by make_training_fixtures.py with TensorFlow: an MLP and a CNN
# each with SGD, momentum and Adam on ref and on resource variables, an MLP
# with Adagrad and with centered RMSProp, an LSTM with Adam in a v1 while
# loop and in a TensorFlow 2 functional While, a BERT-style encoder block
# with Adam; and, written by make_keras3_fixtures.py, a Keras 3 MLP's
# tf.function train step with keras.optimizers.Adam and AdamW, its captured
# variables as VarHandleOps, the optimizer's iteration count, learning rate
# and slots among them): restored from
# TensorFlow's checkpoint, 20 steps give TensorFlow's losses and final
# variables (rtol 1e-5), in a checkpoint TensorFlow's format holds; bad
# input fails naming what is wrong.
set -uo pipefail
GRAPHRUN="$1"
ALLCLOSE="$2"
CKPT_TO_NPY="$3"
F="$(dirname "$4")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

source "$(dirname "$0")/check_lib.sh"

train() {  # CASE OUT [more flags]: 20 steps from TensorFlow's initial checkpoint
  local c="$1" out="$2"
  shift 2
  "$GRAPHRUN" train "$F/$c.pbtxt" --restore "$F/${c}_init.ckpt" --train train --steps 20 \
    --feed_steps "x=$F/${c}_x.npy" --feed_steps "y=$F/${c}_y.npy" --fetch loss \
    --out "$out" --quiet "$@"
}

for c in mlp_sgd mlp_sgd_resource mlp_momentum mlp_momentum_resource mlp_adam mlp_adam_ref \
  mlp_adagrad mlp_rmsprop cnn_sgd cnn_sgd_resource cnn_momentum cnn_momentum_resource \
  cnn_adam cnn_adam_resource lstm_adam lstm_tf2_adam encoder_adam keras3_adam keras3_adamw; do
  out="$tmp/$c"
  train "$c" "$out" --save "$out/model.ckpt" 2> "$tmp/$c.err"
  check "$c: train exits 0" test $? -eq 0
  check "$c: losses are TensorFlow's" "$ALLCLOSE" "$out/loss.npy" "$F/${c}_loss.npy" 1e-5
  check "$c: loss curve csv" grep -q '^19,' "$out/loss.csv"
  check "$c: loss curve picture" grep -q '<polyline' "$out/loss.svg"
  check "$c: checkpoint state file" grep -q 'model_checkpoint_path: "model.ckpt"' "$out/checkpoint"
  n=0
  for want in "$F/${c}_final__"*.npy; do
    key="$(basename "$want" .npy)"
    key="${key#${c}_final__}"
    key="${key//__//}"
    check "$c: saved $key" "$CKPT_TO_NPY" "$out/model.ckpt" "$key" "$tmp/got.npy"
    check "$c: $key is TensorFlow's" "$ALLCLOSE" "$tmp/got.npy" "$want" 1e-5
    n=$((n + 1))
  done
  check "$c: every variable compared" test "$n" -ge 4
done

# graphrun's checkpoint restores into graphrun: the Adam run's checkpoint,
# restored and saved again with no step between, still holds TensorFlow's
# final values.
out="$tmp/again"
"$GRAPHRUN" train "$F/mlp_adam.pbtxt" --restore "$tmp/mlp_adam" --train train --steps 0 \
  --save "$out/model.ckpt" --quiet
check "restore from graphrun's checkpoint directory" test $? -eq 0
for want in "$F/mlp_adam_final__"*.npy; do
  key="$(basename "$want" .npy)"
  key="${key#mlp_adam_final__}"
  key="${key//__//}"
  "$CKPT_TO_NPY" "$out/model.ckpt" "$key" "$tmp/got.npy"
  check "round trip: $key is TensorFlow's" "$ALLCLOSE" "$tmp/got.npy" "$want" 1e-5
done

# --init runs the graph's own initializer: TensorFlow's initial values, bit
# for bit (its seeded RandomUniform), so 20 steps from it give TensorFlow's
# losses too.
for c in mlp_sgd mlp_adam; do
  out="$tmp/init_$c"
  "$GRAPHRUN" train "$F/$c.pbtxt" --init init --train train --steps 0 \
    --save "$out/init.ckpt" --quiet
  check "$c: --init" test $? -eq 0
  for key in mlp/w1 mlp/b1 mlp/w2 mlp/b2; do
    "$CKPT_TO_NPY" "$out/init.ckpt" "$key" "$tmp/got.npy"
    "$CKPT_TO_NPY" "$F/${c}_init.ckpt" "$key" "$tmp/want.npy"
    check "$c: initial $key is TensorFlow's bit for bit" "$ALLCLOSE" "$tmp/got.npy" \
      "$tmp/want.npy" 0
  done
done
"$GRAPHRUN" train "$F/mlp_sgd.pbtxt" --init init --train train --steps 20 \
  --feed_steps "x=$F/mlp_sgd_x.npy" --feed_steps "y=$F/mlp_sgd_y.npy" --fetch loss \
  --out "$tmp/from_init" --quiet
check "from --init: losses are TensorFlow's" "$ALLCLOSE" "$tmp/from_init/loss.npy" \
  "$F/mlp_sgd_loss.npy" 1e-5

# A .meta names its train op, its variables' initializers and its Saver:
# the graph's own RestoreV2/SaveV2 restore TensorFlow's checkpoint and write
# one TensorFlow's values are in; from the initializers alone, the same
# losses. mlp_adam_ref's Saver is sharded: StringJoin and
# StaticRegexFullMatch name a temporary prefix, ShardedFilename a shard,
# MergeV2Checkpoints merges it under the final prefix and removes the
# temporary directory.
for c in mlp_adam mlp_adam_ref; do
  out="$tmp/meta_$c"
  "$GRAPHRUN" train "$F/$c.meta" --restore "$F/${c}_init.ckpt" --steps 20 \
    --feed_steps "x=$F/${c}_x.npy" --feed_steps "y=$F/${c}_y.npy" --fetch loss \
    --out "$out" --save "$out/model.ckpt" --quiet
  check "$c.meta: train exits 0" test $? -eq 0
  check "$c.meta: losses are TensorFlow's" "$ALLCLOSE" "$out/loss.npy" "$F/${c}_loss.npy" 1e-5
  for want in "$F/${c}_final__"*.npy; do
    key="$(basename "$want" .npy)"
    key="${key#${c}_final__}"
    key="${key//__//}"
    "$CKPT_TO_NPY" "$out/model.ckpt" "$key" "$tmp/got.npy"
    check "$c.meta: the graph's Saver saved $key as TensorFlow's" "$ALLCLOSE" "$tmp/got.npy" \
      "$want" 1e-5
  done
done
check "sharded save: merged data shard" test -f "$tmp/meta_mlp_adam_ref/model.ckpt.data-00000-of-00001"
check "sharded save: no temporary directory left" \
  test -z "$(ls -d "$tmp/meta_mlp_adam_ref/"*_temp* 2>/dev/null)"
"$GRAPHRUN" train "$F/mlp_adam.meta" --steps 20 --feed_steps "x=$F/mlp_adam_x.npy" \
  --feed_steps "y=$F/mlp_adam_y.npy" --fetch loss --out "$tmp/meta_init" --quiet
check ".meta from its initializers: losses are TensorFlow's" "$ALLCLOSE" \
  "$tmp/meta_init/loss.npy" "$F/mlp_adam_loss.npy" 1e-5

# The same training over two CPU devices, and over two worker processes
# started on loopback: TensorFlow's losses.
train encoder_adam "$tmp/two_devices" --cpu_devices 2
check "two CPU devices: losses are TensorFlow's" "$ALLCLOSE" "$tmp/two_devices/loss.npy" \
  "$F/encoder_adam_loss.npy" 1e-5
train mlp_sgd "$tmp/two_workers" --local_workers 2
check "two worker processes: losses are TensorFlow's" "$ALLCLOSE" "$tmp/two_workers/loss.npy" \
  "$F/mlp_sgd_loss.npy" 1e-5

# Bad input: each fails (exit 1) naming what is wrong, and writes nothing.
err="$("$GRAPHRUN" train "$F/mlp_sgd.pbtxt" --restore "$F/mlp_sgd_init.ckpt" --train nosuch \
  --steps 1 2>&1)"
check "missing train op exits 1" test $? -eq 1
check "missing train op named" grep -q "op 'nosuch' is not in" <<<"$err"

err="$(train mlp_adam "$tmp/bad1" --restore "$F/mlp_sgd_init.ckpt" 2>&1)"
check "restore with a missing key exits 1" test $? -eq 1
check "missing key named with the checkpoint" grep -q "mlp_sgd_init.ckpt" <<<"$err"

cp "$F/mlp_sgd_init.ckpt.index" "$tmp/corrupt.ckpt.index"
head -c 100 "$F/mlp_sgd_init.ckpt.data-00000-of-00001" > "$tmp/corrupt.ckpt.data-00000-of-00001"
err="$(train mlp_sgd "$tmp/bad2" --restore "$tmp/corrupt.ckpt" 2>&1)"
check "truncated checkpoint exits 1" test $? -eq 1
check "truncated checkpoint named" grep -q "corrupt.ckpt" <<<"$err"

err="$(train mlp_sgd "$tmp/bad3" --save /dev/null/model.ckpt 2>&1)"
check "unwritable save exits 1" test $? -eq 1
check "unwritable save named" grep -q "/dev/null/model.ckpt" <<<"$err"

"$GRAPHRUN" train "$F/mlp_sgd.pbtxt" --restore "$F/mlp_sgd_init.ckpt" --train train \
  --steps 30 --feed_steps "x=$F/mlp_sgd_x.npy" --feed_steps "y=$F/mlp_sgd_y.npy" \
  > /dev/null 2> "$tmp/short.err"
check "too few batches exits 1" test $? -eq 1
check "too few batches named" grep -q "leading step axis of at least --steps=30" "$tmp/short.err"

finish
