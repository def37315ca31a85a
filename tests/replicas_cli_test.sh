#!/usr/bin/env bash
# `graphrun train --replicas=N` on TensorFlow's v1 training graphs
# (tests/fixtures/training): N data-parallel replicas, in one process (CPU
# devices) and over worker processes on loopback, each fed 1/N of
# TensorFlow's batch, give TensorFlow's full-batch losses (rtol 1e-5 exact
# on the wire, 1e-3 with fp16 gradients) and final variables, every
# replica's variables bit-identical after every step (--check_replicas);
# over worker processes the buckets go round a ring between the tasks (and
# with --allreduce=gloo over gloo's, with --allreduce=graph through the
# dataflow graph's exchange);
# the checkpoint is written once, under TensorFlow's keys. A replica killed
# mid-run fails the run naming its task; --recover resumes from the newest
# checkpoint on restarted tasks. Bad input fails naming what is wrong.
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
    --out "$out" --save "$out/model.ckpt" --check_replicas "$@"
}

final_is_tensorflows() {  # CASE OUT RTOL LABEL
  local c="$1" out="$2" rtol="$3" label="$4" n=0
  for want in "$F/${c}_final__"*.npy; do
    key="$(basename "$want" .npy)"
    key="${key#${c}_final__}"
    key="${key//__//}"
    check "$label: saved $key" "$CKPT_TO_NPY" "$out/model.ckpt" "$key" "$tmp/got.npy"
    check "$label: $key is TensorFlow's" "$ALLCLOSE" "$tmp/got.npy" "$want" "$rtol"
    n=$((n + 1))
  done
  check "$label: every variable compared" test "$n" -ge 4
  check "$label: the checkpoint holds replica 0 alone" \
    bash -c "! '$CKPT_TO_NPY' '$out/model.ckpt' replica_1/$key '$tmp/none.npy' 2>/dev/null"
}

# In one process: 2 and 4 replicas on CPU devices.
for c in mlp_sgd mlp_adam mlp_momentum_resource cnn_sgd cnn_adam; do
  for r in 2 4; do
    out="$tmp/${c}_$r"
    train "$c" "$out" --replicas "$r" > "$tmp/$c.$r.log" 2>&1
    check "$c x$r: exits 0" test $? -eq 0
    check "$c x$r: says where the replicas run" \
      grep -q "^$r replicas on /job:localhost/replica:0/task:0/device:CPU:0, " "$tmp/$c.$r.log"
    check "$c x$r: losses are TensorFlow's full batch's" \
      "$ALLCLOSE" "$out/loss.npy" "$F/${c}_loss.npy" 1e-5
    final_is_tensorflows "$c" "$out" 1e-5 "$c x$r"
  done
done

# One bucket per gradient: the CNN's four exchanges start as the backward
# pass makes each gradient; the losses do not change.
c=cnn_adam
train "$c" "$tmp/${c}_buckets" --replicas 2 --fusion_threshold_mb 0.0001 > "$tmp/buckets.log" 2>&1
check "small buckets: exits 0" test $? -eq 0
check "small buckets: one per gradient" grep -q "averaged in 4 bucket(s)" "$tmp/buckets.log"
check "small buckets: losses are TensorFlow's" \
  "$ALLCLOSE" "$tmp/${c}_buckets/loss.npy" "$F/${c}_loss.npy" 1e-5

# Over worker processes: one replica per task, exact and fp16 on the wire.
for c in mlp_adam cnn_adam; do
  out="$tmp/${c}_workers"
  train "$c" "$out" --replicas 2 --local_workers 2 --wire_compression none \
    > "$tmp/$c.workers.log" 2>&1
  check "$c over 2 workers: exits 0" test $? -eq 0
  check "$c over 2 workers: one replica per task" grep -q \
    "^2 replicas on /job:worker/replica:0/task:0, /job:worker/replica:0/task:1;" \
    "$tmp/$c.workers.log"
  check "$c over 2 workers: losses are TensorFlow's" \
    "$ALLCLOSE" "$out/loss.npy" "$F/${c}_loss.npy" 1e-5
  final_is_tensorflows "$c" "$out" 1e-5 "$c over 2 workers"
done
check "over workers: the buckets go round a ring between the tasks" \
  grep -q "over a ring between the tasks" "$tmp/mlp_adam.workers.log"
# The exchange in the dataflow graph instead (--allreduce=graph).
c=mlp_adam
train "$c" "$tmp/${c}_graph" --replicas 2 --local_workers 2 --wire_compression none \
  --allreduce graph > "$tmp/graph.log" 2>&1
check "in-graph exchange over 2 workers: exits 0" test $? -eq 0
check "in-graph exchange: said (no ring)" bash -c "! grep -q 'over a ring' '$tmp/graph.log'"
check "in-graph exchange: losses are TensorFlow's" \
  "$ALLCLOSE" "$tmp/${c}_graph/loss.npy" "$F/${c}_loss.npy" 1e-5
# Over gloo's TCP ring instead (--allreduce=gloo), 2 and 4 workers.
for r in 2 4; do
  train "$c" "$tmp/${c}_gloo$r" --replicas "$r" --local_workers "$r" --allreduce gloo \
    > "$tmp/gloo$r.log" 2>&1
  check "gloo over $r workers: exits 0 (replicas identical)" test $? -eq 0
  check "gloo over $r workers: said" grep -q "over gloo between the tasks" "$tmp/gloo$r.log"
  check "gloo over $r workers: losses are TensorFlow's" \
    "$ALLCLOSE" "$tmp/${c}_gloo$r/loss.npy" "$F/${c}_loss.npy" 1e-5
done
err="$("$GRAPHRUN" train "$F/$c.pbtxt" --train train --replicas 2 --allreduce nccl 2>&1)"
check "--allreduce nccl is refused" grep -q "allreduce must be ring, gloo or graph, not 'nccl'" <<<"$err"
c=mlp_sgd
train "$c" "$tmp/${c}_w4" --replicas 4 --local_workers 4 --wire_compression none \
  > "$tmp/w4.log" 2>&1
check "4 workers: exits 0" test $? -eq 0
check "4 workers: losses are TensorFlow's" "$ALLCLOSE" "$tmp/${c}_w4/loss.npy" "$F/${c}_loss.npy" 1e-5
c=mlp_adam
train "$c" "$tmp/${c}_fp16" --replicas 2 --local_workers 2 > "$tmp/fp16.log" 2>&1
check "fp16 gradients: exits 0 (replicas still identical)" test $? -eq 0
check "fp16 gradients: said" grep -q "fp16 between tasks" "$tmp/fp16.log"
check "fp16 gradients: losses within fp16 error of TensorFlow's" \
  "$ALLCLOSE" "$tmp/${c}_fp16/loss.npy" "$F/${c}_loss.npy" 1e-3
check "fp16 gradients: ... and not exact (the wire rounds)" \
  bash -c "! '$ALLCLOSE' '$tmp/${c}_fp16/loss.npy' '$F/${c}_loss.npy' 1e-7 > /dev/null"

# --recover: worker 0 killed mid-run (at its 10th partition run, whatever
# it is: GRAPHRUN_CRASH_AT, inherited by the local tasks); the tasks start
# again, replica 0 restores the newest checkpoint and the broadcast hands
# it to replica 1; the 8 losses are an uninterrupted run's.
out="$tmp/recovered"
GRAPHRUN_CRASH_AT=worker.run_graph:10 "$GRAPHRUN" train "$F/$c.pbtxt" \
  --restore "$F/${c}_init.ckpt" --train train --steps 8 --feed_steps "x=$F/${c}_x.npy" \
  --feed_steps "y=$F/${c}_y.npy" --fetch loss --out "$out" --save "$out/model.ckpt" \
  --save_every 1 --recover --replicas 2 --local_workers 2 --wire_compression none \
  > "$tmp/recovered.log" 2>&1
check "recover: the run ends well" test $? -eq 0
check "recover: from a periodic checkpoint" \
  grep -q "^graphrun train: recovering from .*model.ckpt-[1-7] (step [1-7])$" "$tmp/recovered.log"
"$GRAPHRUN" train "$F/$c.pbtxt" --restore "$F/${c}_init.ckpt" --train train --steps 8 \
  --feed_steps "x=$F/${c}_x.npy" --feed_steps "y=$F/${c}_y.npy" --fetch loss \
  --out "$tmp/eight" --replicas 2 --quiet
check "recover: the losses are an uninterrupted run's" \
  "$ALLCLOSE" "$out/loss.npy" "$tmp/eight/loss.npy" 1e-6

# A replica's task killed mid-run: the run fails, naming the task.
exec 3< <(exec "$GRAPHRUN" worker --listen=127.0.0.1:0 --job=worker --task=0 2> "$tmp/w0.err")
pids+=($!)
exec 4< <(exec "$GRAPHRUN" worker --listen=127.0.0.1:0 --job=worker --task=1 2> "$tmp/w1.err")
w1=$!
pids+=($w1)
addr=()
for fd in 3 4; do
  read -r -t 30 -u "$fd" line
  check "task on fd $fd serving" grep -q ' serving on ' <<<"$line"
  addr+=("$(sed -n 's/.* serving on \([^ ]*\).*/\1/p' <<<"$line")")
done
printf '{"worker": ["%s", "%s"]}\n' "${addr[@]}" > "$tmp/cluster.json"
"$GRAPHRUN" train "$F/$c.pbtxt" --restore "$F/${c}_init.ckpt" --train train --steps 1000000 \
  --feed "x=$F/${c}_x0.npy" --feed "y=$F/${c}_y0.npy" --cluster "$tmp/cluster.json" \
  --replicas 2 --save "$tmp/killed/model.ckpt" --save_every 1 > "$tmp/killed.log" 2>&1 &
client=$!
pids+=($client)
deadline=$((SECONDS + 200))
while [ "$SECONDS" -lt "$deadline" ]; do  # until the first periodic save is logged
  grep -q "^step 1: saved" "$tmp/killed.log" 2>/dev/null && break
  kill -0 "$client" 2>/dev/null || break
  read -r -t 0.1 -u 3 _ || true
done
check "killed replica: training was under way" grep -q "^step 1: saved" "$tmp/killed.log"
kill -9 "$w1"
wait "$client"
rc=$?
check "killed replica: the run fails" test "$rc" -ne 0 -a "$rc" -ne 130
check "killed replica: the error names the task" \
  grep -q "/job:worker/replica:0/task:1" "$tmp/killed.log"

# The cluster from the environment, as launchers give it: TF_CONFIG (a
# Kubeflow TFJob's pods) and srun's variables. Worker 1 is a `graphrun
# worker` that finds its task there too; the client is worker 0 and serves
# that task itself (--in_process_worker). Two free loopback ports in a row:
free_ports() {
  local p=$((20000 + RANDOM % 30000))
  while (exec 5<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null ||
        (exec 5<>"/dev/tcp/127.0.0.1/$((p + 1))") 2>/dev/null; do p=$((p + 2)); done
  echo "$p"
}
serve_from_env() {  # FD FLAGS VAR=VALUE...: a worker whose task the environment names
  local fd="$1" flags="$2"
  shift 2
  eval "exec $fd< <(exec env \"\$@\" \"\$GRAPHRUN\" worker $flags 2> \"\$tmp/env_worker.$fd.err\")"
  pids+=($!)
  local line
  read -r -t 30 -u "$fd" line
  check "worker from the environment (fd $fd) serving" grep -q ' serving on ' <<<"$line"
}
c=mlp_adam
p="$(free_ports)"
cluster="\"cluster\": {\"worker\": [\"127.0.0.1:$p\", \"127.0.0.1:$((p + 1))\"]}"
serve_from_env 5 "" TF_CONFIG="{$cluster, \"task\": {\"type\": \"worker\", \"index\": 1}}"
TF_CONFIG="{$cluster, \"task\": {\"type\": \"worker\", \"index\": 0}}" \
  train "$c" "$tmp/tf_config" --replicas 2 --cluster=TF_CONFIG --in_process_worker \
  --wire_compression none > "$tmp/tf_config.log" 2>&1
check "TF_CONFIG: exits 0" test $? -eq 0
check "TF_CONFIG: one replica per task of TF_CONFIG's cluster" grep -q \
  "^2 replicas on /job:worker/replica:0/task:0, /job:worker/replica:0/task:1;" "$tmp/tf_config.log"
check "TF_CONFIG: losses are TensorFlow's" \
  "$ALLCLOSE" "$tmp/tf_config/loss.npy" "$F/${c}_loss.npy" 1e-5
p="$(free_ports)"
slurm=(SLURM_STEP_NODELIST=localhost SLURM_STEP_TASKS_PER_NODE=2 SLURM_STEP_NUM_TASKS=2)
serve_from_env 6 "--slurm_base_port=$p" "${slurm[@]}" SLURM_PROCID=1
env "${slurm[@]}" SLURM_PROCID=0 "$GRAPHRUN" train "$F/$c.pbtxt" --restore "$F/${c}_init.ckpt" \
  --train train --steps 20 --feed_steps "x=$F/${c}_x.npy" --feed_steps "y=$F/${c}_y.npy" \
  --fetch loss --out "$tmp/slurm" --replicas 2 --cluster=slurm --slurm_base_port="$p" \
  --in_process_worker --wire_compression none > "$tmp/slurm.log" 2>&1
check "slurm: exits 0" test $? -eq 0
check "slurm: losses are TensorFlow's" "$ALLCLOSE" "$tmp/slurm/loss.npy" "$F/${c}_loss.npy" 1e-5
err="$(env -u TF_CONFIG "$GRAPHRUN" train "$F/$c.pbtxt" --cluster=TF_CONFIG --replicas 2 \
        --train train 2>&1)"; rc=$?
check "--cluster=TF_CONFIG without TF_CONFIG fails" test "$rc" -ne 0
check "... saying so" grep -q "TF_CONFIG environment variable is not set" <<<"$err"
with_ps="\"cluster\": {\"worker\": [\"127.0.0.1:1\"], \"ps\": [\"127.0.0.1:2\"]}"
err="$(TF_CONFIG="{$with_ps, \"task\": {\"type\": \"ps\", \"index\": 0}}" "$GRAPHRUN" train \
        "$F/$c.pbtxt" --cluster=TF_CONFIG --replicas 2 --train train 2>&1)"; rc=$?
check "--cluster=TF_CONFIG on a ps task fails" test "$rc" -ne 0
check "... naming the task" grep -q "this process is /job:ps/replica:0/task:0" <<<"$err"
err="$(env -u SLURM_PROCID "$GRAPHRUN" train "$F/$c.pbtxt" --cluster=slurm --train train 2>&1)"
rc=$?
check "--cluster=slurm outside srun fails" test "$rc" -ne 0
check "... saying so" grep -q "SLURM_PROCID is not set" <<<"$err"

# Bad input.
err="$(train mlp_sgd "$tmp/bad1" --replicas 3 2>&1)"; rc=$?
check "3 replicas for a batch of 16 fail" test "$rc" -ne 0
check "... naming the feed" grep -q "feed x has 16 rows .* 3 replicas cannot split evenly" <<<"$err"
err="$(train mlp_sgd "$tmp/bad2" --replicas 3 --local_workers 2 2>&1)"; rc=$?
check "3 replicas on 2 workers fail" test "$rc" -ne 0
check "... saying why" grep -q "there are 2 worker task(s)" <<<"$err"
err="$(train mlp_sgd "$tmp/bad3" --replicas 2 --local_workers 1 --local_ps 1 2>&1)"; rc=$?
check "replicas with ps tasks fail" test "$rc" -ne 0
check "... saying to pick one" grep -q "give one of them" <<<"$err"
err="$(train mlp_sgd "$tmp/bad4" --replicas 2 --fusion_threshold_mb 0 2>&1)"; rc=$?
check "a zero fusion threshold fails" test "$rc" -ne 0
finish
