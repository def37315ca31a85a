#!/usr/bin/env python3
"""Prints TensorFlow's values for array_scan_ops_test.cc's MatchesTensorFlow
tests (Cumsum and Cumprod in every exclusive/reverse combination, TopKV2
with ties), run through tf.raw_ops on the test's own inputs, as the test's
C++ literals.

    /work/tfvenv/bin/python kernels/cpu/make_array_scan_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_array_scan_ops_test_values.py --check

--check reads the literals array_scan_ops_test.cc commits and compares them
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


def main():
    c = Cases(os.path.join(HERE, "array_scan_ops_test.cc"))
    x = np.array([1, 2, 3, 4, 5, 6, -1, 0.5, 2, -3, 0.25, 4], np.float32).reshape(2, 3, 2)
    for exclusive, reverse in [(False, False), (False, True), (True, False), (True, True)]:
        label = "exclusive=%d reverse=%d" % (exclusive, reverse)
        c.case("Cumsum axis 1 " + label,
               raw.Cumsum(x=x, axis=np.int32(1), exclusive=exclusive, reverse=reverse),
               "const ScanCase cases[] = {", after="{%s, %s, {" % (
                   str(exclusive).lower(), str(reverse).lower()))
        c.case("Cumprod axis -2 " + label,
               raw.Cumprod(x=x, axis=np.int64(-2), exclusive=exclusive, reverse=reverse),
               "{%s, %s, {" % (str(exclusive).lower(), str(reverse).lower()))
    c.case("Cumsum int32 exclusive",
           raw.Cumsum(x=np.array([[1, 2, 3], [4, 5, 6]], np.int32), axis=np.int32(-1),
                      exclusive=True),
           "Mat<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})), Tensor::Scalar<int32_t>(-1)}",
           after="Mat<int32_t>(")
    c.case("Cumprod int64 reverse",
           raw.Cumprod(x=np.array([[1, 2, 3], [4, 5, 6]], np.int64), axis=np.int32(0),
                       reverse=True),
           "Mat<int64_t>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})), Tensor::Scalar<int32_t>(0)}",
           after="Mat<int64_t>(")
    c.case("Cumsum double",
           raw.Cumsum(x=np.array([0.5, 0.25]), axis=np.int32(0)),
           "Vec<double>({0.5, 0.25})", after="Vec<double>(")

    t = np.array([1, 3, 3, 2, 3, 0, 5, -1, 5, 5, 2, 7], np.float32).reshape(2, 6)
    values, indices = raw.TopKV2(input=t, k=np.int32(4))
    c.case("TopKV2 values", values, "// Ties go to the lower index.", after="Mat<float>(")
    c.case("TopKV2 indices", indices, "// Ties go to the lower index.", after="Mat<int32_t>(")
    values, indices = raw.TopKV2(input=np.array([4, 1, 4, 9], np.int64), k=np.int64(4),
                                 index_type=tf.int64)
    c.case("TopKV2 int64 values", values, "Tensor::Scalar<int64_t>(4)}", after="Vec<int64_t>(")
    c.case("TopKV2 int64 indices", indices, "Tensor::Scalar<int64_t>(4)}",
           after="Vec<int64_t>(", skip=1)
    c.finish()


if __name__ == "__main__":
    main()
