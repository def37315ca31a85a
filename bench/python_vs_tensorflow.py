"""graphrun's Python API next to TensorFlow's and ONNX Runtime's, one run.

1. The Python-side cost of one step on a trivial graph (y = x + 1, x a
   float32 [1, 4] feed), in microseconds per call: graphrun.Session.run,
   tf.compat.v1.Session.run and onnxruntime.InferenceSession.run, on one
   thread each, CALLS calls per round, ROUNDS rounds alternating; the median
   of the rounds and the ratios.
2. A ResNet-50 step (frozen Keras application, batch 1) from Python
   (graphrun.Session.run, median of STEPS steps) next to the CLI's median
   step (`graphrun run --steps STEPS`), alternating STEP_ROUNDS times.

Needs graphrun importable (`pip install bazel-bin/python/graphrun-*.whl` in
the same environment as tensorflow and onnxruntime) and the CLI built:

  ./bazelw build //tools:graphrun //python:wheel
  /work/tfvenv/bin/pip install --force-reinstall --no-deps bazel-bin/python/graphrun-0.1.0-cp311-cp311-linux_x86_64.whl
  /work/tfvenv/bin/python bench/python_vs_tensorflow.py [--rounds 7] [--calls 3000]
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


def trivial_graph():
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [1, 4], name="x")
        tf.identity(x + 1.0, name="y")
    return g


def onnx_trivial():
    import onnx  # pylint: disable=import-outside-toplevel
    from onnx import TensorProto, helper  # pylint: disable=import-outside-toplevel
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    node = helper.make_node("Add", ["x", "one"], ["y"])
    graph = helper.make_graph([node], "trivial",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                              [one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def per_call_us(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def overhead(rounds, calls):
    import graphrun  # pylint: disable=import-outside-toplevel
    import onnxruntime as ort  # pylint: disable=import-outside-toplevel
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    g = trivial_graph()
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    want = x + 1

    gr = graphrun.Session(g.as_graph_def(), inter_op_threads=1, intra_op_threads=1)
    config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=1,
                                      intra_op_parallelism_threads=1)
    tfs = tf.compat.v1.Session(graph=g, config=config)
    opts = ort.SessionOptions()
    opts.inter_op_num_threads = 1
    opts.intra_op_num_threads = 1
    orts = ort.InferenceSession(onnx_trivial(), opts, providers=["CPUExecutionProvider"])
    runs = {
        "graphrun": lambda: gr.run("y:0", {"x:0": x}),
        "tensorflow": lambda: tfs.run("y:0", {"x:0": x}),
        "onnxruntime": lambda: orts.run(["y"], {"x": x})[0],
    }
    for name, fn in runs.items():
        np.testing.assert_array_equal(fn(), want, err_msg=name)
        per_call_us(fn, calls // 5)  # warm up
    times = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            times[name].append(per_call_us(fn, calls))
    return {name: statistics.median(t) for name, t in times.items()}


def export_resnet(tmp):
    import keras  # pylint: disable=import-outside-toplevel
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from tensorflow.python.framework import convert_to_constants  # pylint: disable=import-outside-toplevel
    keras.utils.set_random_seed(0)
    model = keras.applications.ResNet50(weights=None, input_shape=(224, 224, 3))
    fn = tf.function(lambda x: model(x, training=False)).get_concrete_function(
        tf.TensorSpec([1, 224, 224, 3], tf.float32, name="x"))
    frozen = convert_to_constants.convert_variables_to_constants_v2(fn)
    path = os.path.join(tmp, "resnet50_frozen.pb")
    with open(path, "wb") as f:
        f.write(frozen.graph.as_graph_def().SerializeToString())
    x = np.random.default_rng(0).standard_normal((1, 224, 224, 3)).astype(np.float32)
    np.save(os.path.join(tmp, "x.npy"), x)
    inp = frozen.inputs[0].name
    out = frozen.outputs[0].name
    return path, inp, out, x


def resnet(tmp, rounds, steps):
    import graphrun  # pylint: disable=import-outside-toplevel
    path, inp, out, x = export_resnet(tmp)
    sess = graphrun.Session(path)
    py_steps, cli_steps = [], []
    for _ in range(rounds):
        sess.run(out, {inp: x})
        t = []
        for _ in range(steps):
            t0 = time.perf_counter()
            sess.run(out, {inp: x})
            t.append((time.perf_counter() - t0) * 1e3)
        py_steps.append(statistics.median(t))
        text = subprocess.run([GRAPHRUN, "run", path, "--feed",
                               "%s=%s" % (inp.split(":")[0], os.path.join(tmp, "x.npy")),
                               "--fetch", out, "--steps", str(steps + 1)],
                              check=True, capture_output=True, text=True).stdout
        cli_steps.append(float(re.search(r"median step ([0-9.]+) ms", text).group(1)))
    return statistics.median(py_steps), statistics.median(cli_steps), py_steps, cli_steps


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--calls", type=int, default=3000)
    p.add_argument("--step_rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--skip_resnet", action="store_true")
    a = p.parse_args()
    med = overhead(a.rounds, a.calls)
    print("trivial graph (y = x + 1, [1,4] float32), microseconds per run() call, "
          "median of %d rounds of %d calls:" % (a.rounds, a.calls))
    for name in ("graphrun", "tensorflow", "onnxruntime"):
        print("  %-12s %8.2f us" % (name, med[name]))
    print("  graphrun / tensorflow  = %.3f  (goal <= 0.2)" % (med["graphrun"] / med["tensorflow"]))
    print("  graphrun / onnxruntime = %.3f  (goal <= 1.0)" % (med["graphrun"] / med["onnxruntime"]))
    if a.skip_resnet:
        return
    with tempfile.TemporaryDirectory() as tmp:
        py, cli, py_all, cli_all = resnet(tmp, a.step_rounds, a.steps)
    print("ResNet-50 batch 1, median step (ms), median of %d rounds:" % a.step_rounds)
    print("  from Python %.2f  %s" % (py, ["%.2f" % v for v in py_all]))
    print("  CLI         %.2f  %s" % (cli, ["%.2f" % v for v in cli_all]))
    print("  Python / CLI = %.3f" % (py / cli))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
