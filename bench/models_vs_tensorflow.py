#!/usr/bin/env python3
"""Keras models' step time, graphrun next to TensorFlow, alternating in one run.

The models are the test fixtures of tests/fixtures/models (Keras
applications, a BERT-style encoder, text models; frozen by
make_model_fixtures.py): for each, the script fills the stripped weights
back into a temporary .pb, then for --rounds rounds alternates TensorFlow
(Session.run of that GraphDef, --steps steps after a warm-up step) and
graphrun (`graphrun run --steps`, one CPU device), both with this machine's
cores, and prints a markdown table of the median step times and the ratio
graphrun / TensorFlow. Models with ops graphrun cannot run yet (found with
`graphrun inspect`) are listed with those ops. Needs TensorFlow (not CI):

    ./bazelw build //tools:graphrun
    /path/to/venv/bin/python bench/models_vs_tensorflow.py [--only resnet50,vgg16] \
        [--rounds 3] [--steps 20]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

tf1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = os.path.join(ROOT, "tests", "fixtures", "models")
sys.path.insert(0, MODELS)
import fixture_weights  # pylint: disable=g-import-not-at-top,wrong-import-position


def safe(tensor):
    return tensor.replace("/", "__").replace(":", "_")


def read_models():
    """[(name, {field: value})] from MANIFEST, then PENDING."""
    models = []
    for file in ("MANIFEST", "PENDING"):
        path = os.path.join(MODELS, file)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    parts = line.split()
                    models.append((parts[0], dict(p.split("=", 1) for p in parts[1:])))
    return models


def write_filled(name, path):
    gd = tf1.GraphDef()
    with open(os.path.join(MODELS, name + ".pb"), "rb") as f:
        gd.ParseFromString(f.read())
    fixture_weights.fill_graph(gd, os.path.join(MODELS, name + ".weights"))
    with open(path, "wb") as f:
        f.write(gd.SerializeToString())
    return gd


def missing_ops(graphrun, path):
    out = subprocess.run([graphrun, "inspect", path], capture_output=True, text=True).stdout
    lines = out.split("Ops this build cannot run:\n", 1)[1].splitlines()
    missing = []
    for line in lines:
        if not line.startswith("  ") or line.strip() == "(none)":
            break
        missing.append(line.split()[0])
    return missing


def feeds_of(name, fields):
    return {f: np.load(os.path.join(MODELS, f"{name}.{safe(f)}.npy"))
            for f in fields["feeds"].split(",")}


def time_tf(gd, feeds, fetches, steps, config=None):
    """Median Session.run time (s) of `steps` steps after a warm-up step;
    `config` a ConfigProto (None: TensorFlow's defaults)."""
    g = tf1.Graph()
    with g.as_default():
        tf1.import_graph_def(gd, name="")
    with tf1.Session(graph=g, config=config) as sess:
        sess.run(fetches, feeds)  # warm up
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            sess.run(fetches, feeds)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def graphrun_step(graphrun, path, feed_files, fetches, steps, flags=()):
    """Median step (s) of `graphrun run` over steps + 1 steps; `feed_files`
    maps feed names to .npy files, `flags` are more `graphrun run` flags."""
    args = [graphrun, "run", path, "--steps", str(steps + 1), *flags]
    for feed, file in feed_files.items():
        args += ["--feed", f"{feed}={file}"]
    for fetch in fetches:
        args += ["--fetch", fetch]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median step ([0-9.]+) ms", out).group(1)) / 1e3


def time_graphrun(graphrun, path, name, fields, steps):
    feed_files = {feed: os.path.join(MODELS, f"{name}.{safe(feed)}.npy")
                  for feed in fields["feeds"].split(",")}
    return graphrun_step(graphrun, path, feed_files, fields["fetches"].split(","), steps)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--graphrun", default=os.path.join(ROOT, "bazel-bin/tools/graphrun"))
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    print(f"{os.cpu_count()} cores; median step of {args.steps} steps, median of "
          f"{args.rounds} rounds\n")
    print("| model | nodes | distinct ops | graphrun ms | TensorFlow ms | graphrun / TF |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, fields in read_models():
        if only is not None and name not in only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, name + ".pb")
            gd = write_filled(name, path)
            row = f"| {name} | {len(gd.node)} | {len({n.op for n in gd.node})} |"
            missing = missing_ops(args.graphrun, path)
            if missing:
                print(f"{row} missing ops: {', '.join(missing)} | | |", flush=True)
                continue
            feeds = feeds_of(name, fields)
            fetches = fields["fetches"].split(",")
            tf_t, gr_t = [], []
            for _ in range(args.rounds):
                tf_t.append(time_tf(gd, feeds, fetches, args.steps))
                gr_t.append(time_graphrun(args.graphrun, path, name, fields, args.steps))
        t, g = statistics.median(tf_t), statistics.median(gr_t)
        print(f"{row} {g * 1e3:.2f} | {t * 1e3:.2f} | {g / t:.2f} |", flush=True)


if __name__ == "__main__":
    main()
