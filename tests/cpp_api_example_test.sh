#!/usr/bin/env bash
# Checks examples/cpp_api as its users meet it: a Bazel workspace of its own
# that uses graphrun as the external repository @graphrun.
#  1. A nested, cold, offline Bazel (its own output root under $TEST_TMPDIR,
#     the same `bazel` as the outer build) in the example's directory of the
#     source tree analyses //:mlp (every @graphrun target it names exists and
#     is visible from outside) and compiles mlp.cc against the headers as
#     @graphrun exports them.
#  2. The outer build's //examples:cpp_api_mlp, the same mlp.cc with the same
#     dependencies (checked here against the example's BUILD), links and runs;
#     it must print both layers and agree with the values it computes by hand.
# Compiling and linking graphrun's libraries a second time in the nested
# build took a cold 8 minutes on 2 cores and checked little more.
#
#   cpp_api_example_test.sh EXAMPLE_WORKSPACE_FILE EXAMPLES_BUILD MLP_BINARY
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

# --symlink_prefix=/ leaves no bazel-* links in the source tree.
build_flags=(--symlink_prefix=/ --jobs=2 --compilation_mode=fastbuild)
start=$(date +%s)
# compilation_outputs: mlp.cc's object, which needs @graphrun's headers
# (generated ones included) but none of its objects.
if ! nested_bazel build "${build_flags[@]}" --output_groups=compilation_outputs \
  //:mlp >"$log" 2>&1; then
  tail -n 60 "$log"
  fail "bazel build //:mlp (its compilation outputs) in examples/cpp_api (whole log in outputs.zip)"
fi
echo "cold nested analysis of //:mlp and compile of mlp.cc: $(($(date +%s) - start))s"
if grep -Eq "Download(ing| from)" "$log"; then
  grep -E "Download(ing| from)" "$log" | head
  fail "the nested build is not offline"
fi
grep -Eq "_objs/mlp/mlp(\.pic)?\.o$" "$log" || fail "the nested build made no object for mlp.cc"

# The labels a cc_binary's deps name, from a BUILD file (the block that
# starts at `name = "NAME"`), with @graphrun's prefix dropped.
deps_of() {  # deps_of BUILD NAME
  awk -v name="\"$2\"" '
    $1 == "name" && $3 ~ name { inside = 1 }
    inside && /deps = \[/ { deps = 1; next }
    inside && deps && /\]/ { exit }
    inside && deps { print }' "$1" |
    grep -o '"[^"]*"' | tr -d '"' | sed 's|^@graphrun//|//|' | sort
}
example_deps="$(deps_of "$example_dir/BUILD" mlp)"
outer_deps="$(deps_of "$2" cpp_api_mlp)"
[[ -n "$example_deps" ]] || fail "no deps found for mlp in $example_dir/BUILD"
[[ "$example_deps" == "$outer_deps" ]] ||
  fail "examples/BUILD's cpp_api_mlp depends on
$outer_deps
but examples/cpp_api/BUILD's mlp on
$example_deps"

mlp="$3"
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
