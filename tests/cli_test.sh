#!/usr/bin/env bash
# End-to-end tests of the graphrun CLI as a user runs it.
set -uo pipefail
GRAPHRUN="$1"
EXAMPLE="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
passes=0

check() {  # check NAME COMMAND... ; the command must succeed
  local name="$1"; shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $name"; failures=$((failures + 1)); fi
}

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
out="$("$GRAPHRUN" inspect "$tmp/unknown.pbtxt")"
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

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
