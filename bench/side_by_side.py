#!/usr/bin/env python3
"""TensorFlow, ONNX Runtime and graphrun side by side on the same frozen graphs.

Run through bench/tf_side_by_side.sh, which makes the virtual environment
(TensorFlow, numpy, ONNX Runtime, tf2onnx), builds graphrun and calls this
driver with its own arguments:

    bench/tf_side_by_side.sh [--venv DIR] [--only vgg_cnn,resnet50] \\
        [--rounds 3] [--steps 20] [--skip-ort] [--skip-models]

or, with such a venv and a built //tools:graphrun, directly:

    /path/to/venv/bin/python bench/side_by_side.py [same options]

Graphs, exported into a temporary directory on each run:
  vgg_cnn             Keras: 5 conv 3x3 (32, 32, pool, 64, 64, pool, 128,
                      pool) + dense 256 + dense 10, batch 8, 64x64x3
  mlp_1024, mlp_2048  Keras: 1024 -> 1024 -> 1024 -> 1000 and
                      1024 -> 2048 -> 2048 -> 1000 (relu), batch 64
  matmul_256/1024/2048  tf.compat.v1: one MatMul, fed [n, n] x constant [n, n]
  scalar_chain        tf.compat.v1: y fed int32 scalar, 10,000 times
                      y = y + 1 (one shared constant 1)
  fanout              tf.compat.v1: x fed float32 scalar, 1000 x + c_i, AddN
and the Keras models of tests/fixtures/models (MANIFEST, then PENDING) with
their weights filled (models_vs_tensorflow.write_filled). Keras models are
frozen as users freeze them (convert_variables_to_constants_v2).

Each graph, for --rounds rounds, runs in turn on
  TF          tf.compat.v1.Session, default ConfigProto (Grappler on)
  TF off      the same with TensorFlow's graph rewrites off (meta optimizer
              disabled, OptimizerOptions L0): the executor itself
  graphrun    `graphrun run G --feed ... --fetch ... --steps N+1`, its
              "median step"
  ORT         onnxruntime.InferenceSession (CPU provider, intra-op threads =
              cores) on the graph converted by tf2onnx
each timing steps after a warm-up step; the table gives the median over
rounds of each round's median step. For the scalar chain and the fan-out
the notes under the table give microseconds per node, graphrun's also with
--optimize=none (the executor against TensorFlow's with rewrites off), and
the node count of the ONNX model (tf2onnx folds the chain into one Add). graphrun's and ORT's outputs are checked against
TensorFlow's first. A runtime that fails on a graph shows "n/a (why)" and
the run goes on.

Routes to ONNX that differ from a plain tf2onnx.convert.from_graph_def of
the frozen graph: Erfc (Keras' exact gelu) is written as 1 - Erf, which
ONNX has; models with loops, which the fixtures hold lowered to
Enter/Switch/Merge with TensorList ops tf2onnx cannot convert, are frozen
again from Keras (same seeds, same filled weights) with
lower_control_flow=False, and tf2onnx converts the functional While.

GFLOP per step counts the multiply-adds x 2 of Conv2D, DepthwiseConv2dNative,
MatMul, BatchMatMul, Einsum (and their _Fused forms) with the shapes
TensorFlow infers once the feeds' shapes are set on the placeholders; nodes
inside loops count once per execution, as a traced TensorFlow step (rewrites
off) saw them. The machine figure printed beside it is the measured fp32
GEMM ceiling per core times the cores (--gflops-per-core).
"""
import argparse
import logging
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models_vs_tensorflow as mvt  # pylint: disable=g-import-not-at-top,wrong-import-position
import make_model_fixtures as fixtures  # pylint: disable=g-import-not-at-top,wrong-import-position
import fixture_weights  # pylint: disable=g-import-not-at-top,wrong-import-position

tf1 = tf.compat.v1
tf.get_logger().setLevel("ERROR")
CORES = os.cpu_count()
OPSET = 17
RUNTIMES = ("tf", "tf_off", "graphrun", "ort", "graphrun_off")
LABELS = {"tf": "TF", "tf_off": "TF rewrites off", "graphrun": "graphrun", "ort": "ORT",
          "graphrun_off": "graphrun --optimize=none"}
COUNTED = {"MatMul", "_FusedMatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3",
           "Conv2D", "_FusedConv2D", "DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative",
           "Einsum"}


class Failed(Exception):
    """A runtime cannot run a graph; the message goes into its cell."""


class Case:
    """One graph: the frozen GraphDef and what to feed and fetch."""

    def __init__(self, name, gd, feeds, fetches, expected=None, onnx_gd=None, nodes=None):
        self.name = name
        self.gd = gd
        self.feeds = feeds            # tensor name ("x:0") -> array
        self.fetches = fetches        # tensor names
        self.expected = expected      # TensorFlow's outputs, when known beforehand
        self.onnx_gd = onnx_gd        # the GraphDef tf2onnx converts, when not gd
        self.nodes = nodes            # per-node costs are printed for these,
                                      # graphrun's also with its optimizer off
        self.notes = []


# ---------------------------------------------------------------- graphs

def keras_case(name, model, feeds):
    gd, feed_names, fetches = fixtures.freeze(model, feeds)
    return Case(name, gd, dict(zip(feed_names, feeds.values())), fetches)


def vgg_cnn():
    layers = tf.keras.layers
    tf.keras.utils.set_random_seed(15)
    model = tf.keras.Sequential([
        tf.keras.Input((64, 64, 3)),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.Conv2D(128, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(256, activation="relu"),
        layers.Dense(10),
    ])
    images = np.random.default_rng(1).uniform(-1, 1, (8, 64, 64, 3)).astype(np.float32)
    return keras_case("vgg_cnn", model, {"images": images})


def mlp(name, widths, batch=64):
    layers = tf.keras.layers
    tf.keras.utils.set_random_seed(15)
    stack = [tf.keras.Input((widths[0],))]
    stack += [layers.Dense(w, activation="relu") for w in widths[1:-1]]
    stack.append(layers.Dense(widths[-1]))
    x = np.random.default_rng(2).standard_normal((batch, widths[0])).astype(np.float32)
    return keras_case(name, tf.keras.Sequential(stack), {"x": x})


def v1_case(name, build, feeds, nodes=None):
    g = tf1.Graph()
    with g.as_default():
        build()
    return Case(name, g.as_graph_def(), feeds, ["out:0"], nodes=nodes)


def matmul(n):
    rng = np.random.default_rng(n)

    def build():
        a = tf1.placeholder(tf.float32, [n, n], name="a")
        b = tf.constant((rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32))
        tf.matmul(a, b, name="out")
    return v1_case(f"matmul_{n}", build,
                   {"a:0": rng.standard_normal((n, n)).astype(np.float32)})


def scalar_chain(n=10000):
    def build():
        y = tf1.placeholder(tf.int32, [], name="y")
        one = tf.constant(1, tf.int32)
        for _ in range(n):
            y = tf.add(y, one)
        tf.identity(y, name="out")
    return v1_case("scalar_chain", build, {"y:0": np.array(0, np.int32)}, nodes=n)


def fanout(n=1000):
    def build():
        x = tf1.placeholder(tf.float32, [], name="x")
        tf.add_n([tf.add(x, tf.constant(float(i))) for i in range(n)], name="out")
    return v1_case("fanout", build, {"x:0": np.array(0.5, np.float32)}, nodes=n + 1)


SYNTHETIC = {
    "vgg_cnn": vgg_cnn,
    "mlp_1024": lambda: mlp("mlp_1024", [1024, 1024, 1024, 1000]),
    "mlp_2048": lambda: mlp("mlp_2048", [1024, 2048, 2048, 1000]),
    "matmul_256": lambda: matmul(256),
    "matmul_1024": lambda: matmul(1024),
    "matmul_2048": lambda: matmul(2048),
    "scalar_chain": scalar_chain,
    "fanout": fanout,
}


def unlowered_fixture(name):
    """The fixture frozen again from Keras with its loops kept as functional
    While ops (what tf2onnx converts), weights filled as in the fixture."""
    from tensorflow.python.framework import convert_to_constants  # pylint: disable=g-import-not-at-top
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(sum(name.encode()) + 2026)
    model, feeds = fixtures.MODELS[name](np.random.default_rng(sum(name.encode())))
    specs = [tf.TensorSpec((None,) + v.shape[1:], tf.as_dtype(v.dtype), name=k)
             for k, v in feeds.items()]
    f = tf.function(model).get_concrete_function(*specs)
    frozen = convert_to_constants.convert_variables_to_constants_v2(f, lower_control_flow=False)
    gd = frozen.graph.as_graph_def()
    fixture_weights.fill_graph(gd, os.path.join(mvt.MODELS, name + ".weights"))
    return gd


def fixture_case(name, fields, tmp, for_ort=True):
    gd = mvt.write_filled(name, os.path.join(tmp, name + ".pb"))
    fetches = fields["fetches"].split(",")
    expected = [np.load(os.path.join(mvt.MODELS, f"{name}.{mvt.safe(f)}.npy")) for f in fetches]
    case = Case(name, gd, mvt.feeds_of(name, fields), fetches, expected=expected)
    if for_ort and any(n.op == "Enter" for n in gd.node):
        try:
            case.onnx_gd = unlowered_fixture(name)
            case.notes.append("ORT: frozen again with lower_control_flow=False (functional While)")
        except Exception as e:  # pylint: disable=broad-except
            case.notes.append(f"ORT: re-freezing without lowering failed: {reason(e)}")
    return case


# ---------------------------------------------------------------- FLOPs

def rewrites_off():
    from tensorflow.core.protobuf import rewriter_config_pb2  # pylint: disable=g-import-not-at-top
    return tf1.ConfigProto(graph_options=tf1.GraphOptions(
        optimizer_options=tf1.OptimizerOptions(opt_level=tf1.OptimizerOptions.L0),
        rewrite_options=rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True)))


def traced_step(case):
    """One TensorFlow step (rewrites off, feeds' shapes set on the
    placeholders) under FULL_TRACE: the graph, the outputs, how often each
    node ran and the output shapes seen."""
    gd = tf1.GraphDef()
    gd.CopyFrom(case.gd)
    shapes = {name.split(":")[0]: v.shape for name, v in case.feeds.items()}
    for node in gd.node:
        if node.op == "Placeholder" and node.name in shapes:
            node.attr["shape"].shape.CopyFrom(tf.TensorShape(shapes[node.name]).as_proto())
    g = tf1.Graph()
    with g.as_default():
        tf1.import_graph_def(gd, name="")
    metadata = tf1.RunMetadata()
    with tf1.Session(graph=g, config=rewrites_off()) as sess:
        outputs = sess.run(case.fetches, case.feeds, run_metadata=metadata,
                           options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE))
    runs, seen = {}, {}
    for dev in metadata.step_stats.dev_stats:
        for ns in dev.node_stats:
            runs[ns.node_name] = runs.get(ns.node_name, 0) + 1
            for out in ns.output:
                dims = [d.size for d in out.tensor_description.shape.dim]
                seen.setdefault((ns.node_name, out.slot), dims)
    return g, outputs, runs, seen


def step_gflop(g, fetches, runs, seen):
    """GFLOP per step (multiply-adds x 2) and the counted nodes whose shapes
    stayed unknown."""
    def dims(t):
        if t.shape.rank is not None and t.shape.is_fully_defined():
            return t.shape.as_list()
        d = seen.get((t.op.name, t.value_index))
        return d if d and all(x >= 0 for x in d) else None

    def macs(op):
        out = dims(op.outputs[0])
        if out is None:
            return None
        n_out = int(np.prod(out, dtype=np.int64))
        a, b = (dims(op.inputs[0]), dims(op.inputs[1])) if len(op.inputs) > 1 else (None, None)
        if op.type in ("MatMul", "_FusedMatMul"):
            if a is not None:
                return n_out * a[0 if op.get_attr("transpose_a") else 1]
            if b is not None:
                return n_out * b[1 if op.get_attr("transpose_b") else 0]
            return None
        if op.type.startswith("BatchMatMul"):
            if a is not None:
                return n_out * a[-2 if op.get_attr("adj_x") else -1]
            if b is not None:
                return n_out * b[-1 if op.get_attr("adj_y") else -2]
            return None
        if b is None:
            return None
        if op.type in ("Conv2D", "_FusedConv2D"):
            return n_out * b[0] * b[1] * b[2]
        if op.type in ("DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative"):
            return n_out * b[0] * b[1]
        if op.type == "Einsum":
            inputs, output = op.get_attr("equation").decode().replace(" ", "").split("->")
            sizes = {}
            for spec, t in zip(inputs.split(","), op.inputs):
                shape = dims(t)
                if shape is None:
                    return None
                pre, _, post = spec.partition("...")
                for letter, size in zip(pre, shape[:len(pre)]):
                    sizes[letter] = size
                for letter, size in zip(post, shape[len(shape) - len(post):]):
                    sizes[letter] = size
            contracted = set(sizes) - set(output)
            return n_out * int(np.prod([sizes[c] for c in contracted], dtype=np.int64))
        return None

    def executions(op):
        # TensorFlow's oneDNN pass fuses a convolution into the BiasAdd after
        # it, which then runs under the BiasAdd's name.
        if op.name in runs:
            return runs[op.name]
        consumers = [c.name for t in op.outputs for c in t.consumers() if c.name in runs]
        if consumers:
            return max(runs[c] for c in consumers)
        return 1 if op.name in needed else 0

    needed, todo = set(), [g.get_operation_by_name(f.split(":")[0]) for f in fetches]
    while todo:
        op = todo.pop()
        if op.name not in needed:
            needed.add(op.name)
            todo += [t.op for t in op.inputs] + list(op.control_inputs)
    total, unknown = 0, []
    for op in g.get_operations():
        n = executions(op) if op.type in COUNTED else 0
        if n == 0:
            continue
        m = macs(op)
        if m is None:
            unknown.append(op.name)
        else:
            total += 2 * m * n
    return total / 1e9, unknown


# ---------------------------------------------------------------- runtimes

def reason(e):
    if isinstance(e, subprocess.CalledProcessError):
        lines = [l for l in (e.stderr or e.stdout or "").splitlines() if l.strip()]
        text = lines[-1] if lines else f"exit status {e.returncode}"
    else:
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    text = re.sub(r"\s+", " ", text).replace("|", "/")
    return text if len(text) <= 100 else text[:97] + "..."


def erfc_as_erf(gd):
    """A copy of gd with each Erfc(x) written as 1 - Erf(x) (ONNX has Erf
    only); the node keeps its name, so its consumers are unchanged."""
    out = tf1.GraphDef()
    out.CopyFrom(gd)
    if not any(n.op == "Erfc" for n in out.node):
        return out, False
    nodes = list(out.node)
    del out.node[:]
    for node in nodes:
        if node.op != "Erfc":
            out.node.append(node)
            continue
        dtype = node.attr["T"].type
        erf = out.node.add(name=node.name + "/as_erf", op="Erf", input=[node.input[0]])
        erf.attr["T"].type = dtype
        erf.device = node.device
        one = out.node.add(name=node.name + "/one", op="Const")
        one.attr["dtype"].type = dtype
        one.attr["value"].tensor.CopyFrom(
            tf.make_tensor_proto(np.array(1, tf.dtypes.as_dtype(dtype).as_numpy_dtype)))
        sub = out.node.add(name=node.name, op="Sub", input=[one.name, erf.name])
        sub.attr["T"].type = dtype
        sub.device = node.device
    return out, True


def to_onnx(case):
    import tf2onnx  # pylint: disable=g-import-not-at-top
    tf2onnx.logging.set_level(logging.ERROR)
    gd, rewrote = erfc_as_erf(case.onnx_gd if case.onnx_gd is not None else case.gd)
    if rewrote:
        case.notes.append("ORT: Erfc(x) written as 1 - Erf(x) before conversion")
    model, _ = tf2onnx.convert.from_graph_def(
        gd, input_names=list(case.feeds), output_names=case.fetches, opset=OPSET)
    if case.nodes:
        case.notes.append(f"the ONNX model has {len(model.graph.node)} node(s)")
    return model.SerializeToString()


def ort_session(model):
    import onnxruntime as ort  # pylint: disable=g-import-not-at-top
    options = ort.SessionOptions()
    options.intra_op_num_threads = CORES
    sess = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    return sess


def ort_feeds(sess, case):
    return {i.name: case.feeds[i.name] for i in sess.get_inputs()}


def check_ort(model, case, expected):
    sess = ort_session(model)
    check_outputs("ORT", sess.run(case.fetches, ort_feeds(sess, case)), case, expected)


def fetch_file(fetch):
    """The .npy name `graphrun run --out` gives a fetch ("a/b:1" -> "a__b_1.npy")."""
    node, _, index = fetch.partition(":")
    base = node if index in ("", "0") else f"{node}_{index}"
    return base.replace("/", "__").replace(":", "_") + ".npy"


def check_outputs(runtime, got, case, expected):
    """Failed unless each output has TF's shape and is within 1e-3 of TF's
    largest magnitude."""
    for name, g, want in zip(case.fetches, got, expected):
        want = np.asarray(want)
        g = np.asarray(g)
        if g.shape != want.shape:
            raise Failed(f"{runtime} output {name} has shape {g.shape}, TF {want.shape}")
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        err = float(np.max(np.abs(g.astype(np.float64) - want))) if want.size else 0.0
        if not np.isfinite(err) or err > 1e-3 * max(scale, 1e-6) + 1e-6:
            raise Failed(f"{runtime} output {name} differs from TF by {err:.3g} "
                         f"(max |TF| {scale:.3g})")


def check_graphrun(graphrun, path, feed_files, case, expected, tmp):
    """Runs the graph once with `graphrun run --out` and checks its outputs
    against TensorFlow's, as ORT's are."""
    out_dir = os.path.join(tmp, case.name + ".out")
    os.makedirs(out_dir, exist_ok=True)
    cmd = [graphrun, "run", path, "--out", out_dir, "--quiet"]
    for feed, file in feed_files.items():
        cmd += ["--feed", f"{feed}={file}"]
    for fetch in case.fetches:
        cmd += ["--fetch", fetch]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    got = [np.load(os.path.join(out_dir, fetch_file(f))) for f in case.fetches]
    check_outputs("graphrun", got, case, expected)


def time_ort(model, case, steps):
    sess = ort_session(model)
    feeds = ort_feeds(sess, case)
    sess.run(case.fetches, feeds)  # warm up
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        sess.run(case.fetches, feeds)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def write_graph(case, tmp):
    path = os.path.join(tmp, case.name + ".pb")
    with open(path, "wb") as f:
        f.write(case.gd.SerializeToString())
    feed_files = {}
    for name, value in case.feeds.items():
        feed_files[name] = os.path.join(tmp, f"{case.name}.{mvt.safe(name)}.npy")
        np.save(feed_files[name], value)
    return path, feed_files


def measure(case, args, tmp):
    """{runtime: seconds or Failed}, GFLOP per step (or None)."""
    results = {r: [] for r in RUNTIMES}
    failed = {}
    try:
        g, outputs, runs, seen = traced_step(case)
        gflop, unknown = step_gflop(g, case.fetches, runs, seen)
        if unknown:
            case.notes.append(f"GFLOP leaves out {len(unknown)} node(s) of unknown shape, "
                              f"e.g. {unknown[0]}")
    except Exception as e:  # pylint: disable=broad-except
        outputs, gflop = None, None
        case.notes.append(f"GFLOP not counted: {reason(e)}")
    expected = case.expected if case.expected is not None else outputs

    path, feed_files = write_graph(case, tmp)
    try:
        missing = mvt.missing_ops(args.graphrun, path)
        if missing:
            failed["graphrun"] = Failed("missing ops: " + ", ".join(missing))
    except IndexError:
        failed["graphrun"] = Failed("`graphrun inspect` listed no ops")
    except Exception as e:  # pylint: disable=broad-except
        failed["graphrun"] = Failed(f"inspect: {reason(e)}")
    if "graphrun" not in failed and expected is not None:
        try:
            check_graphrun(args.graphrun, path, feed_files, case, expected, tmp)
        except Exception as e:  # pylint: disable=broad-except
            failed["graphrun"] = e if isinstance(e, Failed) else Failed(reason(e))

    if not case.nodes:
        failed["graphrun_off"] = Failed("not measured")
    model = None
    if args.skip_ort:
        failed["ort"] = Failed("--skip-ort")
    else:
        try:
            model = to_onnx(case)
            if expected is not None:
                check_ort(model, case, expected)
        except Exception as e:  # pylint: disable=broad-except
            failed["ort"] = e if isinstance(e, Failed) else Failed(reason(e))

    timers = {
        "tf": lambda: mvt.time_tf(case.gd, case.feeds, case.fetches, args.steps),
        "tf_off": lambda: mvt.time_tf(case.gd, case.feeds, case.fetches, args.steps,
                                      config=rewrites_off()),
        "graphrun": lambda: mvt.graphrun_step(args.graphrun, path, feed_files, case.fetches,
                                              args.steps),
        "ort": lambda: time_ort(model, case, args.steps),
        "graphrun_off": lambda: mvt.graphrun_step(args.graphrun, path, feed_files, case.fetches,
                                                  args.steps, flags=["--optimize=none"]),
    }
    for _ in range(args.rounds):
        for runtime in RUNTIMES:
            if runtime in failed or (runtime == "graphrun_off" and "graphrun" in failed):
                continue
            try:
                results[runtime].append(timers[runtime]())
            except Exception as e:  # pylint: disable=broad-except
                failed[runtime] = Failed(reason(e))
    return {r: failed.get(r) or statistics.median(results[r]) for r in RUNTIMES}, gflop


# ---------------------------------------------------------------- table

def ms(t):
    if isinstance(t, Exception):
        return f"n/a ({t})"
    t *= 1e3
    return f"{t:.2f}" if t >= 1 else f"{t:.3f}"


def ratio(a, b):
    if isinstance(a, Exception) or isinstance(b, Exception):
        return "n/a"
    r = a / b
    return f"{r:.2f}" if r >= 0.1 else f"{r:.2g}"


def row(case, times, gflop):
    gr = times["graphrun"]
    rate = "—"
    if gflop and not isinstance(gr, Exception):
        rate = f"{gflop / gr:.1f}"
    return (f"| {case.name} | {ms(times['tf'])} | {ms(times['tf_off'])} | {ms(times['ort'])} | "
            f"{ms(gr)} | {ratio(gr, times['tf'])} | {ratio(gr, times['ort'])} | {rate} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated graph names")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--skip-ort", action="store_true", help="leave ONNX Runtime out")
    parser.add_argument("--skip-models", action="store_true",
                        help="leave the Keras model fixtures out")
    parser.add_argument("--graphrun", default=os.path.join(mvt.ROOT, "bazel-bin/tools/graphrun"))
    parser.add_argument("--gflops-per-core", type=float, default=190.0,
                        help="the machine's fp32 GEMM ceiling per core "
                             "(shared/reference/machine_measurements.md)")
    args = parser.parse_args()

    models = [] if args.skip_models else mvt.read_models()
    names = list(SYNTHETIC) + [name for name, _ in models]
    only = [n for n in args.only.split(",") if n]
    unknown = [n for n in only if n not in names]
    if unknown:
        parser.error(f"unknown graph(s) {', '.join(unknown)}; graphs: {', '.join(names)}")

    versions = [f"TensorFlow {tf.__version__}", f"numpy {np.__version__}"]
    if not args.skip_ort:
        try:
            import onnxruntime  # pylint: disable=g-import-not-at-top
            import tf2onnx  # pylint: disable=g-import-not-at-top
            versions += [f"ONNX Runtime {onnxruntime.__version__}", f"tf2onnx {tf2onnx.__version__}"]
        except ImportError as e:
            print(f"ONNX Runtime or tf2onnx missing ({e}); running with --skip-ort")
            args.skip_ort = True
    print(f"{CORES} cores; {', '.join(versions)}; median step of {args.steps} steps after a "
          f"warm-up, median of {args.rounds} round(s)")
    print(f"machine: ~{args.gflops_per_core:.0f} GFLOP/s per core fp32 GEMM ceiling, "
          f"~{args.gflops_per_core * CORES:.0f} GFLOP/s on {CORES} cores\n")
    print("| graph | TF ms | TF (rewrites off) ms | ORT ms | graphrun ms | graphrun/TF | "
          "graphrun/ORT | graphrun GFLOP/s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)

    notes = []
    fields_of = dict(models)
    with tempfile.TemporaryDirectory(prefix="side_by_side_") as tmp:
        for name in names:
            if only and name not in only:
                continue
            try:
                if name in SYNTHETIC:
                    case = SYNTHETIC[name]()
                else:
                    case = fixture_case(name, fields_of[name], tmp, for_ort=not args.skip_ort)
            except Exception as e:  # pylint: disable=broad-except
                failure = Failed(f"export: {reason(e)}")
                print(f"| {name} | " + " | ".join([ms(failure)] * 4) + " | n/a | n/a | — |",
                      flush=True)
                continue
            times, gflop = measure(case, args, tmp)
            print(row(case, times, gflop), flush=True)
            if gflop:
                case.notes.insert(0, f"{gflop:.3g} GFLOP per step")
            if case.nodes:
                per = ", ".join(f"{LABELS[r]} {times[r] / case.nodes * 1e6:.3g}"
                                for r in RUNTIMES if not isinstance(times[r], Exception))
                case.notes.append(f"µs per node ({case.nodes} nodes): {per}")
            if case.notes:
                notes.append(f"- {case.name}: " + "; ".join(case.notes))
    if notes:
        print()
        print("\n".join(notes))


if __name__ == "__main__":
    main()
