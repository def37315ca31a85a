#!/usr/bin/env python3
"""TensorFlow's gRPC runtime on the transfers bench/distributed_benchmark.cc
measures for graphrun, for bench/distributed_side_by_side.sh.

Two tf.distribute.Server processes (/job:worker/task:0 and task:1) on
loopback, a tf.compat.v1 Session in this process whose target is task 0
(its master). TensorFlow's settings are left at their defaults (grappler
on); every graph feeds what it must so that no optimizer folds the work away.

  transfer  dims (fed int32 [1]) -> Fill(dims, 0.5) on task 0 -> Mean on
            task 1, the scalar fetched; minus the same graph on task 0 alone,
            per repetition: GB/s of float32 delivered.
  rtt       x (fed) on task 0 -> x * 2 on task 1 -> + 1 on task 0, fetched;
            minus the same graph on task 0 alone (microseconds per step).
  trivial   one Const per task, both fetched, vs both on task 0.

Steps run through Session.make_callable (the cheapest way Python has to run
a step). Prints a summary to stderr and writes every sample as JSON, in the
layout distributed_benchmark --json uses:

  /work/tfvenv/bin/python bench/tf_distributed_transfer.py [--reps=5]
      [--max_mb=1024] [--only=transfer,rtt,trivial] [--json=FILE]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

SIZES_MB = [1, 16, 64, 256, 1024]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(cluster, task):
    import tensorflow as tf

    server = tf.distribute.Server(
        tf.train.ClusterSpec(cluster), job_name="worker", task_index=task, start=True
    )
    print("serving", flush=True)
    server.join()


def start_servers():
    ports = [free_port(), free_port()]
    cluster = {"worker": ["127.0.0.1:%d" % p for p in ports]}
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    procs = []
    for task in range(2):
        p = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--serve", json.dumps(cluster), str(task)],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        procs.append(p)
    for p in procs:
        line = p.stdout.readline()
        if "serving" not in line:
            raise SystemExit("a TensorFlow server did not start: %r" % line)
    return procs, "grpc://" + cluster["worker"][0]


def median(v):
    return statistics.median(v) if v else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--max_mb", type=int, default=1024)
    parser.add_argument("--only", default="transfer,rtt,trivial")
    parser.add_argument("--json", default="")
    parser.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(json.loads(args.serve[0]), int(args.serve[1]))
        return
    only = set(args.only.split(","))

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    procs, target = start_servers()
    try:
        result = run(tf, np, target, args, only)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f)


def run(tf, np, target, args, only):
    v1 = tf.compat.v1
    graph = tf.Graph()

    def on(task):
        return tf.device("/job:worker/task:%d" % task)

    with graph.as_default():
        transfer = {}
        for name, reducer in (("base", 0), ("tf", 1)):
            with on(0):
                dims = v1.placeholder(tf.int32, [1], name="dims_" + name)
                big = tf.fill(dims, tf.constant(0.5, tf.float32))
            with on(reducer):
                total = tf.reduce_mean(big, axis=0)
            transfer[name] = (dims, total)
        rtt = {}
        for name, middle in (("two", 1), ("one", 0)):
            with on(0):
                x = v1.placeholder(tf.float32, [], name="x_" + name)
            with on(middle):
                doubled = x * tf.constant(2.0)
            with on(0):
                y = doubled + tf.constant(1.0)
            rtt[name] = (x, y)
        trivial = {}
        for name, other in (("two", 1), ("one", 0)):
            with on(0):
                a = tf.constant(1.0)
            with on(other):
                b = tf.constant(2.0)
            trivial[name] = [a, b]

    result = {}
    with v1.Session(target, graph=graph) as sess:
        if "transfer" in only:
            result["transfer"] = measure_transfer(sess, np, transfer, args)
        if "rtt" in only:
            calls = {k: sess.make_callable(y, feed_list=[x]) for k, (x, y) in rtt.items()}
            feed = np.float32(3)
            if calls["two"](feed) != 7:
                raise SystemExit("round trip: 3 * 2 + 1 came back wrong")
            result["rtt"] = measure_pair(args.reps, lambda k: calls[k](feed))
        if "trivial" in only:
            calls = {k: sess.make_callable(f) for k, f in trivial.items()}
            result["trivial"] = measure_pair(args.reps, lambda k: calls[k]())
    for what in ("rtt", "trivial"):
        if what in result:
            r = result[what]
            print(
                "TF %s: 2-task %.0f us, 1-task %.0f us, difference %.0f us"
                % (what, median(r["two_task_us"]), median(r["one_task_us"]), median(r["diff_us"])),
                file=sys.stderr,
            )
    return result


def measure_transfer(sess, np, transfer, args):
    calls = {
        k: sess.make_callable(total, feed_list=[dims]) for k, (dims, total) in transfer.items()
    }
    sizes = [mb for mb in SIZES_MB if mb <= args.max_mb]

    def once(method, mb):
        n = (mb << 20) // 4
        start = time.perf_counter()
        got = calls[method](np.array([n], np.int32))
        seconds = time.perf_counter() - start
        if abs(got - 0.5) > 1e-3:
            raise SystemExit("%s: the mean of %d halves came back as %r" % (method, n, got))
        return seconds

    out = {str(mb): {"tf_gbps": [], "base_step_s": [], "tf_step_s": []} for mb in sizes}
    methods = ["base", "tf"]
    # Size by size, as distributed_benchmark does.
    for mb in sizes:
        for m in methods:
            once(m, mb)
        inner = max(1, min(15, 64 // mb))
        for rep in range(args.reps):
            t = {}
            for i in range(len(methods)):
                m = methods[(rep + i) % len(methods)]
                t[m] = median([once(m, mb) for _ in range(inner)])
            o = out[str(mb)]
            o["base_step_s"].append(t["base"])
            o["tf_step_s"].append(t["tf"])
            o["tf_gbps"].append((mb << 20) / (t["tf"] - t["base"]) / 1e9)
        print("TF transfer: %d MB done" % mb, file=sys.stderr)
    for mb in sizes:
        print(
            "TF %4d MB: %.3f GB/s (1-task step %.1f ms)"
            % (mb, median(out[str(mb)]["tf_gbps"]), median(out[str(mb)]["base_step_s"]) * 1e3),
            file=sys.stderr,
        )
    return out


def measure_pair(reps, step, steps=400):
    """Per repetition: the median of steps/2 + steps/2 steps of each graph,
    in alternating blocks."""
    for _ in range(50):
        step("two")
        step("one")
    r = {"two_task_us": [], "one_task_us": [], "diff_us": []}
    for rep in range(reps):
        times = {"two": [], "one": []}
        for block in range(2):
            order = ["two", "one"] if (rep + block) % 2 == 0 else ["one", "two"]
            for k in order:
                for _ in range(steps // 2):
                    start = time.perf_counter()
                    step(k)
                    times[k].append((time.perf_counter() - start) * 1e6)
        two, one = median(times["two"]), median(times["one"])
        r["two_task_us"].append(two)
        r["one_task_us"].append(one)
        r["diff_us"].append(two - one)
    return r


if __name__ == "__main__":
    main()
