#!/usr/bin/env bash
# End-to-end tests of placement and partitioning through the graphrun CLI:
# run --log_device_placement / --save_costs / --cpu_devices, place, partition.
set -uo pipefail
GRAPHRUN="$1"
EXAMPLE="$2"
ALLCLOSE="$3"
EXAMPLE_X="$4"
EXAMPLE_EXPECTED="$5"
CLUSTER_2GPU="$6"
CLUSTER_2WORKERS="$7"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
source "$(dirname "$0")/check_lib.sh"
CPU0=/job:localhost/replica:0/task:0/device:CPU:0

# log_device_placement: TensorFlow's line per node, plus the reason.
out="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --log_device_placement)"
check "device mapping banner" grep -qx "Device mapping: no known devices." <<<"$out"
check "placement line format" grep -qE "^probs: \(Softmax\): $CPU0 # " <<<"$out"
check "placement line for every graph node" test "$(grep -cE '^[^ ]+: \([A-Za-z_]+\): /job:' <<<"$out")" -ge 11
# Nodes the optimizer fused away keep their line, saying where they went.
check "fused node logged under its own name" grep -qE "^dense1/MatMul: \(MatMul\): $CPU0 # optimizer: runs as part of 'dense1/Relu' \(_FusedMatMul\)" <<<"$out"
check "result still printed" grep -q '^probs: float \[2,3\]' <<<"$out"
# The fed placeholder is logged under its own name and op, as TensorFlow
# does; the nodes the session adds come last, marked.
check "fed placeholder logged as itself" grep -qE "^x: \(Placeholder\): $CPU0" <<<"$out"
check "no feed stand-in under its internal name" bash -c "! grep -q '^_arg_' <<<\"\$1\"" _ "$out"
check "added fetch node marked" grep -qE "^_retval_0: \(_Retval\): $CPU0 # fetch of 'probs'" <<<"$out"
check "added nodes after the graph's" test "$(grep -E ': \(' <<<"$out" | tail -1 | cut -d: -f1)" = _retval_0

# Several virtual CPU devices give TensorFlow's answer too.
check "cpu_devices=4 run" "$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs \
  --cpu_devices=4 --out "$tmp/four" --quiet
check "cpu_devices=4 matches TensorFlow" "$ALLCLOSE" "$tmp/four/probs.npy" "$EXAMPLE_EXPECTED" 1e-5

# A graph pinned across two CPU devices runs through Send/Recv and matches.
sed -e 's#name: "dense1/MatMul"#name: "dense1/MatMul" device: "/device:CPU:1"#' \
    -e 's#name: "probs"#name: "probs" device: "/device:CPU:0"#' "$EXAMPLE" > "$tmp/pinned.pbtxt"
check "pinned graph differs" bash -c "! cmp -s '$EXAMPLE' '$tmp/pinned.pbtxt'"
out="$("$GRAPHRUN" run "$tmp/pinned.pbtxt" --feed "x=$EXAMPLE_X" --fetch probs --cpu_devices=2 \
  --log_device_placement --out "$tmp/pinned_out")"
check "pinned node on CPU:1" grep -q "^dense1/MatMul: (MatMul): /job:localhost/replica:0/task:0/device:CPU:1 # requested '/device:CPU:1'" <<<"$out"
check "pinned run matches TensorFlow" "$ALLCLOSE" "$tmp/pinned_out/probs.npy" "$EXAMPLE_EXPECTED" 1e-5
err="$("$GRAPHRUN" run "$tmp/pinned.pbtxt" --feed "x=$EXAMPLE_X" --fetch probs 2>&1)"; rc=$?
check "pin to a missing device fails" test $rc -eq 1
check "missing device error names node and devices" grep -q "cannot place node 'dense1/MatMul' (MatMul).*Devices tried: $CPU0 (does not match the request '/device:CPU:1')" <<<"$err"
out="$("$GRAPHRUN" run "$tmp/pinned.pbtxt" --feed "x=$EXAMPLE_X" --fetch probs --allow_soft_placement --log_device_placement 2>&1)"; rc=$?
check "soft placement runs" test $rc -eq 0
check "soft placement logged" grep -q "soft placement: node 'dense1/MatMul'" <<<"$out"

err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --cpu_devices=0 2>&1)"; rc=$?
check "cpu_devices=0 is a usage error" test $rc -eq 2
check "cpu_devices=0 named" grep -q -- "--cpu_devices must be at least 1, not 0" <<<"$err"

# Measured costs: saved by run, used by place.
# (--optimize=none: `place` sees the graph as written, so the profile
# should name its nodes, not the optimizer's fused ones.)
check "save costs" "$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --steps 5 \
  --save_costs "$tmp/costs.json" --quiet --optimize=none
check "cost profile has nodes" grep -q '"node": "dense1/MatMul"' "$tmp/costs.json"
check "cost profile has medians" grep -q '"samples": "5"' "$tmp/costs.json"
check "cost profile has the weights' persistent bytes" grep -q '"persistent_bytes": "128"' "$tmp/costs.json"
out="$("$GRAPHRUN" place "$EXAMPLE" --costs "$tmp/costs.json" --cpu_devices=2 --gpus=none --explain)"
check "place uses measured costs" grep -q "^dense1/MatMul: (MatMul): .*measured cost" <<<"$out"
printf '{"nodes": [{"node": "a", "device": "CPU", "compute_us": -1}]}' > "$tmp/bad_costs.json"
err="$("$GRAPHRUN" place "$EXAMPLE" --costs "$tmp/bad_costs.json" 2>&1)"; rc=$?
check "bad cost profile fails" test $rc -eq 1
check "bad cost profile named" grep -q "cost profile $tmp/bad_costs.json: cost profile entry 0 (node 'a'" <<<"$err"

# place on a described cluster: a big product goes to a GPU, with reasons,
# a summary and a picture.
cat > "$tmp/big.pbtxt" <<'PB'
node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2048 } dim { size: 2048 } } float_val: 1 } } } }
node { name: "mm" op: "MatMul" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "neg" op: "Neg" input: "mm" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "fl" op: "Atan" input: "neg" attr { key: "T" value { type: DT_FLOAT } } }
PB
out="$("$GRAPHRUN" place "$tmp/big.pbtxt" --devices "$CLUSTER_2GPU" --explain --dot "$tmp/placed.dot")"
check "product on a GPU" grep -qE "^mm: \(MatMul\): /job:localhost/replica:0/task:0/device:GPU:[01] # .*cost: est. finish GPU" <<<"$out"
check "summary has the prediction" grep -q "^predicted step time: " <<<"$out"
check "summary has the bound" grep -q "^lower bound: .*predicted/bound = " <<<"$out"
check "summary per device" grep -qE "^  GPU:0 +[0-9]+ " <<<"$out"
check "dot written" grep -q "^digraph placement {" "$tmp/placed.dot"
check "an op without a GPU kernel stays on CPU" grep -q "^fl: (Atan): $CPU0 # no GPU kernel" <<<"$out"
check "no note about missing GPU kernels" bash -c "! grep -q 'this build has no GPU kernels' <<<\"\$1\"" _ "$out"
out="$("$GRAPHRUN" place "$tmp/big.pbtxt" --devices "$CLUSTER_2GPU" --explain --cpu_only_ops=MatMul)"
check "cpu-only op stays on CPU" grep -q "^mm: (MatMul): $CPU0 # no GPU kernel" <<<"$out"
sed -e 's#name: "mm"#name: "mm" device: "/device:GPU:7"#' "$tmp/big.pbtxt" > "$tmp/big_pinned.pbtxt"
err="$("$GRAPHRUN" place "$tmp/big_pinned.pbtxt" --devices "$CLUSTER_2GPU" 2>&1)"; rc=$?
check "impossible request fails" test $rc -eq 1
check "impossible request names node, group, devices" grep -q "cannot place node 'mm' (MatMul): no device satisfies its colocation group \[mm\] requesting '/device:GPU:7'.*Devices tried: " <<<"$err"
printf '{"devices": [{"name": "/gpu:0", "memory_bytes": -5}]}' > "$tmp/bad_cluster.json"
err="$("$GRAPHRUN" place "$tmp/big.pbtxt" --devices "$tmp/bad_cluster.json" 2>&1)"; rc=$?
check "bad cluster fails" test $rc -eq 1
check "bad cluster names file and device" grep -q "$tmp/bad_cluster.json: devices\[0\]" <<<"$err"

# partition: one valid GraphDef per device, Send/Recv pairs, compression
# between tasks.
sed -e 's#name: "mm"#name: "mm" device: "/job:worker/replica:0/task:1/device:GPU:0"#' \
    -e 's#name: "neg"#name: "neg" device: "/job:worker/replica:0/task:0/device:CPU:0"#' \
    "$tmp/big.pbtxt" > "$tmp/two_tasks.pbtxt"
out="$("$GRAPHRUN" partition "$tmp/two_tasks.pbtxt" --devices "$CLUSTER_2WORKERS" --out "$tmp/parts" --wire_compression=fp16)"; rc=$?
check "partition runs" test $rc -eq 0
check "partition files" test "$(ls "$tmp/parts"/*.pbtxt | wc -l)" -ge 2
check "compressed edge reported" grep -q "compressed (fp16)" <<<"$out"
check "send in a partition" grep -q 'op: "_Send"' "$tmp/parts/job_worker_replica_0_task_1_device_GPU_0.pbtxt"
check "recv of half" bash -c "grep -A60 'op: \"_Recv\"' '$tmp/parts/job_worker_replica_0_task_0_device_CPU_0.pbtxt' | grep -q DT_HALF"
for f in "$tmp/parts"/*.pbtxt; do
  check "partition $(basename "$f") inspects" bash -c "'$GRAPHRUN' inspect '$f' | grep -q '^Validation: OK'"
done
check "partition picture" grep -q "color=red" "$tmp/parts/placement.dot"

finish
