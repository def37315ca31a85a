"""Checkpoint save and restore of 1 GiB of variables: graphrun's checkpoint
library next to TensorFlow's Saver and to a plain file write and read, in
one run.

graphrun: bench/checkpoint_benchmark (16 float tensors, 1 GiB in all, to a
V2 checkpoint written beside and renamed, fsynced; read back with every
CRC32C checked), 7 repetitions in random order, medians. TensorFlow: tf.compat.v1 Saver
save and restore of 16 float variables of the same shapes (V2 format),
median of 7, and the same save with its files fsynced after it (graphrun's
saves are synced, the Saver's are not). Plain: the same bytes with
write(2) + fsync to a new file renamed over the last (as a checkpoint is),
and read(2) into host-allocator memory. Reads are timed from the page
cache and from the disk (the files' pages dropped first).

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
    out = subprocess.run([BENCH, "--benchmark_repetitions=7", "--benchmark_format=json",
                          "--benchmark_enable_random_interleaving=true"],
                         capture_output=True, text=True, check=True,
                         env=dict(os.environ, TMPDIR=tmp)).stdout
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            # "BM_PlainRead/1024/1/real_time" -> "BM_PlainRead/1" (from disk)
            parts = [p for p in b["run_name"].split("/") if p != "real_time"]
            key = parts[0] + ("/" + parts[2] if len(parts) > 2 else "")
            rates[key] = b["bytes_per_second"] / 1e9
    return rates


def tensorflow_rates(tmp, reps=7):
    tf.compat.v1.disable_eager_execution()
    g = tf.Graph()
    per = GIB // TENSORS // 4
    with g.as_default():
        vs = [tf.compat.v1.Variable(tf.zeros([per]), name="layer_%d/kernel" % i)
              for i in range(TENSORS)]
        saver = tf.compat.v1.train.Saver(vs)
        init = tf.compat.v1.global_variables_initializer()
    save_s, synced_s, restore_s = [], [], []
    with tf.compat.v1.Session(graph=g) as s:
        s.run(init)
        for r in range(reps):
            prefix = os.path.join(tmp, "tf_ckpt_%d" % r)
            t0 = time.perf_counter()
            saver.save(s, prefix, write_meta_graph=False, write_state=False)
            save_s.append(time.perf_counter() - t0)
            # The Saver does not sync; graphrun's saves do. The same save
            # made durable: its files fsynced right after.
            for f in os.listdir(tmp):
                if f.startswith("tf_ckpt_%d." % r):
                    fd = os.open(os.path.join(tmp, f), os.O_RDONLY)
                    os.fsync(fd)
                    os.close(fd)
            synced_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            saver.restore(s, prefix)
            restore_s.append(time.perf_counter() - t0)
            for f in os.listdir(tmp):
                if f.startswith("tf_ckpt_%d." % r):
                    os.remove(os.path.join(tmp, f))
    rate = lambda times: GIB / statistics.median(times) / 1e9
    return rate(save_s), rate(synced_s), rate(restore_s)


def main():
    tmp = tempfile.mkdtemp(prefix="ckpt_bench_")
    gr = graphrun_rates(tmp)
    tf_save, tf_synced, tf_restore = tensorflow_rates(tmp)
    print("| 1 GiB, 16 float tensors | graphrun GB/s | TensorFlow Saver GB/s "
          "| TensorFlow Saver + fsync GB/s | plain file GB/s "
          "| graphrun / TF | graphrun / (TF + fsync) | graphrun / plain |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    save = gr["BM_BundleSave"]
    print("| save (fsynced) | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
        save, tf_save, tf_synced, gr["BM_PlainWrite"], save / tf_save, save / tf_synced,
        save / gr["BM_PlainWrite"]))
    # TensorFlow's restore reads what its save just wrote, from the page
    # cache; graphrun's is timed both from the cache and from the disk.
    restore = gr["BM_BundleRestore/0"]
    print("| restore (page cache) | %.2f | %.2f | | %.2f | %.2f | | %.2f |" % (
        restore, tf_restore, gr["BM_PlainRead/0"], restore / tf_restore,
        restore / gr["BM_PlainRead/0"]))
    cold = gr["BM_BundleRestore/1"]
    print("| restore (disk) | %.2f | | | %.2f | | | %.2f |" % (
        cold, gr["BM_PlainRead/1"], cold / gr["BM_PlainRead/1"]))


if __name__ == "__main__":
    main()
