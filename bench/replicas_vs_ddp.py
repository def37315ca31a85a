"""Data-parallel training step time: graphrun --replicas next to PyTorch
DistributedDataParallel, in one run.

The MLP 784-256-256-10 and the small CNN of bench/train_vs_tensorflow.py
(TensorFlow v1 graphs, ref variables, Adam; global batch 64), rounds
alternating:

  - graphrun in one process on the whole batch (no replicas);
  - graphrun in one process on half the batch (what one replica computes);
  - graphrun --replicas=2 over CPU devices of one process;
  - graphrun --replicas=2 --local_workers=2 (two worker processes on
    loopback, one replica each; gradients fp16 on the wire, the default,
    and exact with --wire_compression=none), and the same with
    --in_process_worker (worker 0 served in the client's own process);
  - the 2-process row with --allreduce=gloo (gloo's TCP ring, float32);
  - the two exact rows again with --allreduce=graph (the buckets averaged
    in the dataflow graph over the tasks' receives instead of over the
    ring between the tasks, the default);
  - graphrun --replicas=4 over CPU devices (the scaling row);
  - PyTorch DDP, 2 processes, gloo (bench/ddp_peer.py), when installed.

The communication of a 2-process step is estimated as DDP's reference
does: the 2-process step less the half-batch step in one process. Prints
each round and a table of medians with the ratios the README quotes.

  ./bazelw build //tools:graphrun
  /work/tfvenv/bin/python bench/replicas_vs_ddp.py [--rounds 3] [--steps 60] [--models mlp,cnn]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf

import train_vs_tensorflow as bench  # bench/, beside this script

v1 = tf.compat.v1

CONFIGS = [
    ("one process, batch 64", []),
    ("one process, batch 32", ["half"]),
    ("2 replicas, CPU devices", ["--replicas=2"]),
    ("2 replicas, 2 worker processes, fp16", ["--replicas=2", "--local_workers=2"]),
    ("2 replicas, 2 worker processes, exact",
     ["--replicas=2", "--local_workers=2", "--wire_compression=none"]),
    ("2 replicas, worker 0 in process, fp16",
     ["--replicas=2", "--local_workers=2", "--in_process_worker"]),
    ("2 replicas, worker 0 in process, exact",
     ["--replicas=2", "--local_workers=2", "--in_process_worker", "--wire_compression=none"]),
    ("2 replicas, 2 worker processes, gloo",
     ["--replicas=2", "--local_workers=2", "--allreduce=gloo"]),
    ("2 replicas, 2 worker processes, exact, in-graph exchange",
     ["--replicas=2", "--local_workers=2", "--wire_compression=none", "--allreduce=graph"]),
    ("2 replicas, worker 0 in process, exact, in-graph exchange",
     ["--replicas=2", "--local_workers=2", "--in_process_worker", "--wire_compression=none",
      "--allreduce=graph"]),
    ("4 replicas, CPU devices", ["--replicas=4"]),
]


def ddp_median_ms(model, x_path, y_path, steps):
    out = subprocess.run([bench.TORCH_PYTHON, os.path.join(bench.ROOT, "bench", "ddp_peer.py"),
                          model, x_path, y_path, str(steps)], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return float(out.stdout.split()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--models", default="mlp,cnn")
    args = ap.parse_args()
    v1.disable_eager_execution()
    tmp = tempfile.mkdtemp(prefix="replicas_bench_")
    rng = np.random.default_rng(0)
    tables = []
    for model in args.models.split(","):
        g, saver = bench.build(model)
        graph_path, ckpt = bench.export(g, saver, tmp, model)
        shape = [64, 784] if model == "mlp" else [64, 28, 28, 1]
        x = rng.standard_normal(shape).astype(np.float32)
        labels = rng.integers(0, 10, 64)
        y = np.eye(10, dtype=np.float32)[labels]
        paths = {}
        for name, xs, ys in (("full", x, y), ("half", x[:32], y[:32])):
            paths[name] = (os.path.join(tmp, "%s_%s_x.npy" % (model, name)),
                           os.path.join(tmp, "%s_%s_y.npy" % (model, name)))
            np.save(paths[name][0], xs)
            np.save(paths[name][1], ys)
        # PyTorch takes class indices.
        y_idx = os.path.join(tmp, model + "_labels.npy")
        np.save(y_idx, labels.astype(np.int64))
        times = {label: [] for label, _ in CONFIGS}
        ddp = []
        for r in range(args.rounds):
            line = []
            for label, flags in CONFIGS:
                half = "half" in flags
                flags = [f for f in flags if f != "half"]
                xp, yp = paths["half" if half else "full"]
                ms = bench.graphrun_median_ms(graph_path, ckpt, xp, yp, args.steps, *flags)
                times[label].append(ms)
                line.append("%s %.3f" % (label, ms))
            d = ddp_median_ms(model, paths["full"][0], y_idx, args.steps)
            if d is not None:
                ddp.append(d)
                line.append("DDP 2 processes %.3f" % d)
            print("%s round %d: %s" % (model, r + 1, "; ".join(line)), flush=True)
        tables.append((model, {k: statistics.median(v) for k, v in times.items()},
                       statistics.median(ddp) if ddp else None))
    print()
    for model, med, d in tables:
        print("| %s, Adam, global batch 64 | ms/step | / one process | / DDP |" % model.upper())
        print("| --- | --- | --- | --- |")
        base = med["one process, batch 64"]
        for label, _ in CONFIGS:
            print("| graphrun %s | %.3f | %.2f | %s |" % (
                label, med[label], med[label] / base, "%.2f" % (med[label] / d) if d else "-"))
        if d:
            print("| PyTorch DDP, 2 processes (gloo) | %.3f | %.2f | 1.00 |" % (d, d / base))
        half = med["one process, batch 32"]
        for label in ("2 replicas, 2 worker processes, fp16",
                      "2 replicas, 2 worker processes, exact",
                      "2 replicas, worker 0 in process, fp16",
                      "2 replicas, worker 0 in process, exact",
                      "2 replicas, 2 worker processes, exact, in-graph exchange",
                      "2 replicas, worker 0 in process, exact, in-graph exchange"):
            print("communication + sync, %s: %.3f ms (step less the batch-32 step)" %
                  (label, med[label] - half))
        if d:
            print("communication + sync, DDP: %.3f ms" % (d - half))
        print()


if __name__ == "__main__":
    main()
