"""Training step time, graphrun next to TensorFlow, in one run.

Builds TensorFlow v1 training graphs as users export them (the MLP
784-256-256-10 and the small CNN of the training reference, each with ref
variables, a global step and AdamOptimizer; the LSTM and the BERT-style
encoder block of tests/fixtures/training with Adam; batch 64), saves their initial
variables, then alternates rounds: TensorFlow's Session loop
(sess.run(["train", "loss:0"]) on one fed batch) and `graphrun train
--restore` on the same graph, batch and checkpoint, and, where PyTorch is
installed, the same MLP and CNN in PyTorch eager with fused Adam (the
fastest peer measured on these machines; torch.set_num_threads(2)). Prints
the median step time of each over the timed steps after 10 warm-up steps
(graphrun's own median, --warmup_steps 10), per round and overall, and
the ratios.

  ./bazelw build //tools:graphrun
  /work/tfvenv/bin/python bench/train_vs_tensorflow.py [--rounds 3] [--steps 60] \
      [--models mlp,cnn,lstm,encoder]

With PyTorch in another virtualenv, TORCH_PYTHON=/path/to/venv/bin/python
runs the PyTorch peers (and bench/replicas_vs_ddp.py's DDP) with it.
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
import tensorflow as tf

v1 = tf.compat.v1
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPHRUN = os.path.join(ROOT, "bazel-bin", "tools", "graphrun")


def build(model, device_fn=None):
    """device_fn: a device function over the whole graph (as
    replica_device_setter's), or None."""
    g = tf.Graph()
    with g.as_default(), g.device(device_fn):
        v1.set_random_seed(42)
        gs = v1.Variable(0, name="global_step", trainable=False, dtype=tf.int64,
                         use_resource=False)
        var = lambda init, name: v1.Variable(init, name=name, use_resource=False)
        if model == "mlp":
            x = v1.placeholder(tf.float32, [None, 784], name="x")
            h, d = x, [784, 256, 256, 10]
            for i in range(3):
                h = tf.matmul(h, var(v1.truncated_normal([d[i], d[i + 1]], stddev=0.05),
                                     "W%d" % i)) + var(tf.zeros([d[i + 1]]), "b%d" % i)
                if i < 2:
                    h = tf.nn.relu(h)
        else:
            x = v1.placeholder(tf.float32, [None, 28, 28, 1], name="x")
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(
                x, var(v1.random_normal([5, 5, 1, 8], stddev=0.1), "K1"), [1, 1, 1, 1], "SAME"),
                var(tf.zeros([8]), "c1")))
            h = tf.nn.max_pool2d(h, 2, 2, "SAME")
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(
                h, var(v1.truncated_normal([5, 5, 8, 16], stddev=0.1), "K2"), [1, 1, 1, 1],
                "SAME"), var(tf.zeros([16]), "c2")))
            h = tf.reshape(tf.nn.max_pool2d(h, 2, 2, "SAME"), [-1, 784])
            h = tf.matmul(h, var(v1.random_uniform([784, 10], -0.05, 0.05), "W")) + var(
                tf.zeros([10]), "b")
        y = v1.placeholder(tf.float32, [None, 10], name="y")
        tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
            labels=y, logits=tf.identity(h, "logits")), name="loss")
        v1.train.AdamOptimizer(1e-3).minimize(g.get_tensor_by_name("loss:0"), global_step=gs,
                                               name="train")
        v1.global_variables_initializer()
        saver = v1.train.Saver()
    return g, saver


def fixture_build(model):
    """The LSTM (a v1 while loop) and the BERT-style encoder block of
    tests/fixtures/training/make_training_fixtures.py, with Adam."""
    import importlib.util  # pylint: disable=g-import-not-at-top
    path = os.path.join(ROOT, "tests", "fixtures", "training", "make_training_fixtures.py")
    spec = importlib.util.spec_from_file_location("make_training_fixtures", path)
    fixtures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixtures)
    if model == "lstm":
        return fixtures.build("adam", False, lstm=True), fixtures
    return fixtures.build("adam", True, encoder=True), fixtures


def tf_median_ms(g, ckpt, feeds, steps, warmup=10, target=""):
    """Median ms of sess.run(["train", "loss:0"]) in a Session on `target`
    ("": this process), after restoring `ckpt` with the graph's Saver."""
    with v1.Session(target, graph=g) as s:
        s.run("save/restore_all", {"save/Const:0": ckpt})
        times = []
        for i in range(warmup + steps):
            t0 = time.perf_counter()
            s.run(["train", "loss:0"], feeds)
            if i >= warmup:
                times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


# The Python that runs the PyTorch peers: this one, or the one $TORCH_PYTHON
# names (PyTorch's CPU build and TensorFlow need not share a virtualenv).
TORCH_PYTHON = os.environ.get("TORCH_PYTHON", sys.executable)


def torch_median_ms(model, x_path, y_path, steps):
    """PyTorch eager with fused Adam on the same layers and batch
    (bench/train_torch_peer.py, in its own process: PyTorch and TensorFlow
    do not load into one). None when PyTorch is not installed or the model
    has no PyTorch twin."""
    if model not in ("mlp", "cnn"):
        return None
    out = subprocess.run(
        [TORCH_PYTHON, os.path.join(ROOT, "bench", "train_torch_peer.py"), model, x_path,
         y_path, str(steps)], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return float(out.stdout.split()[-1])


def export(g, saver, tmp, model):
    """Writes `g` as tmp/<model>.pb and its initial variables (its `init`
    op run) as the checkpoint tmp/<model>_init.ckpt; returns both paths."""
    graph_path = os.path.join(tmp, model + ".pb")
    with open(graph_path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    ckpt = os.path.join(tmp, model + "_init.ckpt")
    with v1.Session(graph=g) as s:
        s.run(g.get_operation_by_name("init"))
        saver.save(s, ckpt, write_meta_graph=False, write_state=False)
    return graph_path, ckpt


def graphrun_median_ms(graph_path, ckpt, x_path, y_path, steps, *flags, warmup=10):
    """graphrun train's median step (ms) over `steps` timed steps after
    `warmup` steps, as the peers are timed; `flags` go to the command
    (--local_workers=1, --clear_devices, ...)."""
    out = subprocess.run(
        [GRAPHRUN, "train", graph_path, "--restore", ckpt, "--train", "train", "--steps",
         str(warmup + steps), "--warmup_steps", str(warmup), "--feed", "x=" + x_path,
         "--feed", "y=" + y_path, "--fetch", "loss", "--gpus=none"] + list(flags),
        capture_output=True, text=True, check=True).stdout
    return float(re.search(r"median step ([0-9.]+) ms", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--models", default="mlp,cnn,lstm,encoder")
    args = ap.parse_args()
    v1.disable_eager_execution()
    v1.disable_control_flow_v2()  # v1 loops, as the LSTM fixture has
    tmp = tempfile.mkdtemp(prefix="train_bench_")
    rng = np.random.default_rng(0)
    rows = []
    for model in args.models.split(","):
        if model in ("lstm", "encoder"):
            (g, saver), fixtures = fixture_build(model)
        else:
            g, saver = build(model)
        graph_path, ckpt = export(g, saver, tmp, model)
        if model == "lstm":
            x = rng.standard_normal([64, fixtures.TIME, fixtures.IN]).astype(np.float32)
            y = rng.integers(0, fixtures.CLASSES, 64).astype(np.int32)
        elif model == "encoder":
            x = rng.integers(0, fixtures.VOCAB, [64, fixtures.TIME]).astype(np.int32)
            y = rng.integers(0, fixtures.CLASSES, 64).astype(np.int32)
        else:
            shape = [64, 784] if model == "mlp" else [64, 28, 28, 1]
            x = rng.standard_normal(shape).astype(np.float32)
            y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
        np.save(os.path.join(tmp, model + "_x.npy"), x)
        np.save(os.path.join(tmp, model + "_y.npy"), y)
        tf_ms, gr_ms, pt_ms = [], [], []
        for r in range(args.rounds):
            gr_ms.append(graphrun_median_ms(graph_path, ckpt, os.path.join(tmp, model + "_x.npy"),
                                            os.path.join(tmp, model + "_y.npy"), args.steps))
            tf_ms.append(tf_median_ms(g, ckpt, {"x:0": x, "y:0": y}, args.steps))
            pt = torch_median_ms(model, os.path.join(tmp, model + "_x.npy"),
                                 os.path.join(tmp, model + "_y.npy"), args.steps)
            if pt is not None:
                pt_ms.append(pt)
            print("%s round %d: TensorFlow %.3f ms, graphrun %.3f ms%s" %
                  (model, r + 1, tf_ms[-1], gr_ms[-1],
                   ", PyTorch %.3f ms" % pt if pt is not None else ""), flush=True)
        rows.append((model, statistics.median(tf_ms), statistics.median(gr_ms),
                     statistics.median(pt_ms) if pt_ms else None))
    print()
    print("| model (Adam, batch 64) | TensorFlow ms/step | PyTorch eager, fused Adam ms/step "
          "| graphrun ms/step | graphrun / TF | graphrun / PyTorch |")
    print("| --- | --- | --- | --- | --- | --- |")
    names = {"mlp": "MLP 784-256-256-10", "cnn": "small CNN",
             "lstm": "LSTM, v1 while loop (5 steps, 16 units)",
             "encoder": "BERT-style encoder block (6 tokens, 16 wide)"}
    for model, t, gr, pt in rows:
        print("| %s | %.3f | %s | %.3f | %.2f | %s |" %
              (names[model], t, "%.3f" % pt if pt else "-", gr, gr / t,
               "%.2f" % (gr / pt) if pt else "-"))


if __name__ == "__main__":
    main()
