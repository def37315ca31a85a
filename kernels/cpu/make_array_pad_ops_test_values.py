#!/usr/bin/env python3
"""Prints TensorFlow's values for array_pad_ops_test.cc's MatchesTensorFlow
tests (Pad, PadV2, MirrorPad REFLECT and SYMMETRIC), run through tf.raw_ops
on the test's own inputs, as the test's C++ literals.

    /work/tfvenv/bin/python kernels/cpu/make_array_pad_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_array_pad_ops_test_values.py --check

--check reads the literals array_pad_ops_test.cc commits and compares them
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


def paddings(v, dtype=np.int32):
    return np.array(v, dtype).reshape(-1, 2)


def main():
    c = Cases(os.path.join(HERE, "array_pad_ops_test.cc"))
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    c.case("Pad float", raw.Pad(input=x, paddings=paddings([1, 0, 2, 1])),
           "{x, Paddings({1, 0, 2, 1})}", after="Mat<float>(")
    c.case("PadV2 int32 middle dim",
           raw.PadV2(input=np.arange(8, dtype=np.int32).reshape(2, 2, 2),
                     paddings=paddings([0, 0, 1, 1, 0, 0]), constant_values=np.int32(7)),
           "Tensor::Scalar<int32_t>(7)}", after="Mat<int32_t>(")
    c.case("Pad int64 paddings",
           raw.Pad(input=np.array([5], np.int64), paddings=paddings([2, 1], np.int64)),
           "TensorShape({1, 2}))}", after="Vec<int64_t>(")
    c.case("MirrorPad REFLECT",
           raw.MirrorPad(input=x, paddings=paddings([1, 1, 2, 2]), mode="REFLECT"),
           "{x, Paddings({1, 1, 2, 2})}", after="Mat<float>(")
    c.case("MirrorPad SYMMETRIC",
           raw.MirrorPad(input=x, paddings=paddings([1, 2, 3, 0]), mode="SYMMETRIC"),
           "{x, Paddings({1, 2, 3, 0})}", after="Mat<float>(")
    c.case("MirrorPad REFLECT int64",
           raw.MirrorPad(input=np.arange(24, dtype=np.int64).reshape(2, 3, 4),
                         paddings=paddings([1, 0, 0, 2, 0, 0], np.int64), mode="REFLECT"),
           "Mat<int64_t>({1, 0, 0, 2, 0, 0}, TensorShape({3, 2}))}", after="Mat<int64_t>(")
    c.finish()


if __name__ == "__main__":
    main()
