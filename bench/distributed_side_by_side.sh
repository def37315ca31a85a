#!/usr/bin/env bash
# graphrun's distributed runtime and TensorFlow's gRPC runtime side by side
# on loopback: float32 tensors made on task 0 and reduced on task 1 (1 MB ..
# 1 GB), a scalar round trip, a trivial step; plus a plain TCP stream, the
# bare data plane and the time to detect a dead worker. Builds what it
# needs, alternates graphrun and TensorFlow rounds (each round: --reps
# repetitions of every measurement), then prints one markdown table with
# medians over all repetitions, their range, and the ratios. CI does not run
# this.
#
#   bench/distributed_side_by_side.sh [--rounds=3] [--reps=3] [--max_mb=1024]
#       [--nodp_max_mb=1024] [--detect_reps=5] [--freeze_reps=3]
#       [--skip_bare] [--out=DIR] [--bin=DIR]
#
# The binaries are built, then copied to DIR/bin (so that a rebuild during
# the run changes nothing); --bin=DIR takes distributed_benchmark,
# transfer_benchmark and graphrun from DIR instead, without building.
# TensorFlow runs from $TF_PYTHON (default /work/tfvenv/bin/python,
# TensorFlow 2.21). A full run takes about 10 minutes on 2 cores; --rounds=1
# --reps=1 --max_mb=64 checks the setup in about one.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 reps=3 max_mb=1024 nodp_max_mb=1024 detect_reps=5 freeze_reps=3 bare=1 out="" bin=""
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds="${arg#*=}" ;;
    --reps=*) reps="${arg#*=}" ;;
    --max_mb=*) max_mb="${arg#*=}" ;;
    --nodp_max_mb=*) nodp_max_mb="${arg#*=}" ;;
    --detect_reps=*) detect_reps="${arg#*=}" ;;
    --freeze_reps=*) freeze_reps="${arg#*=}" ;;
    --skip_bare) bare=0 ;;
    --out=*) out="${arg#*=}" ;;
    --bin=*) bin="${arg#*=}" ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
tf_python="${TF_PYTHON:-/work/tfvenv/bin/python}"
[[ -n "$out" ]] || out="$(mktemp -d /tmp/distributed_side_by_side.XXXXXX)"
mkdir -p "$out"

if [[ -z "$bin" ]]; then
  echo "== building" >&2
  ./bazelw build //bench:distributed_benchmark //bench:transfer_benchmark //tools:graphrun >&2
  mkdir -p "$out/bin"
  cp -f bazel-bin/bench/distributed_benchmark bazel-bin/bench/transfer_benchmark \
    bazel-bin/tools/graphrun "$out/bin/"
  bin="$out/bin"
fi

graphrun_round() {
  local try
  for try in 1 2; do
    if "$bin/distributed_benchmark" --graphrun="$bin/graphrun" \
      --reps="$reps" --max_mb="$max_mb" --nodp_max_mb="$nodp_max_mb" \
      --only=transfer,rtt,trivial --json="$out/graphrun_$1.json" >"$out/graphrun_$1.txt" \
      2>"$out/graphrun_$1.log"; then
      return 0
    fi
    echo "graphrun round $1 failed (try $try): $(tail -n 2 "$out/graphrun_$1.log")" >&2
  done
  return 1
}
tf_round() {
  TF_CPP_MIN_LOG_LEVEL=2 "$tf_python" bench/tf_distributed_transfer.py \
    --reps="$reps" --max_mb="$max_mb" --json="$out/tf_$1.json" 2>"$out/tf_$1.log"
}
for ((r = 1; r <= rounds; ++r)); do
  echo "== round $r of $rounds" >&2
  if ((r % 2)); then graphrun_round "$r"; tf_round "$r"; else tf_round "$r"; graphrun_round "$r"; fi
done
echo "== dead-worker detection" >&2
"$bin/distributed_benchmark" --graphrun="$bin/graphrun" --only=detect \
  --detect_reps="$detect_reps" --freeze_reps="$freeze_reps" --json="$out/detect.json" \
  >"$out/detect.txt"
if ((bare)); then
  echo "== bare data plane (bench/transfer_benchmark)" >&2
  "$bin/transfer_benchmark" --max_mb="$max_mb" --reps_scale=0.34 \
    >"$out/transfer_benchmark.txt"
fi

python3 - "$out" "$rounds" "$bare" <<'EOF'
import glob, json, os, statistics, sys

out, rounds, bare = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
def load(prefix):
    return [json.load(open(f)) for f in sorted(glob.glob(os.path.join(out, prefix + "_*.json")))]
gr, tf = load("graphrun"), load("tf")
med = statistics.median

def pooled(runs, *path):
    v = []
    for r in runs:
        x = r
        for p in path:
            x = x.get(p) if isinstance(x, dict) else None
            if x is None:
                break
        v.extend(x or [])
    return v

def paired(runs, a, b, *path):
    """Median of per-repetition ratios a/b (same round, same repetition)."""
    v = []
    for r in runs:
        x = r
        for p in path:
            x = x.get(p, {})
        v.extend(p / q for p, q in zip(x.get(a, []), x.get(b, [])) if q)
    return med(v) if v else float("nan")

def fmt(v, f="%.2f"):
    if not v:
        return "-"
    return (f + " (" + f + "–" + f + ")") % (med(v), min(v), max(v))

def ratio(a, b):
    return "%.2f" % (med(a) / med(b)) if a and b else "-"

sizes = sorted({int(k) for r in gr for k in r.get("transfer", {})})
n_gr = len(pooled(gr, "transfer", str(sizes[0]), "none_gbps")) if sizes else 0
print("## graphrun distributed runtime vs TensorFlow gRPC (loopback, 2 cores)\n")
print("Effective GB/s of float32 delivered from task 0 to task 1 = size / (2-task step - "
      "1-task step); median (min–max) over %d repetitions in %d alternating rounds. "
      "Ratios within graphrun: median of per-repetition ratios; graphrun / TF: ratio of "
      "medians.\n" % (n_gr, rounds))
print("| size | plain TCP | graphrun none | graphrun fp16 | graphrun no data plane | TF gRPC | "
      "none / TCP | fp16 / none | none / TF | fp16 / TF | no-dp / TF |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for mb in sizes:
    k = str(mb)
    g = {m: pooled(gr, "transfer", k, m + "_gbps") for m in ("plain", "none", "fp16", "nodp")}
    t = pooled(tf, "transfer", k, "tf_gbps")
    print("| %d MB | %s | %s | %s | %s | %s | %.2f | %.2f | %s | %s | %s |" % (
        mb, fmt(g["plain"]), fmt(g["none"]), fmt(g["fp16"]), fmt(g["nodp"], "%.3f"),
        fmt(t, "%.3f"), paired(gr, "none_gbps", "plain_gbps", "transfer", k),
        paired(gr, "fp16_gbps", "none_gbps", "transfer", k),
        ratio(g["none"], t), ratio(g["fp16"], t), ratio(g["nodp"], t)))

print("\n1-task (no transfer) step, ms: " + ", ".join(
    "%d MB graphrun %s / TF %s" % (mb, fmt([s * 1e3 for s in pooled(gr, "transfer", str(mb), "base_step_s")], "%.1f"),
                                   fmt([s * 1e3 for s in pooled(tf, "transfer", str(mb), "base_step_s")], "%.1f"))
    for mb in sizes))

if 16 in sizes and 1024 in sizes:
    print("\nGoals:")
    for m in ("none", "fp16"):
        print("- %s: 1 GB / 16 MB = %.2f (goal >= 0.9)" % (m, med(pooled(gr, "transfer", "1024", m + "_gbps")) /
                                                          med(pooled(gr, "transfer", "16", m + "_gbps"))))
    for mb in (64, 256, 1024):
        print("- %d MB: none / plain TCP = %.2f (goal >= 0.5); fp16 / none = %.2f (goal >= 1.8)" % (
            mb, paired(gr, "none_gbps", "plain_gbps", "transfer", str(mb)),
            paired(gr, "fp16_gbps", "none_gbps", "transfer", str(mb))))

print("\n| per step, µs | graphrun | TF | graphrun / TF |\n|---|---:|---:|---:|")
for what, label in (("rtt", "scalar task 0 → 1 → 0"), ("trivial", "trivial step")):
    for key, sub in (("two_task_us", "2 tasks"), ("one_task_us", "1 task"), ("diff_us", "difference")):
        a, b = pooled(gr, what, key), pooled(tf, what, key)
        print("| %s: %s | %s | %s | %s |" % (label, sub, fmt(a, "%.0f"), fmt(b, "%.0f"), ratio(a, b)))

d = json.load(open(os.path.join(out, "detect.json"))).get("detect", {})
k = d.get("sigkill_ms", [])
print("\nDead worker (SIGKILL once its stderr says the step started) until Run returns "
      "Unavailable: median %.1f ms, max %.1f ms over %d repetitions" % (med(k), max(k), len(k)))
s = d.get("sigstop_ms", [])
if s:
    print("Frozen worker (SIGSTOP: sockets stay open, only keepalive notices): median %.0f ms, "
          "max %.0f ms over %d repetitions" % (med(s), max(s), len(s)))
if bare:
    print("\nbench/transfer_benchmark (plain TCP and the bare data plane, same run):\n")
    print(open(os.path.join(out, "transfer_benchmark.txt")).read().rstrip())
print("\nRaw samples and logs: %s" % out)
EOF
