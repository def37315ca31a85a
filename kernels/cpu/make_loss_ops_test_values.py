#!/usr/bin/env python3
"""Prints TensorFlow's values for loss_ops_test.cc's MatchesTensorFlow tests
(L2Loss, SoftmaxCrossEntropyWithLogits with broadcast labels,
SparseSoftmaxCrossEntropyWithLogits), run through tf.raw_ops in float32 on
the test's Logits() and Labels() inputs, as the test's C++ literals (the
float32 results written as doubles).

    /work/tfvenv/bin/python kernels/cpu/make_loss_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_loss_ops_test_values.py --check

--check reads the literals loss_ops_test.cc commits and compares them with
TensorFlow's, exactly (exit 1 on a mismatch).
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cc_expected import Cases  # noqa: E402

raw = tf.raw_ops


def logits(dims):
    """The test's Logits(): ((i * 7 + 3) % 11) / 4 - 1.25, multiples of 1/4."""
    i = np.arange(int(np.prod(dims)))
    return (((i * 7 + 3) % 11) / np.float32(4.0) - np.float32(1.25)).astype(np.float32).reshape(dims)


def labels(dims):
    """The test's Labels(): ((i * 5 + 1) % 13) / 13 in float."""
    i = np.arange(int(np.prod(dims)))
    return (((i * 5 + 1) % 13).astype(np.float32) / np.float32(13.0)).reshape(dims)


XENT_CASES = [((3, 4), (3, 4)), ((3, 4), (1, 4)), ((1, 4), (3, 4)), ((3, 4), (4,))]


def main():
    c = Cases(os.path.join(HERE, "loss_ops_test.cc"))
    c.case("L2Loss float", raw.L2Loss(t=logits((3, 5))), "RunOp(\"L2Loss\", {}, {Logits({3, 5})})",
           kind="d")
    c.case("L2Loss half", raw.L2Loss(t=logits((3, 5)).astype(np.float16)),
           "{Cast<half>(Logits({3, 5}))}", kind="d")
    for features, label_dims in XENT_CASES:
        loss, backprop = raw.SoftmaxCrossEntropyWithLogits(features=logits(features),
                                                           labels=labels(label_dims))
        anchor = "{{%s}, {%s}," % (", ".join(map(str, features)), ", ".join(map(str, label_dims)))
        label = "SoftmaxCrossEntropyWithLogits features %s labels %s" % (features, label_dims)
        c.case(label + " loss", loss, anchor, kind="d")
        c.case(label + " backprop", backprop, anchor, skip=1, kind="d")
    loss, backprop = raw.SparseSoftmaxCrossEntropyWithLogits(
        features=logits((3, 4)), labels=np.array([2, 0, 3], np.int64))
    c.case("SparseSoftmaxCrossEntropyWithLogits loss", loss,
           "const std::vector<double> loss =", kind="d")
    c.case("SparseSoftmaxCrossEntropyWithLogits backprop", backprop,
           "const std::vector<double> backprop =", kind="d")
    c.finish()


if __name__ == "__main__":
    main()
