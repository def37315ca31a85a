#!/usr/bin/env bash
# `graphrun train` on a TensorFlow graph whose towers average their gradients
# with CollectiveReduceV2 (tests/fixtures/collective/train.pbtxt): on 2 CPU
# devices of one process, and with the towers moved to 2 worker processes on
# loopback (/job:worker/task:r), both towers' losses are TensorFlow's (rtol
# 1e-5). A member without its partner in a session of one process fails
# naming the node, group and instance.
set -uo pipefail
GRAPHRUN="$1"
ALLCLOSE="$2"
F="$(dirname "$3")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

source "$(dirname "$0")/check_lib.sh"

train() {  # GRAPH OUT [more flags]
  local g="$1" out="$2"
  shift 2
  "$GRAPHRUN" train "$g" --init init --train train --steps 10 \
    --feed_steps "tower_0/x0=$F/train_x0.npy" --feed_steps "tower_0/y0=$F/train_y0.npy" \
    --feed_steps "tower_1/x1=$F/train_x1.npy" --feed_steps "tower_1/y1=$F/train_y1.npy" \
    --fetch tower_0/loss0 --fetch tower_1/loss1 --out "$out" "$@"
}

losses_are_tensorflows() {  # OUT LABEL
  check "$2: tower 0's losses are TensorFlow's" \
    "$ALLCLOSE" "$1/tower_0__loss0.npy" "$F/train_loss0.npy" 1e-5
  check "$2: tower 1's losses are TensorFlow's" \
    "$ALLCLOSE" "$1/tower_1__loss1.npy" "$F/train_loss1.npy" 1e-5
}

train "$F/train.pbtxt" "$tmp/devices" --cpu_devices 2 > "$tmp/devices.log" 2>&1
check "2 CPU devices: exits 0" test $? -eq 0
losses_are_tensorflows "$tmp/devices" "2 CPU devices"

sed 's|/device:CPU:\([01]\)|/job:worker/task:\1/device:CPU:0|' "$F/train.pbtxt" > "$tmp/workers.pbtxt"
check "the towers moved to worker tasks" grep -q "/job:worker/task:1/device:CPU:0" "$tmp/workers.pbtxt"
train "$tmp/workers.pbtxt" "$tmp/workers" --local_workers 2 --wire_compression none \
  > "$tmp/workers.log" 2>&1
check "2 worker processes: exits 0" test $? -eq 0
losses_are_tensorflows "$tmp/workers" "2 worker processes"

# Tower 1's first gradient reduce moved to another instance: each member is
# alone in the graph, so both are left to meet at run time, which a session
# of one process cannot do: the run fails naming a member, its group and
# instance.
sed 's|input: "tower_1/CollectiveReduceV2/instance_key"|input: "tower_1/CollectiveReduceV2/group_key"|' \
  "$F/train.pbtxt" > "$tmp/lonely.pbtxt"
check "one member moved" grep -q 'input: "tower_1/CollectiveReduceV2/group_key"' "$tmp/lonely.pbtxt"
train "$tmp/lonely.pbtxt" "$tmp/lonely" --cpu_devices 2 > "$tmp/lonely.log" 2>&1
check "a lonely member: exits non-zero" test $? -ne 0
check "a lonely member: named with its group and instance" \
  grep -q "(reduce of group 9, instance [0-9]*, execution 0, on /job:localhost/replica:0/task:0/device:CPU:[01]): the graph holds only some of the instance's 2 members" \
  "$tmp/lonely.log"

finish
