#!/usr/bin/env bash
# TensorFlow's collective ops between graphs, as MultiWorkerMirroredStrategy
# scripts run them: two worker tasks started by hand and one client per
# worker, each with the graph TensorFlow exported for its worker
# (tests/fixtures/collective/between/, from make_between_graph_fixtures.py).
# The members of each instance meet at run time at the group's leader
# (worker 0). Checked against TensorFlow's two-server run: every collective
# of ops_w{0,1} (reduce, mean, integer max, gather, broadcast), the 10
# losses of both towers of an MLP whose gradients are averaged with
# CollectiveReduceV2, and both towers' final variables, and the same losses
# with the gradients sent round a ring (communication_hint "ring"). Then
# the failures:
# a member whose task is gone fails its peer's step naming the task, and a
# member whose leader is gone fails naming the leader.
set -uo pipefail
GRAPHRUN="$1"
ALLCLOSE="$2"
F="$(dirname "$3")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

source "$(dirname "$0")/check_lib.sh"

# Worker 0 (the leader) logs its steps: the failure checks below wait for
# a step to start there.
start_task worker 0 --log_steps
a0="$addr"
w0_log="$err"
start_task worker 1
a1="$addr"
printf '{"worker": ["%s", "%s"]}\n' "$a0" "$a1" > "$tmp/cluster.json"

ops() {  # WORKER
  "$GRAPHRUN" run "$F/ops_w$1.pbtxt" --cluster="$tmp/cluster.json" \
    --feed "a=$F/ops.a$1.npy" --feed "i=$F/ops.i$1.npy" \
    --fetch sum --fetch mean --fetch imax --fetch gather --fetch bcast --out "$tmp/ops$1"
}
ops 0 > "$tmp/ops0.log" 2>&1 &
c0=$!
ops 1 > "$tmp/ops1.log" 2>&1
check "ops: worker 1's client exits 0" test $? -eq 0
wait "$c0"
check "ops: worker 0's client exits 0" test $? -eq 0
for w in 0 1; do
  for f in sum mean imax gather bcast; do
    check "ops: worker $w's $f is TensorFlow's" \
      "$ALLCLOSE" "$tmp/ops$w/$f.npy" "$F/ops_w$w.$f.npy" 1e-6
  done
done

# Both clients train 10 steps together: GRAPHS (train_w0/1.pbtxt's
# folder) and LABEL (their outputs' folder is $tmp/LABEL0 and LABEL1).
train_both() {  # GRAPHS LABEL
  local g="$1" label="$2" w
  for w in 0 1; do
    "$GRAPHRUN" train "$g/train_w$w.pbtxt" --cluster="$tmp/cluster.json" --task="$w" \
      --init init --train train --steps 10 --feed_steps "x=$F/train.x$w.npy" \
      --feed_steps "y=$F/train.y$w.npy" --fetch loss --out "$tmp/$label$w" --quiet \
      > "$tmp/$label$w.log" 2>&1 &
    eval "c$w=\$!"
  done
  for w in 0 1; do
    eval "wait \$c$w"
    check "$label: worker $w's client exits 0" test $? -eq 0
    check "$label: worker $w's 10 losses are TensorFlow's" \
      "$ALLCLOSE" "$tmp/$label$w/loss.npy" "$F/train.loss$w.npy" 1e-5
  done
}
train_both "$F" train
for w in 0 1; do
  # The variables live on the worker tasks after the clients have gone.
  "$GRAPHRUN" run "$F/train_w$w.pbtxt" --cluster="$tmp/cluster.json" \
    --fetch mlp/w0/Read/ReadVariableOp --fetch mlp/b0/Read/ReadVariableOp \
    --fetch mlp/w1/Read/ReadVariableOp --out "$tmp/final$w" > "$tmp/final$w.log" 2>&1
  check "train: worker $w's variables read" test $? -eq 0
  for v in w0 b0 w1; do
    check "train: worker $w's final $v is TensorFlow's" \
      "$ALLCLOSE" "$tmp/final$w/mlp__${v}__Read__ReadVariableOp.npy" \
      "$F/train_final_w${w}__mlp__$v.npy" 1e-5
  done
done

# The same graphs with communication_hint "ring" (TensorFlow's
# CommunicationImplementation.RING): the gradients go round a ring between
# the two tasks, their addresses traded through the leader once.
mkdir -p "$tmp/ring"
for w in 0 1; do
  sed 's/s: "auto"/s: "ring"/' "$F/train_w$w.pbtxt" > "$tmp/ring/train_w$w.pbtxt"
done
train_both "$tmp/ring" ring

# Worker 1's task goes away while worker 0's members wait for its members
# (the group has met, so the leader knows who is missing): worker 0's step
# fails, naming the task.
started="$(grep -c ' started' "$w0_log")"
ops 0 > "$tmp/lost1.log" 2>&1 &
c0=$!
timeout 60 grep -m "$((started + 1))" ' started' \
  < <(exec tail -n +1 -f --pid=$$ "$w0_log") > "$tmp/seen"
kill "${pids[1]}"
wait "$c0"
check "a lost member's task fails its peer's step" test $? -ne 0
check "... naming the task" grep -q "/job:worker/replica:0/task:1" "$tmp/lost1.log"

cat "$tmp/lost1.log"
finish
