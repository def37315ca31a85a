#!/usr/bin/env python3
"""Prints TensorFlow's values for conv_nd_ops_test.cc's MatchesTensorFlow
tests: Conv3D, Conv2DBackpropInput, MaxPool3D and AvgPool3D, and the dilated,
explicitly padded Conv2D, run through tf.raw_ops in float32 (NDHWC / NHWC)
on the test's inputs (FirstTestInput and SecondTestInput of
kernels/testing/kernel_test_util.cc), as the test's C++ literals (the
float32 results written as doubles).

    /work/tfvenv/bin/python kernels/cpu/make_conv_nd_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_conv_nd_ops_test_values.py --check

TensorFlow's defaults (oneDNN on): its Eigen kernels refuse the dilated
cases. The test derives its channels-first, double and 16-bit expectations
from these channels-last values. --check reads the literals conv_nd_ops_test.cc
commits and compares them with TensorFlow's, exactly (exit 1 on a mismatch).
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

raw = tf.raw_ops


def first_test_input(dims):
    """FirstTestInput: ((i * 7 + 3) % 11) / 4 - 1.25."""
    i = np.arange(int(np.prod(dims)))
    return (((i * 7 + 3) % 11) / 4.0 - 1.25).astype(np.float32).reshape(dims)


def second_test_input(dims):
    """SecondTestInput: ((i * 5 + 1) % 13) / 4 - 1.5."""
    i = np.arange(int(np.prod(dims)))
    return (((i * 5 + 1) % 13) / 4.0 - 1.5).astype(np.float32).reshape(dims)


def window(spatial):
    return [1] + list(spatial) + [1]


def brace(v):
    return "{" + ", ".join(map(str, v)) + "}"


# input, filter, strides, dilations, padding, explicit paddings, out
CONV3D_CASES = [
    ((1, 4, 4, 3, 2), (2, 2, 2, 2, 3), (1, 1, 1), (1, 1, 1), "VALID", (), (1, 3, 3, 2, 3)),
    ((2, 5, 4, 4, 2), (3, 2, 3, 2, 2), (2, 1, 2), (1, 1, 1), "SAME", (), (2, 3, 4, 2, 2)),
    ((1, 5, 5, 5, 1), (2, 2, 2, 1, 2), (1, 1, 1), (2, 1, 2), "VALID", (), (1, 3, 4, 3, 2)),
    ((1, 3, 3, 3, 4), (1, 1, 1, 4, 3), (1, 1, 1), (1, 1, 1), "VALID", (), (1, 3, 3, 3, 3)),
]
# input, filter, out_backprop, strides, dilations, padding, explicit paddings
BACKPROP_CASES = [
    ((1, 5, 5, 2), (3, 3, 2, 3), (1, 3, 3, 3), (1, 1), (1, 1), "VALID", ()),
    ((2, 5, 6, 2), (3, 3, 2, 3), (2, 3, 3, 3), (2, 2), (1, 1), "SAME", ()),
    ((1, 8, 8, 2), (3, 3, 2, 1), (1, 4, 4, 1), (2, 2), (1, 1), "SAME", ()),
    ((1, 6, 5, 2), (3, 2, 2, 2), (1, 4, 6, 2), (2, 1), (1, 1), "EXPLICIT", (0, 0, 2, 1, 1, 1, 0, 0)),
    ((1, 7, 7, 2), (3, 3, 2, 2), (1, 3, 3, 2), (1, 1), (2, 2), "VALID", ()),
    ((1, 3, 3, 4), (1, 1, 4, 3), (1, 3, 3, 3), (1, 1), (1, 1), "VALID", ()),
]
# op, ksize, strides, padding, out
POOL3D_CASES = [
    (op, k, s, p, out)
    for op in ("MaxPool3D", "AvgPool3D")
    for k, s, p, out in [((2, 2, 2), (2, 2, 2), "VALID", (2, 2, 2, 1, 2)),
                         ((2, 2, 2), (2, 2, 2), "SAME", (2, 2, 3, 2, 2)),
                         ((3, 3, 3), (1, 1, 1), "SAME", (2, 4, 5, 3, 2)),
                         ((1, 3, 2), (2, 1, 1), "VALID", (2, 2, 3, 2, 2))]
]
POOL3D_INPUT = (2, 4, 5, 3, 2)


def main():
    c = Cases(os.path.join(HERE, "conv_nd_ops_test.cc"))
    for inp, filt, strides, dilations, padding, pads, out in CONV3D_CASES:
        y = raw.Conv3D(input=first_test_input(inp), filter=second_test_input(filt),
                       strides=window(strides), dilations=window(dilations), padding=padding)
        assert tuple(y.shape) == out, (y.shape, out)
        anchor = "{%s, %s, %s, %s, \"%s\", %s, %s," % (
            brace(inp), brace(filt), brace(strides), brace(dilations), padding, brace(pads),
            brace(out))
        c.case("Conv3D input %s filter %s strides %s dilations %s %s" %
               (inp, filt, strides, dilations, padding), y, anchor, kind="d")

    for inp, filt, grad, strides, dilations, padding, pads in BACKPROP_CASES:
        attrs = {"explicit_paddings": list(pads)} if pads else {}
        y = raw.Conv2DBackpropInput(input_sizes=np.array(inp, np.int32),
                                    filter=second_test_input(filt),
                                    out_backprop=first_test_input(grad), strides=window(strides),
                                    dilations=window(dilations), padding=padding, **attrs)
        anchor = "{%s, %s, %s, %s, %s, \"%s\", %s," % (
            brace(inp), brace(filt), brace(grad), brace(strides), brace(dilations), padding,
            brace(pads))
        c.case("Conv2DBackpropInput input %s filter %s strides %s dilations %s %s" %
               (inp, filt, strides, dilations, padding), y, anchor, kind="d")

    y = raw.Conv2D(input=first_test_input((1, 6, 7, 2)), filter=second_test_input((3, 2, 2, 3)),
                   strides=[1, 2, 1, 1], dilations=[1, 2, 2, 1], padding="EXPLICIT",
                   explicit_paddings=[0, 0, 1, 2, 2, 0, 0, 0])
    assert tuple(y.shape) == (1, 3, 7, 3)
    c.case("Conv2D dilated, explicit padding", y,
           "TEST(Conv2DTest, DilatedExplicitPaddingNhwcAndNchwMatchTensorFlow)",
           after="want = {", kind="d")

    for op, ksize, strides, padding, out in POOL3D_CASES:
        y = getattr(raw, op)(input=first_test_input(POOL3D_INPUT), ksize=window(ksize),
                             strides=window(strides), padding=padding)
        assert tuple(y.shape) == out, (y.shape, out)
        c.case("%s ksize %s strides %s %s" % (op, ksize, strides, padding), y,
               "{\"%s\", %s, %s, \"%s\", %s," % (op, brace(ksize), brace(strides), padding,
                                                  brace(out)), kind="d")
    c.finish()


if __name__ == "__main__":
    main()
