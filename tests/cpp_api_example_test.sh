#!/usr/bin/env bash
# Builds and runs examples/cpp_api as its users do: a Bazel workspace of its
# own that uses graphrun as the external repository @graphrun. The build is a
# nested, cold, offline Bazel (its own output root under $TEST_TMPDIR, the
# same `bazel` as the outer build) run in the example's directory of the
# source tree; the program must print both layers and agree with the values it
# computes by hand.
#
#   cpp_api_example_test.sh EXAMPLE_WORKSPACE_FILE
set -euo pipefail

# The runfile is a symlink into the source tree: the example's real directory,
# whose WORKSPACE reaches graphrun at ../..
example_dir="$(dirname "$(readlink -f "$1")")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
log="$tmp/nested_build.log"
bazel_bin="$(command -v bazel || echo /usr/bin/bazel)"
mkdir -p "$tmp/home"

# Bazel in the example's workspace with a private output root; the server
# quits on its own a minute after the last command should the trap not run.
nested_bazel() {
  (cd "$example_dir" &&
    HOME="$tmp/home" "$bazel_bin" --output_user_root="$tmp/bazel_root" \
      --nohome_rc --max_idle_secs=60 "$@")
}
# Stops the nested server and frees its output root (hundreds of MB).
clean_up() {
  nested_bazel shutdown >/dev/null 2>&1 || true
  chmod -R u+w "$tmp/bazel_root" 2>/dev/null || true
  rm -rf "$tmp/bazel_root"
}
trap clean_up EXIT
trap 'exit 143' INT TERM

fail() {  # keeps the nested build's log with the test's outputs
  echo "FAIL: $*"
  [[ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" && -f "$log" ]] &&
    cp "$log" "$TEST_UNDECLARED_OUTPUTS_DIR/"
  exit 1
}

# --symlink_prefix=/ leaves no bazel-* links in the source tree. The test
# checks how the example builds and what it prints, not its speed: an
# unoptimized build compiles graphrun in half the time (users build the
# example optimized, as its .bazelrc says).
build_flags=(--symlink_prefix=/ --jobs=2 --compilation_mode=fastbuild)
start=$(date +%s)
if ! nested_bazel build "${build_flags[@]}" //:mlp >"$log" 2>&1; then
  tail -n 60 "$log"
  fail "bazel build //:mlp in examples/cpp_api (whole log in outputs.zip)"
fi
echo "cold unoptimized build of examples/cpp_api //:mlp: $(($(date +%s) - start))s"
if grep -Eq "Download(ing| from)" "$log"; then
  grep -E "Download(ing| from)" "$log" | head
  fail "the nested build is not offline"
fi

mlp="$(nested_bazel info "${build_flags[@]}" bazel-bin 2>/dev/null)/mlp"
[[ -x "$mlp" ]] || fail "no binary at $mlp"

status=0
out="$("$mlp" 2>&1)" || status=$?
echo "$out"
[[ $status -eq 0 ]] || fail "mlp exited with status $status"

expect() {  # expect LINE: the output has this exact line
  grep -qxF -- "$1" <<<"$out" || fail "output lacks the line '$1'"
}
expect "graph: 11 nodes"
expect "hidden [2,3]:"
expect "   1.000000  3.800000  0.000000"
expect "   0.000000  3.050000  0.000000"
expect "probs [2,2]:"
expect "   0.817575  0.182426"
expect "   0.377541  0.622459"
expect "OK: matches the values computed by hand"
echo "PASS"
