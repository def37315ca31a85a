#!/usr/bin/env python3
"""Writes the example MLP's input and TensorFlow's output for it.

examples/mlp.pbtxt is made by make_mlp.py (standard library only). This
script runs that graph in TensorFlow and writes
  mlp_x.npy               the input: two hand-picked rows of 4 features
  mlp_probs_expected.npy  TensorFlow's `probs` for it (float32, [2,3])
which `graphrun run` is checked against (tests/cli_test.sh,
tests/placement_cli_test.sh). Needs TensorFlow and NumPy; CI does not: the
files are committed.

    python3 examples/make_mlp.py        # only if the graph should change
    python3 examples/make_examples.py
"""
import os

import numpy as np
import tensorflow as tf
from google.protobuf import text_format

HERE = os.path.dirname(os.path.abspath(__file__))
tf1 = tf.compat.v1


def main():
    graph_def = tf1.GraphDef()
    with open(os.path.join(HERE, "mlp.pbtxt")) as f:
        text_format.Parse(f.read(), graph_def)
    x = np.array([[0.1, 0.2, 0.3, 0.4], [-1.0, 0.5, 2.0, -0.3]], dtype=np.float32)
    graph = tf1.Graph()
    with graph.as_default():
        tf1.import_graph_def(graph_def, name="")
    with tf1.Session(graph=graph) as sess:
        probs = sess.run("probs:0", {"x:0": x})
    assert probs.dtype == np.float32 and probs.shape == (2, 3), (probs.dtype, probs.shape)
    np.save(os.path.join(HERE, "mlp_x.npy"), x)
    np.save(os.path.join(HERE, "mlp_probs_expected.npy"), probs)
    print(f"TensorFlow {tf.__version__}: probs =\n{probs}")


if __name__ == "__main__":
    main()
