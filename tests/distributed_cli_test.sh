#!/usr/bin/env bash
# `graphrun run --local_workers`, `graphrun worker` + `graphrun run
# --cluster`, and the auth token, as a user runs them.
set -uo pipefail
GRAPHRUN="$1"
EXAMPLE="$2"      # examples/mlp_two_workers.pbtxt
ALLCLOSE="$3"
EXAMPLE_X="$4"
EXAMPLE_EXPECTED="$5"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
source "$(dirname "$0")/check_lib.sh"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

# N workers on loopback started here, over the local worker command.
out="$("$GRAPHRUN" run "$EXAMPLE" --local_workers=2 --feed x="$EXAMPLE_X" --fetch probs \
        --wire_compression=none --log_device_placement --out="$tmp/local" 2>&1)"; rc=$?
check "local workers run" test $rc -eq 0
check "second layer on task 1" grep -q 'dense2/MatMul: (MatMul): /job:worker/replica:0/task:1/device:CPU:0' <<<"$out"
check "first layer on task 0" grep -q 'dense1/MatMul: (MatMul): /job:worker/replica:0/task:0/device:CPU:0' <<<"$out"
check "device mapping names addresses" grep -q '^/job:worker/replica:0/task:1/device:CPU:0 -> 127.0.0.1:' <<<"$out"
check "local result matches" "$ALLCLOSE" "$tmp/local/probs.npy" "$EXAMPLE_EXPECTED" 1e-6
# fp16 on every cross-worker edge (--wire_compression=all) stays close.
check "fp16 run" "$GRAPHRUN" run "$EXAMPLE" --local_workers=2 --feed x="$EXAMPLE_X" --fetch probs \
    --wire_compression=all --out="$tmp/fp16" --quiet
check "fp16 result close" "$ALLCLOSE" "$tmp/fp16/probs.npy" "$EXAMPLE_EXPECTED" 1e-2

# Workers started by hand, a cluster file, a token.
printf 'tok-%s\n' "$RANDOM$RANDOM" > "$tmp/token"
# Each worker's first stdout line says where it serves; its stdout stays
# open on fd 3/4 until the test ends.
exec 3< <(exec "$GRAPHRUN" worker --listen=127.0.0.1:0 --task=0 \
              --auth_token_file="$tmp/token" 2> "$tmp/w0.err")
pids+=($!)
exec 4< <(exec "$GRAPHRUN" worker --listen=127.0.0.1:0 --task=1 \
              --auth_token_file="$tmp/token" 2> "$tmp/w1.err")
pids+=($!)
read -r -t 30 -u 3 line0; check "worker 0 serving" grep -q ' serving on ' <<<"$line0"
read -r -t 30 -u 4 line1; check "worker 1 serving" grep -q ' serving on ' <<<"$line1"
a0="$(sed -n 's/.* serving on \([^ ]*\).*/\1/p' <<<"$line0")"
a1="$(sed -n 's/.* serving on \([^ ]*\).*/\1/p' <<<"$line1")"
printf '{"worker": ["%s", "%s"]}\n' "$a0" "$a1" > "$tmp/cluster.json"

err="$("$GRAPHRUN" run "$EXAMPLE" --cluster="$tmp/cluster.json" --feed x="$EXAMPLE_X" \
        --fetch probs --connect_timeout_s=5 2>&1)"; rc=$?
check "no token: refused" test $rc -eq 1
check "no token: says why" grep -q 'UNAUTHENTICATED.*without an auth token' <<<"$err"
check "with token" "$GRAPHRUN" run "$EXAMPLE" --cluster="$tmp/cluster.json" \
    --auth_token_file="$tmp/token" --feed x="$EXAMPLE_X" --fetch probs --wire_compression=none \
    --out="$tmp/cluster" --quiet
check "cluster result matches" "$ALLCLOSE" "$tmp/cluster/probs.npy" "$EXAMPLE_EXPECTED" 1e-6

# The client serves worker 0 itself (--in_process_worker) on the address
# the cluster file gives it, one nobody serves yet; worker 1 reaches it
# there (the first layer's output travels to task 1 and back).
p=$((20000 + RANDOM % 30000))
while (exec 5<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
printf '{"worker": ["127.0.0.1:%s", "%s"]}\n' "$p" "$a1" > "$tmp/cluster_self.json"
out="$("$GRAPHRUN" run "$EXAMPLE" --cluster="$tmp/cluster_self.json" --in_process_worker \
        --auth_token_file="$tmp/token" --feed x="$EXAMPLE_X" --fetch probs --wire_compression=none \
        --log_device_placement --out="$tmp/self" 2>&1)"; rc=$?
check "in-process worker 0 runs" test $rc -eq 0
check "in-process worker 0 at the file's address" \
  grep -q "^/job:worker/replica:0/task:0/device:CPU:0 -> 127.0.0.1:$p" <<<"$out"
check "in-process worker 0 result matches" "$ALLCLOSE" "$tmp/self/probs.npy" "$EXAMPLE_EXPECTED" 1e-6
err="$("$GRAPHRUN" run "$EXAMPLE" --cluster="$tmp/cluster.json" --in_process_worker --task=4 \
        --auth_token_file="$tmp/token" --feed x="$EXAMPLE_X" --fetch probs 2>&1)"; rc=$?
check "in-process task not in the cluster fails" test $rc -eq 1
check "... naming it" grep -q "task /job:worker/replica:0/task:4 is not in" <<<"$err"

# A task nobody serves: creation gives up naming it.
printf '{"worker": ["%s", "127.0.0.1:1"]}\n' "$a0" > "$tmp/cluster_dead.json"
err="$("$GRAPHRUN" run "$EXAMPLE" --cluster="$tmp/cluster_dead.json" \
        --auth_token_file="$tmp/token" --feed x="$EXAMPLE_X" --fetch probs \
        --connect_timeout_s=1 2>&1)"; rc=$?
check "missing task fails" test $rc -eq 1
# (Task 0 may be named too when it takes over a second to answer.)
check "missing task named" \
  grep -q 'DEADLINE_EXCEEDED.*still waiting for: .*/job:worker/replica:0/task:1 at 127\.0\.0\.1:1' <<<"$err"

# A task that refuses the token fails the run at once, even while another
# task is still being waited for (a 10-minute connect timeout would
# otherwise outlast the test).
printf 'other-%s\n' "$RANDOM" > "$tmp/wrong_token"
err="$("$GRAPHRUN" run "$EXAMPLE" --cluster="$tmp/cluster_dead.json" \
        --auth_token_file="$tmp/wrong_token" --feed x="$EXAMPLE_X" --fetch probs \
        --connect_timeout_s=600 2>&1)"; rc=$?
check "refused token fails" test $rc -eq 1
check "refused token named with its task" \
  grep -q 'UNAUTHENTICATED.*/job:worker/replica:0/task:0' <<<"$err"

# Usage errors.
"$GRAPHRUN" worker > /dev/null 2>&1; rc=$?
check "worker without a task is a usage error" test $rc -eq 2
err="$("$GRAPHRUN" worker --cluster="$tmp/cluster.json" --task=5 2>&1)"; rc=$?
check "task out of range" test $rc -eq 2
check "task out of range named" grep -q 'task index 5 is out of range' <<<"$err"

err="$("$GRAPHRUN" run "$EXAMPLE" --local_workers=-1 --feed x="$EXAMPLE_X" --fetch probs 2>&1)"; rc=$?
check "negative local workers refused" test $rc -eq 1
check "negative local workers named" grep -q -- '--local_workers must be >= 0' <<<"$err"

finish
