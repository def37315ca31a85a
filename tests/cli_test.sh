#!/usr/bin/env bash
# End-to-end tests of the graphrun CLI as a user runs it.
set -uo pipefail
GRAPHRUN="$1"
EXAMPLE="$2"
ALLCLOSE="$3"
EXAMPLE_X="$4"
EXAMPLE_EXPECTED="$5"
SAVED_MODEL="$(dirname "$6")"  # examples/mlp_saved_model/saved_model.pb
SAVED_EXPECTED="$7"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

source "$(dirname "$0")/check_lib.sh"

# inspect prints the summary a user can act on.
out="$("$GRAPHRUN" inspect "$EXAMPLE")"
check "inspect exit status" test $? -eq 0
check "op counts" grep -qE '^  MatMul +2$' <<<"$out"
check "placeholder with dtype and shape" grep -q '  x: float \[?,4\]' <<<"$out"
check "likely output" grep -q '  probs: float \[?,3\]' <<<"$out"
check "validation ok" grep -q '^Validation: OK' <<<"$out"

# text -> binary -> text keeps the graph.
check "to binary" "$GRAPHRUN" inspect "$EXAMPLE" --format=binary --out="$tmp/mlp.pb"
check "binary is not text" bash -c "! grep -q 'node {' '$tmp/mlp.pb'"
check "to text" "$GRAPHRUN" inspect "$tmp/mlp.pb" --format=text --out="$tmp/mlp2.pbtxt"
check "back to binary" "$GRAPHRUN" inspect "$tmp/mlp2.pbtxt" --format=binary --out="$tmp/mlp2.pb"
check "binary round trip identical" cmp -s "$tmp/mlp.pb" "$tmp/mlp2.pb"
"$GRAPHRUN" inspect "$tmp/mlp.pb" > "$tmp/summary_bin.txt"
"$GRAPHRUN" inspect "$EXAMPLE" > "$tmp/summary_txt.txt"
check "same summary from either format" bash -c "diff <(tail -n +2 '$tmp/summary_bin.txt') <(tail -n +2 '$tmp/summary_txt.txt')"

# Unknown ops are listed with the nodes that use them, and fail validation.
cat > "$tmp/unknown.pbtxt" <<'PB'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "f1" op: "FancyOp" input: "x" }
node { name: "f2" op: "FancyOp" input: "f1" }
node { name: "y" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
PB
out="$("$GRAPHRUN" inspect "$tmp/unknown.pbtxt")"; rc=$?
check "failed validation exits 1" test $rc -eq 1
check "unknown op listed with its nodes" grep -q 'FancyOp (the op is not registered in graphrun): f1, f2' <<<"$out"
check "validation names node and op" grep -q "Validation: node 'f1' (FancyOp): Op type not registered 'FancyOp'" <<<"$out"

# Bad input: clear errors, non-zero exit, nothing half written.
head -c 200 "$tmp/mlp.pb" > "$tmp/truncated.pb"
err="$("$GRAPHRUN" inspect "$tmp/truncated.pb" 2>&1)"; rc=$?
check "truncated binary fails" test $rc -eq 1
check "truncated binary message" grep -q 'truncated or corrupt' <<<"$err"
printf 'node {\n  name: "a"\n  op: "Relu\n}\n' > "$tmp/syntax.pbtxt"
err="$("$GRAPHRUN" inspect "$tmp/syntax.pbtxt" 2>&1)"; rc=$?
check "syntax error fails" test $rc -eq 1
check "syntax error has line and column" grep -q 'line 3, column' <<<"$err"
err="$("$GRAPHRUN" inspect "$tmp/nope.pb" 2>&1)"; rc=$?
check "missing file fails" test $rc -eq 1
check "missing file message" grep -q 'NOT_FOUND: cannot open' <<<"$err"
err="$("$GRAPHRUN" inspect "$EXAMPLE" --format=binary --out="$tmp/no/such/dir/x.pb" 2>&1)"; rc=$?
check "unwritable output fails" test $rc -eq 1
check "no partial output" bash -c "! ls '$tmp/no' 2>/dev/null"
mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
if [ "$(id -u)" -ne 0 ]; then
  "$GRAPHRUN" inspect "$EXAMPLE" --format=binary --out="$tmp/ro/x.pb" 2>/dev/null
  check "read-only dir leaves nothing" bash -c "[ -z \"\$(ls -A '$tmp/ro')\" ]"
fi
err="$("$GRAPHRUN" frobnicate 2>&1)"; rc=$?
check "unknown command is a usage error" test $rc -eq 2
err="$("$GRAPHRUN" inspect "$EXAMPLE" --format=yaml 2>&1)"; rc=$?
check "bad format flag" grep -q "unknown graph format 'yaml'" <<<"$err"

# Shapes too large to exist are refused at import, by inspect and by run,
# naming the node, its op and what is too large (tests/bad_graphs/).
bad="$(dirname "$0")/bad_graphs"
refused() {  # refused FILE NODE OP FRAGMENT
  local out rc
  out="$("$GRAPHRUN" inspect "$bad/$1")"; rc=$?
  check "inspect $1 exits 1" test $rc -eq 1
  check "inspect $1 names node, op and size" \
    grep -q "^Validation: node '$2' ($3): .*$4" <<<"$out"
  out="$("$GRAPHRUN" run "$bad/$1" --fetch "$2" --out "$tmp/bad_$2" 2>&1)"; rc=$?
  check "run $1 exits 1" test $rc -eq 1
  check "run $1 fails at load, naming node, op and size" \
    grep -q "node '$2' ($3): .*$4" <<<"$out"
  check "run $1 writes nothing" bash -c "[ -z \"\$(ls -A '$tmp/bad_$2' 2>/dev/null)\" ]"
}
refused tile_overflow.pbtxt tiled Tile "Tile output dimension 0 is too large"
refused range_overflow.pbtxt r Range "Range from -9223372036854775808 to 9223372036854775807 by 1 is too large"
refused fill_overflow.pbtxt filled Fill "shape \[2000000000,2000000000,2000000000\] is too large"

# make_npy FILE DESCR SHAPE NBYTES: a .npy with NBYTES of 0x01 bytes.
make_npy() {
  local hdr="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
  while [ $(( (10 + ${#hdr} + 1) % 64 )) -ne 0 ]; do hdr="$hdr "; done
  local len=$(( ${#hdr} + 1 ))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len % 256)))\\x$(printf %02x $((len / 256)))";
    printf '%s\n' "$hdr"; head -c "$4" /dev/zero | tr '\0' '\1'; } > "$1"
}

# graphrun run: the example against TensorFlow's own output.
out="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --out "$tmp/run1")"
check "run exit status" test $? -eq 0
check "run prints the fetch" grep -q '^probs: float \[2,3\]' <<<"$out"
check "run wrote probs.npy" test -f "$tmp/run1/probs.npy"
check "matches TensorFlow" "$ALLCLOSE" "$tmp/run1/probs.npy" "$EXAMPLE_EXPECTED" 1e-5
# Without --fetch: the outputs nothing in the graph reads (inspect's list).
out="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --out "$tmp/run_all")"
check "run without --fetch exits 0" test $? -eq 0
check "run without --fetch fetched probs" test "$(ls "$tmp/run_all")" = "probs.npy"
check "run without --fetch matches TensorFlow" "$ALLCLOSE" "$tmp/run_all/probs.npy" \
  "$EXAMPLE_EXPECTED" 1e-5
# The optimizer: reports each pass; off, the same answer; a bad value is refused.
out="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --log_optimizations --out "$tmp/opt")"
check "optimizer passes logged" grep -qE '^optimizer: constant folding: [0-9]+ changes?, [0-9]+ -> [0-9]+ nodes' <<<"$out"
check "optimizer pruning logged" grep -qE '^optimizer: pruning: ' <<<"$out"
check "run without the optimizer" "$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --optimize=none --out "$tmp/noopt" --quiet
check "same answer either way" cmp -s "$tmp/opt/probs.npy" "$tmp/noopt/probs.npy"
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --optimize=fast 2>&1)"; rc=$?
check "bad --optimize exits 2" test $rc -eq 2
check "bad --optimize names the flag" grep -q -- "--optimize must be default or none, not 'fast'" <<<"$err"

out="$("$GRAPHRUN" run "$EXAMPLE" --feed="x=$EXAMPLE_X" --fetch=probs,dense1/Relu:0 --steps 20 --trace "$tmp/trace.json" --out "$tmp/run2")"
check "steps summary" grep -qE '^20 steps in [0-9.]+ s: [0-9.]+ steps/s' <<<"$out"
check "two fetches written" test -f "$tmp/run2/dense1__Relu.npy"
check "trace is Chrome JSON" grep -q '^{"traceEvents":\[' "$tmp/trace.json"
check "trace has the (fused) MatMul slices" grep -q '"name":"_FusedMatMul"' "$tmp/trace.json"

err="$("$GRAPHRUN" run "$EXAMPLE" --fetch probs --out "$tmp/run3" 2>&1)"; rc=$?
check "missing feed fails" test $rc -eq 1
check "missing feed names the placeholder" grep -q "You must feed a value for placeholder tensor 'x'" <<<"$err"
check "failed run writes no files" bash -c "[ -z \"\$(ls -A '$tmp/run3' 2>/dev/null)\" ]"
make_npy "$tmp/int.npy" '<i4' '(2, 4)' 32
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$tmp/int.npy" --fetch probs 2>&1)"; rc=$?
check "wrong feed dtype fails" test $rc -eq 1
check "wrong dtype named" grep -q "feed 'x' is a int32 tensor, but node 'x' (Placeholder) produces float" <<<"$err"
make_npy "$tmp/wide.npy" '<f4' '(2, 5)' 40
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$tmp/wide.npy" --fetch probs 2>&1)"
check "wrong feed shape named" grep -q "feed 'x' has shape \[2,5\], but node 'x' (Placeholder) has shape \[?,4\]" <<<"$err"
make_npy "$tmp/short.npy" '<f4' '(2, 4)' 20
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$tmp/short.npy" --fetch probs 2>&1)"
check "truncated npy" grep -q "truncated: shape \[2,4\] needs 32 bytes" <<<"$err"
printf 'garbage' > "$tmp/bad.npy"
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$tmp/bad.npy" --fetch probs 2>&1)"
check "corrupt npy" grep -q "is not a .npy file" <<<"$err"
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch nowhere 2>&1)"
check "unknown fetch" grep -q "fetch 'nowhere': there is no node 'nowhere'" <<<"$err"
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs:3 2>&1)"
check "bad output index" grep -q "fetch 'probs:3': node 'probs' (Softmax) has 1 outputs" <<<"$err"
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --cpu_devices=100000 2>&1)"; rc=$?
check "too many threads fails, not aborts" test $rc -eq 1
check "too many threads named" grep -q "the session would start 100002 threads" <<<"$err"
touch "$tmp/afile"
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --out "$tmp/afile/sub" 2>&1)"; rc=$?
check "unwritable out dir fails" test $rc -eq 1
check "unwritable out dir named" grep -q "cannot create --out directory" <<<"$err"
cat > "$tmp/nokernel.pbtxt" <<'PB'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "y" op: "FancyOp" input: "x" }
PB
err="$("$GRAPHRUN" run "$tmp/nokernel.pbtxt" --feed "x=$EXAMPLE_X" --fetch y 2>&1)"; rc=$?
check "unknown op fails at load" test $rc -eq 1
check "unknown op named" grep -q "node 'y' (FancyOp): Op type not registered 'FancyOp'" <<<"$err"

# GPUs: --gpus=none runs on CPU without a word; on a machine without a
# usable GPU, auto says once that it runs on CPU, and a GPU asked for by
# index is an error naming the request.
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --gpus=none 2>&1 >/dev/null)"
check "gpus=none is silent" test -z "$err"
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --gpu_memory_fraction=1.5 2>&1)"; rc=$?
check "bad memory fraction fails" test $rc -eq 1
check "bad memory fraction named" grep -q "gpu_memory_fraction must be in \[0, 1\], not 1.5" <<<"$err"
err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --num_gpus=-5 2>&1)"; rc=$?
check "bad GPU count fails, GPU or not" test $rc -eq 1
check "bad GPU count named" grep -q "num_gpus=-5" <<<"$err"
if [ -e /dev/nvidiactl ]; then
  echo "SKIP (GPU machine): the no-GPU messages of --gpus=auto and --gpus=0"
else
  err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs 2>&1 >/dev/null)"; rc=$?
  check "auto without a GPU runs" test $rc -eq 0
  check "auto without a GPU says so" grep -q "^graphrun: running on CPU (" <<<"$err"
  err="$("$GRAPHRUN" run "$EXAMPLE" --feed "x=$EXAMPLE_X" --fetch probs --gpus=0 2>&1)"; rc=$?
  check "an unusable GPU asked for fails" test $rc -eq 1
  check "an unusable GPU asked for is named" grep -q 'gpus="0"' <<<"$err"
fi

# The README's first example: a Keras 3 SavedModel, fed and fetched by its
# signature's keys.
out="$("$GRAPHRUN" run "$SAVED_MODEL" --feed x="$EXAMPLE_X" --out "$tmp/saved" 2>/dev/null)"; rc=$?
check "SavedModel example runs" test $rc -eq 0
check "SavedModel output printed by key" grep -q '^output_0: float \[2,3\]' <<<"$out"
check "SavedModel output is TensorFlow's" "$ALLCLOSE" "$tmp/saved/output_0.npy" "$SAVED_EXPECTED" 1e-5

finish
