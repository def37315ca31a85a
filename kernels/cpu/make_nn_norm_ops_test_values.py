#!/usr/bin/env python3
"""Prints TensorFlow's values for nn_norm_ops_test.cc (LRN in four settings,
FusedBatchNormV2 inference in NHWC, Softmax and LogSoftmax at ranks 1, 3 and
4), run through tf.raw_ops in float32 on the test's Input() values, as the
test's C++ literals (the float32 results written as doubles).

    /work/tfvenv/bin/python kernels/cpu/make_nn_norm_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_nn_norm_ops_test_values.py --check

The test's NCHW FusedBatchNormV2 case transposes these NHWC values itself.
--check reads the literals nn_norm_ops_test.cc commits and compares them with
TensorFlow's (exit 1 on a mismatch). LRN is compared within the test's own
tolerance (1e-6): with beta 0.5 and 1 the committed values differ by 1 or 2
units in the last place from what TensorFlow 2.21 gives on an AVX-512
machine (there its kernel takes vectorized reciprocal square roots and
reciprocals, whose last bit can depend on the instruction set).
Everything else is compared exactly.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# TensorFlow's defaults (oneDNN on): Softmax's committed values are its
# oneDNN kernel's, to the bit.
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cc_expected import Cases  # noqa: E402

raw = tf.raw_ops


def inputs(dims):
    """The test's Input(): ((i * 7 + 3) % 11) / 4 - 1.25, multiples of 1/4."""
    i = np.arange(int(np.prod(dims)))
    return (((i * 7 + 3) % 11) / np.float32(4.0) - np.float32(1.25)).astype(np.float32).reshape(dims)


LRN_CASES = [(5, 1.0, 1.0, 0.5), (2, 2.0, 0.5, 0.75), (1, 1.0, 0.1, 1.0), (0, 0.5, 2.0, 0.5)]
SOFTMAX_DIMS = [(5,), (2, 3, 4), (2, 1, 2, 3)]


def cc_float(v):
    text = "%.9g" % v
    return (text if "." in text else text + ".0") + "f"


def main():
    c = Cases(os.path.join(HERE, "nn_norm_ops_test.cc"))
    for radius, bias, alpha, beta in LRN_CASES:
        c.case("LRN depth_radius %d bias %g alpha %g beta %g" % (radius, bias, alpha, beta),
               raw.LRN(input=inputs((2, 2, 3, 7)), depth_radius=radius, bias=bias, alpha=alpha,
                       beta=beta),
               "{%d, %s, %s, %s," % (radius, cc_float(bias), cc_float(alpha), cc_float(beta)),
               kind="d", rtol=1e-6, atol=1e-6)

    y, batch_mean, _, _, _ = raw.FusedBatchNormV2(
        x=inputs((2, 3, 2, 4)), scale=np.array([1.0, 0.5, -1.0, 2.0], np.float32),
        offset=np.array([0.1, -0.2, 0.3, 0.0], np.float32),
        mean=np.array([0.2, -0.1, 0.0, 0.5], np.float32),
        variance=np.array([1.0, 0.25, 2.0, 0.5], np.float32), epsilon=0.001, is_training=False)
    c.case("FusedBatchNormV2 NHWC y", y, "const std::vector<double> want =", kind="d")
    c.case("FusedBatchNormV2 batch_mean", batch_mean, "ExpectNear((*out)[1],", kind="d")

    for dims in SOFTMAX_DIMS:
        anchor = "{{%s}," % ", ".join(map(str, dims))
        c.case("Softmax %s" % (dims,), raw.Softmax(logits=inputs(dims)), anchor, kind="d")
        c.case("LogSoftmax %s" % (dims,), raw.LogSoftmax(logits=inputs(dims)), anchor, skip=1,
               kind="d")
    c.finish()


if __name__ == "__main__":
    main()
