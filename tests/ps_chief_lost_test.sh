#!/usr/bin/env bash
# A synchronous worker whose chief is killed outright fails at once instead
# of waiting out its --timeout_ms. The graphs and batches are
# ps_sync_test's (TensorFlow's SyncReplicasOptimizer over 2 ps and 2 worker
# tasks, one client per worker). The chief starts 8 steps with its sync op
# as a queue runner; worker 1 takes its first step; the chief's client is
# then killed with SIGKILL, so nothing closes the token queue. Worker 1's
# next steps use the tokens left and then wait for one on the ps task that
# holds the queue; once the
# dead chief's session has been quiet for 5 s (the task's
# session_lost_after; its master sends Health every second), the task
# fails that wait naming the queue and the lost session, and worker 1 exits
# non-zero with that error, not with a deadline.
set -uo pipefail
GRAPHRUN="$1"
F="$(dirname "$2")"
tmp="$(mktemp -d "${TEST_TMPDIR:-/tmp}/ps_chief_lost.XXXXXX")"
source "$(dirname "$0")/check_lib.sh"
source "$(dirname "$0")/ps_sync_lib.sh"
train() {  # WORKER FIRST_STEP STEPS OUT [more flags]
  local w="$1" k="$2" n="$3" out="$4"
  shift 4
  exec "$GRAPHRUN" train "$F/${c}_w$w.pbtxt" --cluster="$tmp/cluster.json" --task="$w" \
    --train "$train_op" --steps "$n" --first_step "$k" --feed_steps "x=$F/${c}_w${w}_x.npy" \
    --feed_steps "y=$F/${c}_w${w}_y.npy" --fetch loss --out "$out" --quiet \
    --wire_compression none --timeout_ms 60000 "$@"
}
# The chief's client: 8 steps, its sync op as a queue runner. It runs its
# first step and then waits in its second for worker 1's gradients.
# (Each `train` runs in a subshell that becomes graphrun: the pid is the
# client's own.)
(train 0 0 8 "$tmp/w0" --init "${chief_init[0]}" "${chief_local[@]}" \
  --queue_runner "$sync_op" > "$tmp/chief.log" 2>&1) &
chief=$!
pids+=("$chief")
(train 1 0 1 "$tmp/w1_0" --wait_for_variables_s 60 "${worker_local[@]}" > "$tmp/w1_0.log" 2>&1)
rc=$?
check "worker 1's first step exits 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || sed 's/^/  | /' "$tmp/w1_0.log" "$tmp/chief.log"
kill -KILL "$chief"
wait "$chief" 2>/dev/null
# Nothing will fill the token queue now: once worker 1 has used the tokens
# already there, its step waits for one.
(train 1 1 4 "$tmp/w1_1" --wait_for_variables_s 60 "${worker_local[@]}" > "$tmp/w1_1.log" 2>&1)
rc=$?
check "worker 1's steps end in an error" test "$rc" -ne 0
check "naming the token queue that will not be filled" \
  grep -q "sync_token_q.* will not be filled" "$tmp/w1_1.log"
check "and the lost session, quiet on a ps task" \
  grep -q "the master of session .* has made no call to /job:ps/replica:0/task:[01] for 5s" \
  "$tmp/w1_1.log"
check "not a deadline" bash -c "! grep -qi 'deadline\|timed out' '$tmp/w1_1.log'"
grep -q "will not be filled" "$tmp/w1_1.log" || sed 's/^/  | /' "$tmp/w1_1.log"
finish
