#!/usr/bin/env python3
"""Loop overhead, graphrun next to TensorFlow, alternating in one run.

Graphs (v1 control flow, exported by TensorFlow; committed under
bench/graphs/, rewritten by --export):
  minimal_loop      i = 0; while i < n: i += 1            (n = 10000)
  minimal_loop_2dev the same, the add pinned to /device:CPU:1
  rnn_loop          h = tanh(h @ W), h [8,256], W [256,256] (n = 200)
  rnn_loop_2dev     the same, MatMul on CPU:1, Tanh on CPU:0

For each graph the script alternates TensorFlow (Session.run, the same
GraphDef, device_count CPU=2) and graphrun (`graphrun run --steps`) for
--rounds rounds and prints the median step time of each, per-iteration
costs and the ratio graphrun / TensorFlow. Needs TensorFlow (not CI):

    /path/to/venv/bin/python bench/loop_vs_tensorflow.py [--export] [--rounds 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GRAPHS = os.path.join(HERE, "graphs")

# name -> (iterations fed as n, feeds other than n, fetch)
CASES = {
    "minimal_loop": 10000,
    "minimal_loop_2dev": 10000,
    "rnn_loop": 200,
    "rnn_loop_2dev": 200,
}


def build(name):
    tf1.disable_control_flow_v2()
    g = tf1.Graph()
    two = name.endswith("_2dev")
    with g.as_default():
        n = tf1.placeholder(tf.int32, [], name="n")
        if name.startswith("minimal_loop"):
            def body(i):
                with tf.device("/device:CPU:1" if two else "/device:CPU:0"):
                    return i + 1
            with tf.device("/device:CPU:0"):
                out = tf1.while_loop(lambda i: i < n, body, [tf.constant(0)])
            tf.identity(out, name="out")
        else:
            rng = np.random.default_rng(7)
            w = tf.constant((rng.standard_normal((256, 256)) / 16).astype(np.float32))
            h0 = tf1.placeholder(tf.float32, [8, 256], name="h0")

            def body(i, h):
                with tf.device("/device:CPU:1" if two else "/device:CPU:0"):
                    m = tf.matmul(h, w)
                with tf.device("/device:CPU:0"):
                    return i + 1, tf.tanh(m)
            with tf.device("/device:CPU:0"):
                _, out = tf1.while_loop(lambda i, h: i < n, body, [tf.constant(0), h0])
            tf.identity(out, name="out")
    return g


def export():
    os.makedirs(GRAPHS, exist_ok=True)
    for name in CASES:
        gd = build(name).as_graph_def()
        with open(os.path.join(GRAPHS, name + ".pb"), "wb") as f:
            f.write(gd.SerializeToString(deterministic=True))
        print("wrote", name, len(gd.node), "nodes")


def feeds_for(name, n):
    feeds = {"n:0": np.array(n, dtype=np.int32)}
    if name.startswith("rnn"):
        feeds["h0:0"] = np.random.default_rng(3).standard_normal((8, 256)).astype(np.float32)
    return feeds


def time_tf(name, n, steps):
    gd = tf1.GraphDef()
    with open(os.path.join(GRAPHS, name + ".pb"), "rb") as f:
        gd.ParseFromString(f.read())
    g = tf1.Graph()
    with g.as_default():
        tf1.import_graph_def(gd, name="")
    config = tf1.ConfigProto(device_count={"CPU": 2})
    with tf1.Session(graph=g, config=config) as sess:
        feeds = feeds_for(name, n)
        sess.run("out:0", feeds)  # warm up
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            sess.run("out:0", feeds)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_graphrun(name, n, steps, binary):
    with tempfile.TemporaryDirectory() as tmp:
        args = [binary, "run", os.path.join(GRAPHS, name + ".pb"), "--fetch", "out",
                "--steps", str(steps + 1), "--cpu_devices", "2"]
        for k, v in feeds_for(name, n).items():
            path = os.path.join(tmp, k.split(":")[0] + ".npy")
            np.save(path, v)
            args += ["--feed", f"{k.split(':')[0]}={path}"]
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    m = re.search(r"median step ([0-9.]+) ms", out)
    return float(m.group(1)) / 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--export", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--graphrun", default=os.path.join(ROOT, "bazel-bin/tools/graphrun"))
    args = parser.parse_args()
    if args.export:
        export()
    print("| graph | iterations | TensorFlow step | graphrun step | TF us/iter | graphrun us/iter | graphrun / TF |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, n in CASES.items():
        tf_t, gr_t = [], []
        for _ in range(args.rounds):
            tf_t.append(time_tf(name, n, args.steps))
            gr_t.append(time_graphrun(name, n, args.steps, args.graphrun))
        t, g = statistics.median(tf_t), statistics.median(gr_t)
        print(f"| {name} | {n} | {t*1e3:.2f} ms | {g*1e3:.2f} ms | {t/n*1e6:.2f} | "
              f"{g/n*1e6:.2f} | {g/t:.2f} |")


if __name__ == "__main__":
    main()
