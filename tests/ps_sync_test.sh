#!/usr/bin/env bash
# Synchronous between-graph training with TensorFlow's SyncReplicasOptimizer
# over 2 ps and 2 worker tasks started by hand, one client per worker, each
# with the graph TensorFlow exported for its worker
# (tests/fixtures/ps/mlp_sgd_sync_between_w{0,1}.pbtxt, made with
# make_sync_between_fixture.py). The chief (--task=0) sets the variables,
# runs the optimizer's chief init (--local_init) and its sync op as a queue
# runner (--queue_runner): each sync takes both workers' gradients from the
# accumulators on the ps tasks, applies their mean and hands each worker a
# token for its next step. Each step here is one `graphrun train --steps 1
# --first_step K` per worker, both clients at once, the next step started
# when both are done (TensorFlow's recording kept its workers in step the
# same way: otherwise a fast worker may take the other's token). Both
# workers' 8 losses, the final variables and the global step are those of
# TensorFlow's own cluster; the chief's queue runner, waiting for a sync
# that never comes, is stopped when its steps end, and the chief's last run
# closes the token queue, which ends worker 1's next step.
set -uo pipefail
GRAPHRUN="$1"
ALLCLOSE="$2"
CKPT_TO_NPY="$3"
F="$(dirname "$4")"
# A directory of its own: runs of this test may share TEST_TMPDIR.
tmp="$(mktemp -d "${TEST_TMPDIR:-/tmp}/ps_sync.XXXXXX")"

source "$(dirname "$0")/check_lib.sh"

source "$(dirname "$0")/ps_sync_lib.sh"

step() {  # WORKER K OUT [more flags]
  local w="$1" k="$2" out="$3"
  shift 3
  "$GRAPHRUN" train "$F/${c}_w$w.pbtxt" --cluster="$tmp/cluster.json" --task="$w" \
    --train "$train_op" --steps 1 --first_step "$k" --feed_steps "x=$F/${c}_w${w}_x.npy" \
    --feed_steps "y=$F/${c}_w${w}_y.npy" --fetch loss --out "$out" --quiet \
    --wire_compression none --timeout_ms 60000 "$@"
}

ok=0
for k in 0 1 2 3 4 5 6 7; do
  if [ "$k" -eq 0 ]; then first=(--init "${chief_init[0]}"); else first=(); fi
  # The chief closes the token queue when its last run ends (below), and
  # keeps it open at the end of the runs before.
  save=(--close_queues=false)
  [ "$k" -eq 7 ] && save=(--save "$tmp/chief/model.ckpt")
  step 0 "$k" "$tmp/w0_$k" "${first[@]}" "${chief_local[@]}" --queue_runner "$sync_op" \
    "${save[@]}" > "$tmp/c0_$k.log" 2>&1 &
  chief=$!
  step 1 "$k" "$tmp/w1_$k" --wait_for_variables_s 60 "${worker_local[@]}" \
    > "$tmp/c1_$k.log" 2>&1
  rc1=$?
  wait "$chief"
  rc0=$?
  if [ "$rc0" -ne 0 ] || [ "$rc1" -ne 0 ]; then
    echo "step $k: the chief exited $rc0, worker 1 $rc1"
    sed 's/^/  | /' "$tmp/c0_$k.log" "$tmp/c1_$k.log"
    break
  fi
  ok=$((ok + 1))
done
check "8 steps of both clients exit 0" test "$ok" -eq 8

# The chief's training has ended and closed the token queue: worker 1's next
# step, which waits for a token, ends with the queue's OutOfRange (as a
# TensorFlow worker's MonitoredTrainingSession stops) instead of waiting out
# its --timeout_ms.
step 1 7 "$tmp/w1_after" --wait_for_variables_s 60 "${worker_local[@]}" \
  > "$tmp/c1_after.log" 2>&1
rc=$?
check "after the chief's end, worker 1's step exits 0" test "$rc" -eq 0
check "it says the steps ended at the closed token queue" \
  grep -q "the steps ended at step 0: .*sync_token_q.* is closed" "$tmp/c1_after.log"
check "and did not time out" bash -c "! grep -qi 'deadline\|timed out' '$tmp/c1_after.log'"

# TensorFlow's losses, step by step, for each worker.
for w in 0 1; do
  for k in 0 1 2 3 4 5 6 7; do
    check "worker $w step $k: TensorFlow's loss" \
      "$ALLCLOSE" "$tmp/w${w}_$k/loss.npy" "$F/${c}_w${w}_loss.npy" 1e-5 "$k"
  done
done
for v in mlp/w1 mlp/b1 mlp/w2 mlp/b2 global_step; do
  "$CKPT_TO_NPY" "$tmp/chief/model.ckpt" "$v" "$tmp/got.npy" > /dev/null 2>&1
  check "the chief's checkpoint: $v is TensorFlow's" \
    "$ALLCLOSE" "$tmp/got.npy" "$F/${c}_final__${v//\//__}.npy" 1e-5
done

finish
