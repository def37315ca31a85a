"""Variable bytes per ps task: TensorFlow's round-robin pins next to
graphrun's --ps_placement=auto, for the MLP 784-256-256-10 and the small
CNN of bench/train_vs_tensorflow.py and a ResNet-50-sized variable set
(the 320 weights of keras.applications.ResNet50, by name and shape in
Keras' creation order, as v1 variables with a momentum slot each, so that
each group is a variable and its slot), over 2, 4 and 8 ps tasks.

Each graph is built under replica_device_setter(ps_tasks=P); graphrun
reports the bytes per task under the graph's pins (--ps_placement=pinned)
and under its own placement (auto: a group over half a ps task's even
share split into parts of at least 256 KiB, the default, or of at least
16 KiB) with --log_device_placement, starting the tasks on loopback and
running no step.

  ./bazelw build //tools:graphrun
  /work/tfvenv/bin/python bench/ps_placement_bytes.py
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import tensorflow as tf

import train_vs_tensorflow as bench  # bench/, beside this script

GRAPHRUN = bench.GRAPHRUN
v1 = tf.compat.v1


def resnet50_graph(shapes, ps_tasks):
    g = tf.Graph()
    setter = v1.train.replica_device_setter(ps_tasks=ps_tasks, worker_device="/job:worker/task:0")
    with g.as_default(), g.device(setter):
        variables = [v1.get_variable(re.sub(r"[^A-Za-z0-9_./-]", "_", name), shape,
                                     initializer=v1.zeros_initializer(), use_resource=False)
                     for name, shape in shapes]
        loss = tf.add_n([tf.reduce_sum(tf.square(v)) for v in variables], name="loss")
        v1.train.MomentumOptimizer(0.1, 0.9).minimize(loss, name="train")
    return g


def report(graph_path, ps_tasks, placement, *flags):
    out = subprocess.run(
        [GRAPHRUN, "train", graph_path, "--train", "train", "--steps", "0",
         "--local_workers=1", "--local_ps=%d" % ps_tasks, "--ps_placement=" + placement,
         "--log_device_placement"] + list(flags), capture_output=True, text=True)
    text = out.stdout + out.stderr
    m = re.search(r"ps placement: variable bytes per ps task: (.*) \(max/mean ([0-9.]+)\)", text)
    if m is None:
        raise RuntimeError("no ps placement report:\n" + text[-2000:])
    per_task = [int(b) for b in re.findall(r"task \d+: (\d+)", m.group(1))]
    return per_task, float(m.group(2))


def main():
    v1.disable_eager_execution()
    # ResNet-50's weights come from Keras in eager mode, in its own process.
    code = ("import keras, json; m = keras.applications.ResNet50(weights=None); "
            "print(json.dumps([(w.path, list(w.shape)) for w in m.weights]))")
    shapes = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                       text=True, check=True).stdout.splitlines()[-1])
    tmp = tempfile.mkdtemp(prefix="ps_bytes_")
    print("| model | ps tasks | round-robin bytes per task (max/mean) | graphrun auto (max/mean) "
          "| auto, parts of 16 KiB or more (max/mean) |")
    print("| --- | --- | --- | --- | --- |")
    for model in ("mlp", "cnn", "resnet50"):
        for p in (2, 4, 8):
            if model == "resnet50":
                g = resnet50_graph(shapes, p)
            else:
                setter = v1.train.replica_device_setter(ps_tasks=p,
                                                        worker_device="/job:worker/task:0")
                g, _ = bench.build(model, device_fn=setter)
            path = os.path.join(tmp, "%s_%d.pb" % (model, p))
            with open(path, "wb") as f:
                f.write(g.as_graph_def().SerializeToString())
            rr, rr_ratio = report(path, p, "pinned")
            auto, auto_ratio = report(path, p, "auto")
            small, small_ratio = report(path, p, "auto", "--ps_min_part_bytes=16384")
            mb = lambda bs: " / ".join("%.2f MB" % (b / 1e6) for b in bs)
            print("| %s | %d | %s (%.2f) | %s (%.2f) | %s (%.2f) |" % (
                model, p, mb(rr), rr_ratio, mb(auto), auto_ratio, mb(small), small_ratio),
                flush=True)


if __name__ == "__main__":
    main()
