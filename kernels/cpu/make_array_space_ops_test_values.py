#!/usr/bin/env python3
"""Prints TensorFlow's values for array_space_ops_test.cc's MatchesTensorFlow
tests (Roll, SpaceToBatchND, BatchToSpaceND, DepthToSpace, SpaceToDepth),
run through tf.raw_ops on the test's own inputs, as the test's C++ literals.

    /work/tfvenv/bin/python kernels/cpu/make_array_space_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_array_space_ops_test_values.py --check

TensorFlow's CPU DepthToSpace and SpaceToDepth are NHWC only: the NCHW cases
transpose the input to NHWC, run the op and transpose the result back.
--check reads the literals array_space_ops_test.cc commits and compares them
with TensorFlow's (exit 1 on a mismatch).
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


def range1(n, shape):
    """The test's Range1: 1, 2, ..., n as float."""
    return np.arange(1, n + 1, dtype=np.float32).reshape(shape)


def pairs(v):
    return np.array(v, np.int32).reshape(-1, 2)


def nchw(op, x, **attrs):
    """op in NCHW through NHWC, as TensorFlow's CPU kernels are NHWC only."""
    y = op(input=np.transpose(x, (0, 2, 3, 1)), **attrs)
    return tf.transpose(y, (0, 3, 1, 2))


def main():
    c = Cases(os.path.join(HERE, "array_space_ops_test.cc"))
    c.case("Roll int64 by -7",
           raw.Roll(input=np.arange(5, dtype=np.int64), shift=np.int32(-7), axis=np.int32(0)),
           "Tensor::Scalar<int32_t>(-7)", after="Vec<int64_t>(")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    c.case("Roll two axes",
           raw.Roll(input=x, shift=np.array([1, -1], np.int32), axis=np.array([0, 1], np.int32)),
           "{x, Vec<int32_t>({1, -1}), Vec<int32_t>({0, 1})}", after="Mat<float>(")
    c.case("Roll same axis twice",
           raw.Roll(input=x, shift=np.array([2, 3], np.int64), axis=np.array([1, -1], np.int64)),
           "{x, Vec<int64_t>({2, 3}), Vec<int64_t>({1, -1})}", after="Mat<float>(")

    c.case("SpaceToBatchND 4x4",
           raw.SpaceToBatchND(input=range1(16, (1, 4, 4, 1)), block_shape=np.array([2, 2], np.int32),
                              paddings=pairs([0, 0, 0, 0])),
           "Range1(16, TensorShape({1, 4, 4, 1}))", after="Mat<float>(")
    x = range1(24, (2, 3, 2, 2))
    c.case("SpaceToBatchND padded",
           raw.SpaceToBatchND(input=x, block_shape=np.array([2, 2], np.int64),
                              paddings=pairs([1, 0, 1, 1])),
           "const Tensor want =", after="Mat<float>(")
    c.case("BatchToSpaceND cropped",
           raw.BatchToSpaceND(input=np.arange(16, dtype=np.int32).reshape(4, 2, 2, 1),
                              block_shape=np.array([2, 2], np.int32), crops=pairs([0, 0, 0, 1])),
           "Pairs({0, 0, 0, 1})}", after="Mat<int32_t>(")

    c.case("DepthToSpace NHWC",
           raw.DepthToSpace(input=range1(32, (1, 2, 2, 8)), block_size=2),
           "Run1(\"DepthToSpace\", nhwc,", after="Mat<float>(")
    c.case("SpaceToDepth NHWC",
           raw.SpaceToDepth(input=range1(48, (1, 4, 6, 2)), block_size=2),
           "Run1(\"SpaceToDepth\", nhwc,", after="Mat<float>(")
    c.case("DepthToSpace NCHW",
           nchw(raw.DepthToSpace, range1(32, (1, 8, 2, 2)), block_size=2),
           "Run1(\"DepthToSpace\", nchw,", after="Mat<float>(")
    c.case("SpaceToDepth NCHW",
           nchw(raw.SpaceToDepth, range1(48, (1, 2, 4, 6)), block_size=2),
           "Run1(\"SpaceToDepth\", nchw,", after="Mat<float>(")
    c.finish()


if __name__ == "__main__":
    main()
