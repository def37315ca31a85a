#!/usr/bin/env bash
# `graphrun train --recover --recover_with=remaining`: a worker task that
# dies for good is left out and the workers left take over its nodes. The
# graph is TensorFlow's in-graph synchronous MLP (a tower on each of two
# workers, variables on two ps tasks, tests/fixtures/ps/mlp_adam_sync2):
# after the loss of either worker the run goes on from the newest
# checkpoint, and its 8 losses are those of one process, exactly. Over a
# --cluster of hand-started tasks (the lost task keeps its index; when the
# lost one is worker 0, feeds and fetches move to worker 1) and over local
# tasks (started anew with one worker fewer). Bad combinations are refused.
set -uo pipefail
GRAPHRUN="$1"
ALLCLOSE="$2"
F="$(dirname "$3")"
# A directory of its own: runs of this test may share TEST_TMPDIR.
tmp="$(mktemp -d "${TEST_TMPDIR:-/tmp}/ps_recover.XXXXXX")"

source "$(dirname "$0")/check_lib.sh"
ran() {  # LOG RC: true when RC is 0; else the log is shown
  [ "$2" -eq 0 ] && return 0
  sed 's/^/  | /' "$1"
  return 1
}

c=mlp_adam_sync2
train() {  # OUT [more flags]: 8 steps from TensorFlow's initial checkpoint
  local out="$1"
  shift
  "$GRAPHRUN" train "$F/$c.pbtxt" --restore "$F/${c}_init.ckpt" --train train --steps 8 \
    --feed_steps "x=$F/${c}_x.npy" --feed_steps "y=$F/${c}_y.npy" --fetch loss \
    --out "$out" --quiet --wire_compression none "$@"
}
train "$tmp/one" --clear_devices > "$tmp/one.log" 2>&1
check "one process exits 0" test $? -eq 0

start_task ps 0; ps0="$addr"
start_task ps 1; ps1="$addr"

# Two new workers, LOST dying at its N-th RunGraph, for good: the run
# goes on with the other, which takes over the lost one's nodes.
lose_worker() {  # LOST N
  local lost="$1" n="$2" other=$((1 - $1)) w=() k out="$tmp/lost_w$1"
  for k in 0 1; do
    if [ "$k" -eq "$lost" ]; then
      start_task worker "$k" "GRAPHRUN_CRASH_AT=worker.run_graph:$n"
    else
      start_task worker "$k"
    fi
    w+=("$addr")
  done
  printf '{"ps": ["%s", "%s"], "worker": ["%s", "%s"]}\n' "$ps0" "$ps1" "${w[@]}" \
    > "$tmp/cluster$lost.json"
  train "$out" --cluster="$tmp/cluster$lost.json" --save "$out/model.ckpt" --save_every 1 \
    --recover --recover_with=remaining > "$out.log" 2>&1
  check "cluster, worker $lost lost: the run ends well" ran "$out.log" $?
  check "... it recovers from a checkpoint" \
    grep -q "^graphrun train: recovering from .*model.ckpt-[0-9]* (step [0-9]*)$" "$out.log"
  check "... and goes on with worker $other alone" grep -q \
    "^graphrun train: going on with the 1 worker task(s) left: the nodes of worker task $lost -> $other (/job:worker/replica:0/task:$lost at ${w[$lost]} is unreachable" \
    "$out.log"
  check "... its losses are one process's, exactly" \
    "$ALLCLOSE" "$out/loss.npy" "$tmp/one/loss.npy" 0
}
lose_worker 1 6
# Worker 0 is the default client: feeds and fetches move to worker 1.
lose_worker 0 7

# Local tasks: worker 1 of 2 dies (only it: GRAPHRUN_CRASH_TASK); the ps
# tasks and worker 0 start anew, one worker fewer.
out="$tmp/local"
GRAPHRUN_CRASH_TASK=/job:worker/replica:0/task:1 GRAPHRUN_CRASH_AT=worker.run_graph:6 \
  train "$out" --local_workers 2 --local_ps 2 --save "$out/model.ckpt" --save_every 1 \
  --recover --recover_with=remaining > "$tmp/local.log" 2>&1
check "local, worker 1 lost: the run ends well" ran "$tmp/local.log" $?
check "... and goes on with one worker, renumbered" grep -q \
  "^graphrun train: going on with the 1 worker task(s) left: the nodes of worker task 1 -> 0 (renumbered)" \
  "$tmp/local.log"
check "... its losses are one process's, exactly" \
  "$ALLCLOSE" "$out/loss.npy" "$tmp/one/loss.npy" 0

err="$(train "$tmp/bad1" --local_workers 2 --local_ps 2 --save "$tmp/bad1/m" --save_every 1 \
  --recover --recover_with=survivors 2>&1)"; rc=$?
check "an unknown --recover_with fails" test "$rc" -ne 0
check "... saying so" grep -q -- "--recover_with must be restarted or remaining, not 'survivors'" <<<"$err"
err="$(train "$tmp/bad2" --local_workers 2 --replicas 2 --save "$tmp/bad2/m" --save_every 1 \
  --recover --recover_with=remaining 2>&1)"; rc=$?
check "remaining with --replicas fails" test "$rc" -ne 0
check "... saying why" grep -q -- "--recover_with=remaining does not go with --replicas" <<<"$err"

finish
