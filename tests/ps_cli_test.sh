#!/usr/bin/env bash
# Parameter-server training over real worker processes on loopback:
# TensorFlow v1 training graphs pinned by TensorFlow's
# replica_device_setter (tests/fixtures/ps, written by make_ps_fixtures.py:
# variables and slots round-robin on /job:ps/task:0 and 1, the rest on
# /job:worker/task:0) trained by `graphrun train --local_workers=1
# --local_ps=2`. With --wire_compression=none the losses are those of the
# same graph in one process (--clear_devices) bit for bit, and TensorFlow's
# own cluster's; the saved checkpoint holds TensorFlow's final variables;
# in-graph synchronous replication over 2 workers gives the large-batch
# losses; saves are sharded per ps task; --recover survives killed tasks;
# under the default policy only gradients travel fp16 and the losses stay
# within fp16 error. Bad input fails naming the task.
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

for c in mlp_sgd_ps mlp_adam_ps cnn_momentum_ps; do
  # The CNN's losses drift from TensorFlow's by up to 1e-4 after step 10 in
  # one process too (rounding in the convolutions' gradients, amplified by
  # momentum); the MLPs' agree to 1e-7.
  tf_tol=1e-5
  [ "$c" = cnn_momentum_ps ] && tf_tol=2e-4
  train "$c" "$tmp/${c}_one" --clear_devices --save "$tmp/${c}_one/model.ckpt" \
    > "$tmp/$c.one.log" 2>&1
  check "$c: one process (--clear_devices) exits 0" test $? -eq 0
  train "$c" "$tmp/${c}_exact" --local_workers 1 --local_ps 2 --wire_compression none \
    --save "$tmp/${c}_exact/model.ckpt" --log_device_placement > "$tmp/$c.exact.log" 2>&1
  check "$c: 2 ps + 1 worker exits 0" test $? -eq 0
  check "$c: losses over ps tasks are one process's, exactly" \
    "$ALLCLOSE" "$tmp/${c}_exact/loss.npy" "$tmp/${c}_one/loss.npy" 0
  check "$c: losses are TensorFlow's cluster's" \
    "$ALLCLOSE" "$tmp/${c}_exact/loss.npy" "$F/${c}_loss.npy" "$tf_tol"
  n=0
  for want in "$F/${c}_final__"*.npy; do
    key="$(basename "$want" .npy)"
    key="${key#${c}_final__}"
    key="${key//__//}"
    check "$c: saved $key" "$CKPT_TO_NPY" "$tmp/${c}_exact/model.ckpt" "$key" "$tmp/got.npy"
    check "$c: saved $key in one process" \
      "$CKPT_TO_NPY" "$tmp/${c}_one/model.ckpt" "$key" "$tmp/one.npy"
    check "$c: $key is one process's, exactly" "$ALLCLOSE" "$tmp/got.npy" "$tmp/one.npy" 0
    if [ "$c" != cnn_momentum_ps ]; then
      check "$c: $key is TensorFlow's" "$ALLCLOSE" "$tmp/got.npy" "$want" 1e-5
    fi
    n=$((n + 1))
  done
  check "$c: every variable compared" test "$n" -ge 4
  # Where TensorFlow's replica_device_setter pinned them.
  while read -r var device; do
    check "$c: $var lives on $device" \
      grep -q "^$var: ([A-Za-z0-9]*): ${device%%/task*}/replica:0/task:${device##*task:}/device:CPU:0" \
      "$tmp/$c.exact.log"
  done < "$F/${c}_devices.txt"
  check "$c: the forward pass runs on the worker" \
    grep -q "^loss: (Mean): /job:worker/replica:0/task:0/device:CPU:0" "$tmp/$c.exact.log"

  # The default policy: gradients fp16, everything else exact.
  train "$c" "$tmp/${c}_grad" --local_workers 1 --local_ps 2 > "$tmp/$c.grad.log" 2>&1
  check "$c: default wire policy exits 0" test $? -eq 0
  check "$c: fp16 gradients stay within fp16 error of TensorFlow's losses" \
    "$ALLCLOSE" "$tmp/${c}_grad/loss.npy" "$F/${c}_loss.npy" 1e-3
done

# Synchronous in-graph replication over two workers (a tower on each,
# half the batch each, gradients averaged, one update per step on the ps
# tasks): the losses of one process, exactly; of TensorFlow's cluster of
# 2 ps + 2 workers; and of the plain MLP on the whole batch in one process.
c=mlp_adam_sync2
train "$c" "$tmp/${c}_one" --clear_devices > /dev/null 2>&1
check "sync: one process exits 0" test $? -eq 0
train "$c" "$tmp/${c}_ps" --local_workers 2 --local_ps 2 --wire_compression none \
  --log_device_placement > "$tmp/$c.log" 2>&1
check "sync: 2 ps + 2 workers exits 0" test $? -eq 0
check "sync: a tower runs on each worker" \
  grep -q "^replica_1/MatMul: (MatMul): /job:worker/replica:0/task:1/device:CPU:0" "$tmp/$c.log"
check "sync: losses are one process's, exactly" \
  "$ALLCLOSE" "$tmp/${c}_ps/loss.npy" "$tmp/${c}_one/loss.npy" 0
check "sync: losses are TensorFlow's cluster's" \
  "$ALLCLOSE" "$tmp/${c}_ps/loss.npy" "$F/${c}_loss.npy" 1e-5
check "sync: losses are the large-batch run's" \
  "$ALLCLOSE" "$tmp/${c}_ps/loss.npy" "$F/${c}_large_batch_loss.npy" 1e-5

# The client serves its own worker task (--in_process_worker), as
# TensorFlow's session on a server's target: one process fewer, feeds and
# fetches handed over in memory, the same losses.
train mlp_adam_ps "$tmp/inproc" --local_workers 1 --local_ps 2 --wire_compression none \
  --in_process_worker > "$tmp/inproc.log" 2>&1
check "in-process worker 0: exits 0" test $? -eq 0
check "in-process worker 0: losses are one process's, exactly" \
  "$ALLCLOSE" "$tmp/inproc/loss.npy" "$tmp/mlp_adam_ps_one/loss.npy" 0
train mlp_adam_sync2 "$tmp/inproc2" --local_workers 2 --local_ps 2 --wire_compression none \
  --in_process_worker > "$tmp/inproc2.log" 2>&1
check "in-process worker 0 of 2: exits 0" test $? -eq 0
check "in-process worker 0 of 2: losses are one process's, exactly" \
  "$ALLCLOSE" "$tmp/inproc2/loss.npy" "$tmp/mlp_adam_sync2_one/loss.npy" 0
err="$(train mlp_adam_ps "$tmp/bad_inproc" --local_workers 1 --local_ps 2 --in_process_worker \
  --task 3 2>&1)"; rc=$?
check "in-process worker outside the local tasks: exits 1" test "$rc" -eq 1
check "... naming the task" grep -q "/job:worker/replica:0/task:3 is not one of the 1 local" <<<"$err"

# Saves over ps tasks are sharded: each ps task writes its own variables,
# the shards merge into one checkpoint (one data file per task, no
# temporary directory left) that one process restores.
c=mlp_adam_ps
check "sharded save: a data file per ps task" \
  test -e "$tmp/${c}_exact/model.ckpt.data-00000-of-00002" -a \
  -e "$tmp/${c}_exact/model.ckpt.data-00001-of-00002"
check "sharded save: no shard left beside" test ! -e "$tmp/${c}_exact/model.ckpt_temp"
check "sharded save: SaveV2 runs on a ps task" grep -q \
  "^graphrun_save_sharded/1/save: (SaveV2): /job:ps/replica:0/task:1/device:CPU:0" \
  "$tmp/$c.exact.log"
check "sharded restore: RestoreV2 runs on a ps task" grep -q \
  "^graphrun_restore_sharded/0/restore: (RestoreV2): /job:ps/replica:0/task:0/device:CPU:0" \
  "$tmp/$c.exact.log"
train "$c" "$tmp/${c}_again" --clear_devices --restore "$tmp/${c}_exact" --steps 0 \
  --save "$tmp/${c}_again/model.ckpt" > /dev/null 2>&1
check "one process restores the sharded checkpoint" test $? -eq 0
"$CKPT_TO_NPY" "$tmp/${c}_again/model.ckpt" mlp/w1/Adam_1 "$tmp/again.npy"
check "... and holds TensorFlow's final values" \
  "$ALLCLOSE" "$tmp/again.npy" "$F/${c}_final__mlp__w1__Adam_1.npy" 1e-5

# A ps task killed in the middle of a sharded save (its shard renamed
# into place, the merged index not yet written: GRAPHRUN_CRASH_AT, which
# the local tasks inherit): the run fails naming a task, and the checkpoint
# file still names the last complete save, which holds three steps' values.
c=mlp_sgd_ps
out="$tmp/${c}_killed"
GRAPHRUN_CRASH_AT=merge.shards_renamed:4 train "$c" "$out" --local_workers 1 --local_ps 2 \
  --wire_compression none \
  --save "$out/model.ckpt" --save_every 1 > "$tmp/$c.killed.log" 2>&1
check "killed save: the run fails" test $? -ne 0
check "killed save: the error names the task" grep -q "/job:[a-z]*/replica:0/task:[0-9]" \
  "$tmp/$c.killed.log"
check "killed save: the checkpoint file names the third save" \
  grep -q '^model_checkpoint_path: "model.ckpt-3"' "$out/checkpoint"
check "killed save: no fourth checkpoint is visible" test ! -e "$out/model.ckpt-4.index"
train "$c" "$tmp/${c}_three" --clear_devices --steps 3 --save "$tmp/${c}_three/model.ckpt" \
  > /dev/null 2>&1
for key in mlp/w1 mlp/b1 mlp/w2 mlp/b2; do
  check "killed save: $key loads" "$CKPT_TO_NPY" "$out/model.ckpt-3" "$key" "$tmp/got.npy"
  "$CKPT_TO_NPY" "$tmp/${c}_three/model.ckpt" "$key" "$tmp/want.npy"
  check "killed save: $key is the third step's" "$ALLCLOSE" "$tmp/got.npy" "$tmp/want.npy" 0
done

# --recover: the same kill, twice (the restarted tasks inherit the crash
# point and die at their fourth save too): each time the run starts the
# tasks again, restores the newest checkpoint and goes on from its step;
# the 8 losses are an uninterrupted run's, exactly.
out="$tmp/${c}_recovered"
GRAPHRUN_CRASH_AT=merge.shards_renamed:4 train "$c" "$out" --local_workers 1 --local_ps 2 \
  --wire_compression none --steps 8 --save "$out/model.ckpt" --save_every 1 --recover \
  > "$tmp/$c.recovered.log" 2>&1
check "recover: the run ends well" test $? -eq 0
check "recover: first from the third step's checkpoint" \
  grep -q "^graphrun train: recovering from .*model.ckpt-3 (step 3)$" "$tmp/$c.recovered.log"
check "recover: then from the sixth's" \
  grep -q "^graphrun train: recovering from .*model.ckpt-6 (step 6)$" "$tmp/$c.recovered.log"
train "$c" "$tmp/${c}_eight" --clear_devices --steps 8 > /dev/null 2>&1
check "recover: the losses are an uninterrupted run's" \
  "$ALLCLOSE" "$out/loss.npy" "$tmp/${c}_eight/loss.npy" 0
err="$(train "$c" "$tmp/bad5" --local_workers 1 --local_ps 2 --recover 2>&1)"; rc=$?
check "--recover without periodic saves fails" test "$rc" -ne 0
check "... saying what it needs" grep -q -- "--recover needs workers" <<<"$err"

# --ps_placement=auto replaces the round-robin pins: variables go by bytes,
# largest first, each with its slots and updates; the losses do not change.
c=mlp_adam_ps
train "$c" "$tmp/${c}_auto" --local_workers 1 --local_ps 2 --wire_compression none \
  --ps_placement=auto --log_device_placement > "$tmp/$c.auto.log" 2>&1
check "auto ps placement exits 0" test $? -eq 0
check "auto ps placement: losses are one process's, exactly" \
  "$ALLCLOSE" "$tmp/${c}_auto/loss.npy" "$tmp/${c}_one/loss.npy" 0
check "auto ps placement says why" grep -q \
  "^ps placement: 'mlp/w1' and 2 more (1536 bytes) -> /job:ps/task:[01]: the ps task with the fewest variable bytes" \
  "$tmp/$c.auto.log"
w1_task="$(sed -n "s#^ps placement: 'mlp/w1' .* -> /job:ps/task:\([01]\):.*#\1#p" "$tmp/$c.auto.log")"
check "a slot lives with its variable" grep -q \
  "^mlp/w1/Adam: ([A-Za-z0-9]*): /job:ps/replica:0/task:$w1_task/device:CPU:0" "$tmp/$c.auto.log"
check "auto ps placement reports the balance" \
  grep -q '^ps placement: variable bytes per ps task: task 0: [0-9]*, task 1: [0-9]* (max/mean 1\.[0-9]*)$' \
  "$tmp/$c.auto.log"
# A variable with its slots holding over half a ps task's even share is
# split into parts over the ps tasks (here with parts of at least 64 bytes:
# the fixture's variables are small): each part with its slots' parts and
# its update, reads concatenated on the worker. The losses do not change,
# and the checkpoint holds each variable whole under TensorFlow's key.
train "$c" "$tmp/split" --local_workers 1 --local_ps 2 --wire_compression none \
  --ps_placement=auto --ps_min_part_bytes=64 --log_device_placement \
  --save "$tmp/split/model.ckpt" > "$tmp/split.log" 2>&1
check "split: exits 0" test $? -eq 0
check "split: says what it split" grep -q \
  "^ps placement: split 'mlp/w1' and 2 more (1536 bytes, over half a ps task's even share) into [2-9] parts of [0-9, ]* rows$" \
  "$tmp/split.log"
check "split: the parts live on both ps tasks" \
  test "$(grep -c "^mlp/w1/part_[0-9]: (VarHandleOp): /job:ps/replica:0/task:[01]/" "$tmp/split.log")" -ge 2
check "split: a slot's part lives with the variable's part" test \
  "$(sed -n 's#^mlp/w1/part_0: (VarHandleOp): \(/job:ps/replica:0/task:[01]\)/.*#\1#p' "$tmp/split.log")" = \
  "$(sed -n 's#^mlp/w1/Adam/part_0: (VarHandleOp): \(/job:ps/replica:0/task:[01]\)/.*#\1#p' "$tmp/split.log")"
check "split: losses are one process's, exactly" \
  "$ALLCLOSE" "$tmp/split/loss.npy" "$tmp/${c}_one/loss.npy" 0
for key in mlp/w1 mlp/w1/Adam_1 mlp/b2; do
  check "split: saved $key whole" "$CKPT_TO_NPY" "$tmp/split/model.ckpt" "$key" "$tmp/got.npy"
  "$CKPT_TO_NPY" "$tmp/${c}_one/model.ckpt" "$key" "$tmp/one.npy"
  check "split: $key is one process's, exactly" "$ALLCLOSE" "$tmp/got.npy" "$tmp/one.npy" 0
done
check "split: balances the ps tasks better" \
  grep -q '^ps placement: variable bytes per ps task: .* (max/mean 1\.[01][0-9])$' "$tmp/split.log"
err="$(train "$c" "$tmp/bad_split" --local_workers 1 --local_ps 2 --ps_min_part_bytes=-1 2>&1)"; rc=$?
check "a negative --ps_min_part_bytes fails" test "$rc" -ne 0
check "... saying so" grep -q -- "--ps_min_part_bytes must be >= 0, not -1" <<<"$err"
err="$(train "$c" "$tmp/bad0" --local_workers 1 --local_ps 2 --ps_placement=greedy 2>&1)"; rc=$?
check "an unknown --ps_placement fails" test "$rc" -ne 0
check "... saying so" grep -q -- "--ps_placement must be pinned or auto, not 'greedy'" <<<"$err"

# graphrun partition says, per edge between tasks, what travels lossy: the
# four gradients the worker sends to the ps tasks; variables, restored
# values and hyperparameters stay exact.
out="$("$GRAPHRUN" partition "$F/mlp_adam_ps.pbtxt" --devices="$F/cluster_2ps.json" \
  --out="$tmp/part" --wire_compression=gradients)"
check "partition exits 0" test $? -eq 0
check "four gradients travel fp16" \
  test "$(grep -c '^wire: .*/job:worker/.* -> /job:ps/.*: fp16 (a gradient)$' <<<"$out")" -eq 4
check "nothing else is lossy" test "$(grep -c ': fp16' <<<"$out")" -eq 4
check "a variable's value travels exact" \
  grep -q '^wire: edge_[0-9]*_mlp/w1/Read/ReadVariableOp .*: exact (not a gradient)$' <<<"$out"
check "a restored value travels exact" \
  grep -q '^wire: edge_[0-9]*_save/RestoreV2 .*: exact (not a gradient)$' <<<"$out"
check "partition tallies" grep -q ', 4 compressed (gradients), 36 exact (not gradients)$' <<<"$out"
# The optimizer's hyperparameters (Consts pinned to the worker) are copied
# to each ps task that reads them instead of sent every step.
for k in 0 1; do
  check "ps $k holds its own learning rate" \
    grep -q 'name: "train/learning_rate/_copy_[0-9]*"' \
    "$tmp/part/job_ps_replica_0_task_${k}_device_CPU_0.pbtxt"
done
check "the learning rate is not sent" \
  test "$(grep -c '^wire: .*train/learning_rate' <<<"$out")" -eq 0

# Bad input.
err="$(train mlp_sgd_ps "$tmp/bad1" --local_workers 1 --local_ps 1 2>&1)"; rc=$?
check "a ps task the cluster lacks fails" test "$rc" -ne 0
check "... naming the variable and the task" \
  grep -q "variable 'mlp/b1' is pinned to /job:ps/task:1, but the cluster has 1 ps task" <<<"$err"
err="$(train mlp_sgd_ps "$tmp/bad2" --local_ps 2 2>&1)"; rc=$?
check "--local_ps without --local_workers fails" test "$rc" -ne 0
check "... saying so" grep -q -- '--local_ps=M needs --local_workers=N' <<<"$err"
err="$(train mlp_sgd_ps "$tmp/bad3" --local_workers 1 --local_ps -1 2>&1)"; rc=$?
check "a negative --local_ps fails" test "$rc" -ne 0
check "... saying so" grep -q -- '--local_ps must be between 0 and 64' <<<"$err"
err="$(train mlp_sgd_ps "$tmp/bad4" --local_workers 1 --local_ps 2 --wire_compression=half 2>&1)"
rc=$?
check "an unknown wire policy fails" test "$rc" -ne 0
check "... listing the policies" grep -q 'expected gradients, all, none, bf16 or fp16' <<<"$err"

finish
