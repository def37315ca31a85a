"""Loading a ResNet-50 SavedModel: graphrun next to TensorFlow, one run.

Exports keras.applications.ResNet50 (random weights, batch-1 224x224x3
input) with Keras 3's `model.export`, and a frozen GraphDef of its
serving signature. Then, alternating, ROUNDS times each, from process start
to the first output on disk:
  graphrun         `graphrun run DIR --feed KEY=x.npy --out OUT`
  saved_model_cli  `saved_model_cli run --dir DIR --tag_set serve
                   --signature_def serving_default --inputs KEY=x.npy
                   --outdir OUT`
  tf.saved_model   a fresh Python process: import tensorflow,
                   tf.saved_model.load(DIR), call the signature, np.save
and the steady-state step (`graphrun run --steps 30`, median step) of the
SavedModel's signature next to the frozen graph's, alternating STEP_ROUNDS
times (median of the rounds). Prints the medians and
the ratios; checks graphrun's output against TensorFlow's (rtol 1e-4).

  ./bazelw build //tools:graphrun
  /work/tfvenv/bin/python bench/saved_model_load_vs_tensorflow.py [--rounds 3] [--step_rounds 7]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPHRUN = os.path.join(ROOT, "bazel-bin", "tools", "graphrun")
CLI = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")

LOAD_IN_PYTHON = """
import sys, numpy as np, tensorflow as tf
m = tf.saved_model.load(sys.argv[1])
out = m.signatures["serving_default"](**{sys.argv[2]: tf.constant(np.load(sys.argv[3]))})
np.save(sys.argv[4], list(out.values())[0].numpy())
"""


def export(tmp):
    import keras  # pylint: disable=g-import-not-at-top
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    from tensorflow.python.framework import convert_to_constants  # pylint: disable=g-import-not-at-top
    keras.utils.set_random_seed(0)
    model = keras.applications.ResNet50(weights=None, input_shape=(224, 224, 3))
    path = os.path.join(tmp, "resnet50")
    model.export(path, verbose=False)
    loaded = tf.saved_model.load(path)
    sig = loaded.signatures["serving_default"]
    key = list(sig.structured_input_signature[1].keys())[0]
    frozen = convert_to_constants.convert_variables_to_constants_v2(sig)
    graph_path = os.path.join(tmp, "resnet50_frozen.pb")
    with open(graph_path, "wb") as f:
        f.write(frozen.graph.as_graph_def().SerializeToString())
    x = np.random.default_rng(0).standard_normal((1, 224, 224, 3)).astype(np.float32)
    np.save(os.path.join(tmp, "x.npy"), x)
    want = list(sig(**{key: tf.constant(x)}).values())[0].numpy()
    feed = frozen.inputs[0].name
    fetch = frozen.outputs[0].name
    return path, graph_path, key, feed, fetch, want


def timed(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def median_step(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median step ([0-9.]+) ms", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--step_rounds", type=int, default=7)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="savedmodel_bench_")
    path, graph_path, key, feed, fetch, want = export(tmp)
    x = os.path.join(tmp, "x.npy")
    out = os.path.join(tmp, "out")
    os.makedirs(out, exist_ok=True)
    times = {"graphrun": [], "saved_model_cli": [], "tf.saved_model.load": []}
    for r in range(args.rounds):
        times["graphrun"].append(timed([GRAPHRUN, "run", path, "--feed", "%s=%s" % (key, x),
                                        "--out", os.path.join(out, "graphrun"), "--quiet"]))
        cli_out = os.path.join(out, "cli%d" % r)
        times["saved_model_cli"].append(timed(
            [CLI, "run", "--dir", path, "--tag_set", "serve", "--signature_def",
             "serving_default", "--inputs", "%s=%s" % (key, x), "--outdir", cli_out]))
        times["tf.saved_model.load"].append(timed(
            [sys.executable, "-c", LOAD_IN_PYTHON, path, key, x, os.path.join(out, "py.npy")]))
        print("round %d: %s" % (r + 1, ", ".join("%s %.2f s" % (k, v[-1])
                                                   for k, v in times.items())), flush=True)
    got = np.load(os.path.join(out, "graphrun", os.listdir(os.path.join(out, "graphrun"))[0]))
    ok = np.allclose(got, want, rtol=1e-4, atol=1e-6)
    # The steady step, alternating the two (this machine swings by a third
    # between runs): the median over rounds of each run's median step.
    saved_steps, frozen_steps = [], []
    for r in range(args.step_rounds):
        saved_steps.append(median_step([GRAPHRUN, "run", path, "--feed", "%s=%s" % (key, x),
                                        "--steps", "30"]))
        frozen_steps.append(median_step([GRAPHRUN, "run", graph_path, "--feed",
                                         "%s=%s" % (feed, x), "--fetch", fetch, "--steps", "30"]))
        print("step round %d: signature %.2f ms, frozen %.2f ms" % (
            r + 1, saved_steps[-1], frozen_steps[-1]), flush=True)
    saved_step = statistics.median(saved_steps)
    frozen_step = statistics.median(frozen_steps)
    g = statistics.median(times["graphrun"])
    print()
    print("graphrun's output matches TensorFlow's: %s" % ok)
    print("| ResNet-50 SavedModel | process start to first output, s | graphrun / it |")
    print("| --- | --- | --- |")
    for k, v in times.items():
        print("| %s | %.2f | %.2f |" % (k, statistics.median(v), g / statistics.median(v)))
    print()
    print("| steady-state step | ms |")
    print("| --- | --- |")
    print("| SavedModel signature (graphrun run DIR --steps 30) | %.2f |" % saved_step)
    print("| frozen graph (graphrun run frozen.pb --steps 30) | %.2f |" % frozen_step)
    print("| ratio | %.2f |" % (saved_step / frozen_step))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
