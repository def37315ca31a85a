"""Checkpoint save and restore of 1 GiB of variables: graphrun's checkpoint
library next to TensorFlow's Saver and to a plain file write and read, in
one run.

graphrun: bench/checkpoint_benchmark (16 float tensors, 1 GiB in all, to a
V2 checkpoint written beside and renamed, fsynced; read back with every
CRC32C checked), 5 repetitions, medians. TensorFlow: tf.compat.v1 Saver
save and restore of 16 float variables of the same shapes (V2 format),
median of 5. Plain: the same bytes with write(2) + fsync, and read(2).

  ./bazelw build //bench:checkpoint_benchmark
  /work/tfvenv/bin/python bench/checkpoint_vs_tensorflow.py
"""
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bazel-bin", "bench", "checkpoint_benchmark")
GIB = 1 << 30
TENSORS = 16


def graphrun_rates(tmp):
    out = subprocess.run([BENCH, "--benchmark_repetitions=5", "--benchmark_format=json"],
                         capture_output=True, text=True, check=True,
                         env=dict(os.environ, TMPDIR=tmp)).stdout
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            rates[b["run_name"].split("/")[0]] = b["bytes_per_second"] / 1e9
    return rates


def tensorflow_rates(tmp, reps=5):
    tf.compat.v1.disable_eager_execution()
    g = tf.Graph()
    per = GIB // TENSORS // 4
    with g.as_default():
        vs = [tf.compat.v1.Variable(tf.zeros([per]), name="layer_%d/kernel" % i)
              for i in range(TENSORS)]
        saver = tf.compat.v1.train.Saver(vs)
        init = tf.compat.v1.global_variables_initializer()
    save_s, restore_s = [], []
    with tf.compat.v1.Session(graph=g) as s:
        s.run(init)
        for r in range(reps):
            prefix = os.path.join(tmp, "tf_ckpt_%d" % r)
            t0 = time.perf_counter()
            saver.save(s, prefix, write_meta_graph=False, write_state=False)
            save_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            saver.restore(s, prefix)
            restore_s.append(time.perf_counter() - t0)
            for f in os.listdir(tmp):
                if f.startswith("tf_ckpt_%d." % r):
                    os.remove(os.path.join(tmp, f))
    return GIB / statistics.median(save_s) / 1e9, GIB / statistics.median(restore_s) / 1e9


def main():
    tmp = tempfile.mkdtemp(prefix="ckpt_bench_")
    gr = graphrun_rates(tmp)
    tf_save, tf_restore = tensorflow_rates(tmp)
    print("| 1 GiB, 16 float tensors | graphrun GB/s | TensorFlow Saver GB/s | plain file GB/s "
          "| graphrun / TF | graphrun / plain |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("| save | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
        gr["BM_BundleSave"], tf_save, gr["BM_PlainWrite"], gr["BM_BundleSave"] / tf_save,
        gr["BM_BundleSave"] / gr["BM_PlainWrite"]))
    print("| restore | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
        gr["BM_BundleRestore"], tf_restore, gr["BM_PlainRead"],
        gr["BM_BundleRestore"] / tf_restore, gr["BM_BundleRestore"] / gr["BM_PlainRead"]))


if __name__ == "__main__":
    main()
