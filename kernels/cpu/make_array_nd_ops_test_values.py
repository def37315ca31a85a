#!/usr/bin/env python3
"""Prints TensorFlow's values for array_nd_ops_test.cc's MatchesTensorFlow
tests (GatherNd, ScatterNd with duplicate coordinates, Where), run through
tf.raw_ops on the test's own inputs, as the test's C++ literals.

    /work/tfvenv/bin/python kernels/cpu/make_array_nd_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_array_nd_ops_test_values.py --check

--check reads the literals array_nd_ops_test.cc commits and compares them with
TensorFlow's (exit 1 on a mismatch).
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
    c = Cases(os.path.join(HERE, "array_nd_ops_test.cc"))
    p = np.arange(12, dtype=np.float32).reshape(2, 3, 2)  # the test's Iota
    c.case("GatherNd full coordinates",
           raw.GatherNd(params=p, indices=np.array([[1, 2, 0], [0, 1, 1]], np.int32)),
           "Mat<int32_t>({1, 2, 0, 0, 1, 1}, TensorShape({2, 3}))}", after="Vec<float>(")
    c.case("GatherNd slices",
           raw.GatherNd(params=p, indices=np.array([1, 0, 1, 1], np.int64).reshape(2, 2, 1)),
           "TensorShape({2, 2, 1}))}", after="Mat<float>(")
    c.case("GatherNd int16 rows",
           raw.GatherNd(params=p, indices=np.array([[0, 2], [1, 0]], np.int16)),
           "Mat<int16_t>({0, 2, 1, 0}", after="Mat<float>(")

    c.case("ScatterNd duplicates",
           raw.ScatterNd(indices=np.array([4, 3, 1, 7, 4], np.int32).reshape(5, 1),
                         updates=np.array([9, 10, 11, 12, 13], np.float32),
                         shape=np.array([8], np.int32)),
           "Vec<float>({9, 10, 11, 12, 13}), Vec<int32_t>({8})}", after="Vec<float>(")
    c.case("ScatterNd int32 rows",
           raw.ScatterNd(indices=np.array([0, 2, 0], np.int64).reshape(3, 1),
                         updates=np.arange(12, dtype=np.int32).reshape(3, 4),
                         shape=np.array([3, 4], np.int64)),
           "Vec<int64_t>({3, 4})}", after="Mat<int32_t>(")
    # The test's indices and shape are int16, which TensorFlow's CPU kernel
    # does not take (nor its XLA one, for the shape): the same coordinates in
    # int32.
    c.case("ScatterNd half (indices int32 here, int16 in the test)",
           raw.ScatterNd(indices=np.array([[1, 1], [0, 0]], np.int32),
                         updates=np.array([1.5, -2.0], np.float16),
                         shape=np.array([2, 2], np.int32)),
           "Vec<int16_t>({2, 2})}", after="Mat<half>(")

    cond = np.array([True, False, False, True, False, False, True, True]).reshape(2, 2, 2)
    c.case("Where bool", raw.Where(condition=cond), "Run1(\"Where\", {}, {cond})",
           after="Mat<int64_t>(")
    c.case("Where float (-0 false, NaN true)",
           raw.Where(condition=np.array([0.0, -0.0, np.nan, 1.5, 0.0], np.float32)),
           "Vec<float>({0.f, -0.f, NAN, 1.5f, 0.f})", after="Mat<int64_t>(")
    c.case("Where int32", raw.Where(condition=np.array([0, 7, 0], np.int32)),
           "Vec<int32_t>({0, 7, 0})", after="Mat<int64_t>(")
    c.finish()


if __name__ == "__main__":
    main()
