#!/usr/bin/env python3
"""Prints TensorFlow's values for depthwise_conv_op_test.cc's Cases():
DepthwiseConv2dNative (strides, dilations, SAME / VALID / EXPLICIT padding,
channel multipliers) run through tf.raw_ops in float32 NHWC on the test's
inputs (FirstTestInput and SecondTestInput of
kernels/testing/kernel_test_util.cc), as the test's C++ literals (the
float32 results written as doubles).

    /work/tfvenv/bin/python kernels/cpu/make_depthwise_conv_op_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_depthwise_conv_op_test_values.py --check

TensorFlow's defaults (oneDNN on): its Eigen depthwise kernel refuses
dilations and unequal strides. The test derives its NCHW, double and 16-bit
expectations from these values. --check reads the literals
depthwise_conv_op_test.cc commits and compares them with TensorFlow's,
exactly (exit 1 on a mismatch).
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cc_expected import Cases  # noqa: E402
from make_conv_nd_ops_test_values import brace, first_test_input, second_test_input  # noqa: E402

# input, filter, strides, dilations, padding, explicit paddings, out
CASES = [
    ((1, 4, 4, 2), (3, 3, 2, 1), (1, 1), (1, 1), "VALID", (), (1, 2, 2, 2)),
    ((2, 5, 5, 3), (3, 3, 3, 2), (2, 2), (1, 1), "SAME", (), (2, 3, 3, 6)),
    ((1, 6, 6, 2), (3, 3, 2, 1), (1, 1), (2, 2), "SAME", (), (1, 6, 6, 2)),
    ((1, 5, 4, 2), (2, 3, 2, 2), (1, 2), (1, 1), "EXPLICIT", (0, 0, 1, 2, 0, 1, 0, 0), (1, 7, 2, 4)),
    ((1, 7, 7, 3), (3, 2, 3, 1), (2, 1), (2, 3), "VALID", (), (1, 2, 4, 3)),
]


def main():
    c = Cases(os.path.join(HERE, "depthwise_conv_op_test.cc"))
    for inp, filt, strides, dilations, padding, pads, out in CASES:
        attrs = {"explicit_paddings": list(pads)} if pads else {}
        y = tf.raw_ops.DepthwiseConv2dNative(
            input=first_test_input(inp), filter=second_test_input(filt),
            strides=[1, strides[0], strides[1], 1], dilations=[1, dilations[0], dilations[1], 1],
            padding=padding, **attrs)
        assert tuple(y.shape) == out, (y.shape, out)
        anchor = "{%s, %s, %s, %s, \"%s\", %s, %s," % (
            brace(inp), brace(filt), brace(strides), brace(dilations), padding, brace(pads),
            brace(out))
        c.case("DepthwiseConv2dNative input %s filter %s strides %s dilations %s %s" %
               (inp, filt, strides, dilations, padding), y, anchor, kind="d")
    c.finish()


if __name__ == "__main__":
    main()
