"""How much of the gradient allreduce hides behind the backward pass, from
the Chrome trace of `graphrun train --replicas=2` (the last step of each
run), for the MLP and the CNN of bench/train_vs_tensorflow.py (Adam, global
batch 64), with one bucket (the default threshold) and with small buckets.

For each replica (a device's lane in the trace) and each bucket, the
bucket's window runs from the first of its own nodes to start once its
gradients are all there (the `fused` ConcatV2, or a segment's Slice for a
bucket of one gradient) to the last of them to end (the averaged values
back on this replica and unpacked, its sends done). The forward and backward work is every other
node of the replica that computes something (not the allreduce's own nodes,
not Const, _Send or _Recv, not the optimizer's updates). Then

  overlap = |windows ∩ work| / |windows|     (the goal is >= 50 %)
  exposed = |windows \\ work|                 (allreduce time nothing hides,
                                              per replica)

with each side the union of its intervals. Prints each run and the medians.

  ./bazelw build //tools:graphrun
  /work/tfvenv/bin/python bench/replicas_overlap.py [--runs 5] [--steps 30]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

import numpy as np
import tensorflow as tf

import train_vs_tensorflow as bench  # bench/, beside this script

v1 = tf.compat.v1

# (label, flags): one bucket, then a bucket per gradient or two (SMALL: the
# model's threshold below).
CONFIGS = [
    ("CPU devices, 1 bucket", ["--replicas=2"]),
    ("CPU devices, small buckets", ["--replicas=2", "SMALL"]),
    ("2 worker processes, 1 bucket", ["--replicas=2", "--local_workers=2"]),
    ("2 worker processes, small buckets", ["--replicas=2", "--local_workers=2", "SMALL"]),
]
# MB: the MLP's 1.08 MB of gradients in 4 buckets, the CNN's 45 KB in 5.
SMALL_MB = {"mlp": "0.1", "cnn": "0.005"}


def union(intervals):
    out = []
    for b, e in sorted(intervals):
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return out


def length(intervals):
    return sum(e - b for b, e in intervals)


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append([lo, hi])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def overlap_of(trace_path):
    """(overlap fraction, exposed ms per replica, buckets) over the replicas."""
    with open(trace_path) as f:
        t = json.load(f)
    events = t["traceEvents"] if isinstance(t, dict) else t
    lanes = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        name = e.get("args", {}).get("name", "")
        lanes.setdefault(e["pid"], []).append((name, e["name"], e["ts"], e["ts"] + e["dur"]))
    total_window = total_hidden = 0.0
    buckets = set()
    replicas = 0
    for ops in lanes.values():
        spans, work = {}, []
        for name, op, b, e in ops:
            m = re.search(r"graphrun_allreduce/(bucket_\d+)/(.*)$", name)
            if m:
                buckets.add(m.group(1))
                # Consts are hoisted, a _Recv waits from the step's start and
                # flat_k views one gradient as soon as it exists.
                if op in ("Const", "_Recv") or m.group(2).startswith("flat_"):
                    if op == "_Recv":
                        spans.setdefault(m.group(1), []).append((None, e))
                    continue
                spans.setdefault(m.group(1), []).append((b, e))
                continue
            if (op in ("Const", "_Send", "_Recv", "NoOp") or op.startswith(("Apply", "ResourceApply"))
                    or "/update_" in name):
                continue
            work.append((b, e))
        windows = []
        for s in spans.values():
            begins = [b for b, _ in s if b is not None]
            if begins:
                windows.append((min(begins), max(e for _, e in s)))
        windows = union(windows)
        replicas += 1 if windows else 0
        total_window += length(windows)
        total_hidden += length(intersect(windows, union(work)))
    if total_window == 0:
        raise RuntimeError("no allreduce windows in " + trace_path)
    return (total_hidden / total_window, (total_window - total_hidden) / 1000.0 / replicas,
            len(buckets))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--models", default="mlp,cnn")
    args = ap.parse_args()
    v1.disable_eager_execution()
    tmp = tempfile.mkdtemp(prefix="replicas_overlap_")
    rng = np.random.default_rng(0)
    rows = []
    for model in args.models.split(","):
        g, saver = bench.build(model)
        graph_path, ckpt = bench.export(g, saver, tmp, model)
        shape = [64, 784] if model == "mlp" else [64, 28, 28, 1]
        x_path = os.path.join(tmp, model + "_x.npy")
        y_path = os.path.join(tmp, model + "_y.npy")
        np.save(x_path, rng.standard_normal(shape).astype(np.float32))
        np.save(y_path, np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)])
        results = {label: [] for label, _ in CONFIGS}
        for r in range(args.runs):
            for label, flags in CONFIGS:
                flags = ["--fusion_threshold_mb=" + SMALL_MB[model] if f == "SMALL" else f
                         for f in flags]
                trace = os.path.join(tmp, "trace.json")
                out = subprocess.run(
                    [bench.GRAPHRUN, "train", graph_path, "--restore", ckpt, "--train", "train",
                     "--steps", str(args.steps), "--feed", "x=" + x_path, "--feed",
                     "y=" + y_path, "--fetch", "loss", "--gpus=none", "--trace", trace] + flags,
                    capture_output=True, text=True, check=True).stdout
                step = float(re.search(r"median step ([0-9.]+) ms", out).group(1))
                frac, exposed, nb = overlap_of(trace)
                results[label].append((frac, exposed, nb, step))
                print("%s run %d, %s: %d bucket(s), overlap %.0f %%, exposed %.3f ms, "
                      "step %.3f ms" % (model, r + 1, label, nb, 100 * frac, exposed, step),
                      flush=True)
        for label, _ in CONFIGS:
            v = results[label]
            rows.append((model, label, v[0][2], statistics.median(x[0] for x in v),
                         statistics.median(x[1] for x in v), statistics.median(x[3] for x in v)))
    print()
    print("| model, 2 replicas | buckets | overlap (median) | exposed allreduce ms per replica "
          "(traced step) | step ms (median of the run) |")
    print("| --- | --- | --- | --- | --- |")
    for model, label, nb, frac, exposed, step in rows:
        print("| %s, %s | %d | %.0f %% | %.3f | %.3f |" % (
            model.upper(), label, nb, 100 * frac, exposed, step))


if __name__ == "__main__":
    main()
