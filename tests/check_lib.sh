# Sourced by the CLI test scripts: `check NAME COMMAND...` counts a pass when
# COMMAND succeeds and prints "FAIL: NAME" otherwise; `finish` prints the
# tally and fails the test if anything failed.
failures=0
passes=0
check() {
  local name="$1"; shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $name"; failures=$((failures + 1)); fi
}
finish() {
  echo "$passes passed, $failures failed"
  [ "$failures" -eq 0 ]
}
