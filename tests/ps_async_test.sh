#!/usr/bin/env bash
# Between-graph replication, asynchronous, as TensorFlow's
# MonitoredTrainingSession scripts run it: two ps tasks and two workers
# started by hand (`graphrun worker --job=ps|worker --task=k`), and one
# client per worker, each with the graph TensorFlow exported for its worker
# (tests/fixtures/ps/mlp_adam_async_w{0,1}.pbtxt) and batches of its own.
# The chief (--task=0) restores the initial variables and saves at the end;
# the other (--task=1) waits for them (--wait_for_variables_s). Both update
# the same variables on the ps tasks as they go; both losses fall; the
# chief's checkpoint holds variables both trained. A replica that waits for
# a chief that never comes fails naming the variables.
set -uo pipefail
GRAPHRUN="$1"
CKPT_TO_NPY="$2"
F="$(dirname "$3")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

source "$(dirname "$0")/check_lib.sh"

# Each task's first stdout line says where it serves; its stdout stays open
# on fd 3..6 until the test ends.
exec 3< <(exec "$GRAPHRUN" worker --listen=127.0.0.1:0 --job=ps --task=0 2> "$tmp/ps0.err")
pids+=($!)
exec 4< <(exec "$GRAPHRUN" worker --listen=127.0.0.1:0 --job=ps --task=1 2> "$tmp/ps1.err")
pids+=($!)
exec 5< <(exec "$GRAPHRUN" worker --listen=127.0.0.1:0 --job=worker --task=0 2> "$tmp/w0.err")
pids+=($!)
exec 6< <(exec "$GRAPHRUN" worker --listen=127.0.0.1:0 --job=worker --task=1 2> "$tmp/w1.err")
pids+=($!)
addr=()
for fd in 3 4 5 6; do
  read -r -t 30 -u "$fd" line
  check "task on fd $fd serving" grep -q ' serving on ' <<<"$line"
  addr+=("$(sed -n 's/.* serving on \([^ ]*\).*/\1/p' <<<"$line")")
done
printf '{"ps": ["%s", "%s"], "worker": ["%s", "%s"]}\n' "${addr[@]}" > "$tmp/cluster.json"

c=mlp_adam_async
train() {  # WORKER OUT [more flags]
  local w="$1" out="$2"
  shift 2
  "$GRAPHRUN" train "$F/${c}_w$w.pbtxt" --cluster="$tmp/cluster.json" --task="$w" \
    --train train --steps 40 --feed_steps "x=$F/${c}_w${w}_x.npy" \
    --feed_steps "y=$F/${c}_w${w}_y.npy" --fetch loss --out "$out" --quiet "$@"
}
# Before the chief has run: a replica that waits for it in vain.
err="$(train 1 "$tmp/w1_alone" --wait_for_variables_s=1 2>&1)"; rc=$?
check "waiting for the chief in vain fails" test "$rc" -ne 0
check "... naming the variables" \
  grep -q "DEADLINE_EXCEEDED: waited 1s for another client to set the variables" <<<"$err"

train 0 "$tmp/w0" --restore "$F/${c}_init.ckpt" --save "$tmp/w0/model.ckpt" \
  > "$tmp/c0.log" 2>&1 &
chief=$!
train 1 "$tmp/w1" --wait_for_variables_s=120 > "$tmp/c1.log" 2>&1
check "worker 1's client exits 0" test $? -eq 0
wait "$chief"
check "the chief's client exits 0" test $? -eq 0

# Both losses fall: the mean of the last five steps under half the first
# five's (from about 1.2 to about 0.3 when this was written).
for w in 0 1; do
  check "worker $w's loss curve written" test -s "$tmp/w$w/loss.csv"
  first="$(sed -n '2,6p' "$tmp/w$w/loss.csv" | awk -F, '{s += $2} END {print s / NR}')"
  last="$(tail -n 5 "$tmp/w$w/loss.csv" | awk -F, '{s += $2} END {print s / NR}')"
  check "worker $w's loss falls ($first -> $last)" \
    awk -v a="$first" -v b="$last" 'BEGIN {exit !(b < 0.5 * a)}'
done
check "the chief's checkpoint has the trained w1" \
  "$CKPT_TO_NPY" "$tmp/w0/model.ckpt" mlp/w1 "$tmp/w1.npy"

finish
