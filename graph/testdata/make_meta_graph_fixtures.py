#!/usr/bin/env python3
"""Writes tiny_train.meta (binary) and tiny_train.meta.txt (text) beside this file.

A tf.compat.v1 training graph small enough to read by eye: x[None,3] -> dense
(2 units) -> mean squared error "loss" -> AdamOptimizer.minimize(name="train"),
with global_variables_initializer ("init") and a Saver. The MetaGraphDef is
what Saver.export_meta_graph writes, as TensorFlow 2.21 writes it; the tests
in graph/meta_graph_io_test.cc check names that this script fixes.

Run with the TensorFlow virtual environment:
  /work/tfvenv/bin/python graph/testdata/make_meta_graph_fixtures.py
"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1


def main():
  out_dir = os.path.dirname(os.path.abspath(__file__))
  graph = tf.Graph()
  with graph.as_default():
    v1.set_random_seed(7)
    x = v1.placeholder(tf.float32, [None, 3], name="x")
    y = v1.placeholder(tf.float32, [None, 2], name="y")
    # Resource variables (TF2's default): VarHandleOp, is_resource = true.
    w = v1.get_variable("dense/kernel", [3, 2], use_resource=True,
                        initializer=v1.glorot_uniform_initializer(seed=1))
    b = v1.get_variable("dense/bias", [2], use_resource=True,
                        initializer=v1.zeros_initializer())
    pred = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.square(pred - y), name="loss")
    v1.train.AdamOptimizer(0.01).minimize(loss, name="train")
    v1.global_variables_initializer()  # named "init"
    saver = v1.train.Saver()
    saver.export_meta_graph(os.path.join(out_dir, "tiny_train.meta"))
    saver.export_meta_graph(os.path.join(out_dir, "tiny_train.meta.txt"),
                            as_text=True)


if __name__ == "__main__":
  main()
