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

# `start_task JOB TASK [ENV=VALUE ...] [--FLAG ...]` starts `$GRAPHRUN
# worker` for one task on loopback (ENV... set for it alone, e.g.
# GRAPHRUN_CRASH_AT; --FLAGs passed to it, e.g. --log_steps), its stdout
# open on the next free fd from 3 until the test ends, its pid added to
# `pids` and its stderr in the file `err` names; once its first line says
# where it serves, `addr` holds that host:port.
next_fd=3
addr=
err=
# The tasks (and other background processes a test adds to `pids`) are
# killed when the test exits.
pids=()
kill_tasks() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap kill_tasks EXIT
start_task() {
  local job="$1" task="$2" a envs=() flags=()
  shift 2
  for a in "$@"; do
    if [[ "$a" == --* ]]; then flags+=("$a"); else envs+=("$a"); fi
  done
  local fd=$next_fd
  next_fd=$((next_fd + 1))
  err="$tmp/$job$task.$fd.err"
  eval "exec $fd< <(exec env ${envs[*]} \"\$GRAPHRUN\" worker --listen=127.0.0.1:0 --job=$job --task=$task ${flags[*]} 2> \"\$err\")"
  pids+=($!)
  local line
  read -r -t 30 -u "$fd" line
  check "$job $task serving" grep -q ' serving on ' <<<"$line"
  addr="$(sed -n 's/.* serving on \([^ ]*\).*/\1/p' <<<"$line")"
}
