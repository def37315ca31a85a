# Sourced (after check_lib.sh, with GRAPHRUN, F and tmp set) by the tests
# of synchronous between-graph training on ps_sync_test's fixtures
# (tests/fixtures/ps/mlp_sgd_sync_between_*): starts ps 0-1 and workers
# 0-1 on loopback ($tmp/cluster.json; check_lib.sh's start_task kills them on exit)
# and reads the op names TensorFlow exported: train_op, sync_op,
# chief_init (global init first, then the chief's local inits), and the
# --local_init flags of the chief (chief_local) and of worker 1
# (worker_local).
started=()
for task in ps:0 ps:1 worker:0 worker:1; do
  start_task "${task%:*}" "${task#*:}"
  started+=("$addr")
done
printf '{"ps": ["%s", "%s"], "worker": ["%s", "%s"]}\n' "${started[@]}" > "$tmp/cluster.json"

c=mlp_sgd_sync_between
names="$F/${c}_names.txt"
name() { sed -n "s/^$1 //p" "$names"; }
# The chief: global init, local init, local step init, chief init; worker 1:
# local init and local step init.
read -r -a chief_init <<<"$(name chief_init)"
read -r -a worker_init <<<"$(name worker_init)"
train_op="$(name train)"
sync_op="$(name sync)"
flags() { local f="$1"; shift; for op in "$@"; do printf -- '%s\n' "$f" "$op"; done; }
mapfile -t chief_local < <(flags --local_init "${chief_init[@]:1}")
mapfile -t worker_local < <(flags --local_init "${worker_init[@]}")
